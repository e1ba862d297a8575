package bench

import (
	"slices"
	"testing"
)

// TestTheServersEnvironmentNamesTheTrimThreshold: -pg-malloc-trim reaches
// PostgreSQL's environment as glibc reads it, and 0 adds nothing (glibc's
// default); pgcluster's own test shows the environment reaching the
// server.
func TestTheServersEnvironmentNamesTheTrimThreshold(t *testing.T) {
	for _, c := range []struct {
		trim int
		want []string
	}{
		{0, nil},
		{defaultMallocTrim, []string{"MALLOC_TRIM_THRESHOLD_=33554432"}},
		{4096, []string{"MALLOC_TRIM_THRESHOLD_=4096"}},
	} {
		if got := (serverOptions{MallocTrim: c.trim}).serverEnv(); !slices.Equal(got, c.want) {
			t.Errorf("-pg-malloc-trim %d: environment %q, want %q", c.trim, got, c.want)
		}
	}
}
