package webhook

import (
	"testing"
	"time"
)

// Retry n waits up to min(max, min·2^(n-1)), never nothing.
func TestBackoffGrowsToItsCapWithJitter(t *testing.T) {
	s := &Sender{opts: SenderOptions{BackoffMin: 5 * time.Second, BackoffMax: time.Hour}}
	for _, tc := range []struct {
		n       int
		ceiling time.Duration
	}{{1, 5 * time.Second}, {2, 10 * time.Second}, {5, 80 * time.Second}, {10, time.Hour}, {40, time.Hour}} {
		var longest time.Duration
		for i := 0; i < 2000; i++ {
			d := s.backoff(tc.n)
			if d <= 0 || d > tc.ceiling {
				t.Fatalf("retry %d waits %s, want (0, %s]", tc.n, d, tc.ceiling)
			}
			longest = max(longest, d)
		}
		if longest < tc.ceiling/2 {
			t.Errorf("retry %d: the longest of 2,000 waits is %s, want jitter across (0, %s]", tc.n, longest, tc.ceiling)
		}
	}
}
