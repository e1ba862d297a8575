package follow

import "testing"

// The keys are shared with running instances of earlier releases: a key
// that changed would let an old and a new instance lead at once.
func TestLockKeysKeepTheirValues(t *testing.T) {
	for name, want := range map[string]int64{
		"companies":         -1807577613218201655,
		"audit-chain":       -4083450850571762955, // the sealer's
		"rebuild:companies": 1885539065140866756,
	} {
		if got := LockKey(name); got != want {
			t.Errorf("LockKey(%q) = %d, want %d", name, got, want)
		}
	}
}
