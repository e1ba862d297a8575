package pgcluster

import "testing"

func TestVersionLess_ordersNumerically(t *testing.T) {
	if !versionLess("/usr/lib/postgresql/9.6/bin", "/usr/lib/postgresql/15/bin") {
		t.Error("9.6 should sort below 15")
	}
	if versionLess("/usr/lib/postgresql/16/bin", "/usr/lib/postgresql/15/bin") {
		t.Error("16 should not sort below 15")
	}
}
