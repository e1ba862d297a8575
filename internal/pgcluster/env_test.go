package pgcluster

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"testing"
)

// TestStartWithGivesTheServerItsEnvironment: Options.Env reaches the
// postmaster, after a restart too (its backends are forks of it), and does
// not replace the environment the server needs (LC_ALL=C). A backend's own
// /proc/PID/environ cannot tell: PostgreSQL writes its process title over
// that memory.
func TestStartWithGivesTheServerItsEnvironment(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc/PID/environ")
	}
	const tunable = "MALLOC_TRIM_THRESHOLD_=33554432"
	c, err := StartWith(Options{Env: []string{tunable}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	check := func(when string) {
		t.Helper()
		env := environ(t, c.PID())
		for _, want := range []string{tunable, "LC_ALL=C"} {
			if !slices.Contains(env, want) {
				t.Errorf("%s, the postmaster's environment has no %s", when, want)
			}
		}
	}
	check("after Start")
	if err := c.StopImmediate(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Restart(); err != nil {
		t.Fatal(err)
	}
	check("after Restart")
}

func environ(t *testing.T, pid int) []string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
	if err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range bytes.Split(bytes.TrimRight(b, "\x00"), []byte{0}) {
		env = append(env, string(kv))
	}
	return env
}
