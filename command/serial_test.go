package command

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestAKeyIsHeldByOneRequestAtATime: sixteen goroutines on two keys never
// hold one key twice at once, and do hold the two keys at the same time;
// a wait that its context ends is an error and leaves the key to the
// others; no key is left behind once every holder has gone.
func TestAKeyIsHeldByOneRequestAtATime(t *testing.T) {
	l := newKeyedLocks()
	var holders [2]atomic.Int32
	var overlap, both atomic.Bool
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := i % 2
			release, err := l.lock(t.Context(), []string{"numbering-a", "numbering-b"}[key])
			if err != nil {
				t.Error(err)
				return
			}
			if holders[key].Add(1) > 1 {
				overlap.Store(true)
			}
			if holders[1-key].Load() > 0 {
				both.Store(true)
			}
			time.Sleep(2 * time.Millisecond)
			holders[key].Add(-1)
			release()
		}()
	}
	wg.Wait()
	if overlap.Load() {
		t.Error("two requests held one key at once")
	}
	if !both.Load() {
		t.Error("the two keys were never held at the same time: one key held back the other")
	}

	release, err := l.lock(t.Context(), "numbering-a")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := l.lock(ctx, "numbering-a"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a wait past its deadline: %v, want context.DeadlineExceeded", err)
	}
	release()
	again, err := l.lock(t.Context(), "numbering-a")
	if err != nil {
		t.Fatalf("the key after a given-up wait: %v", err)
	}
	again()
	if n := len(l.held); n != 0 {
		t.Errorf("%d keys left behind after every holder left", n)
	}
}
