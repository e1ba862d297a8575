package esdb

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// attempt scripts one server-side subscription of a fakeSource.
type attempt struct {
	err   error     // subscribe fails with it
	msgs  []message // else these are sent,
	stall bool      // then the feed stays open and silent (else it closes)
}

// fakeSource plays its attempts in turn, repeating the last one, and records
// where each subscription started and whether its context ended.
type fakeSource struct {
	mu       sync.Mutex
	attempts []attempt
	afters   []events.Position
	ended    int
}

func (f *fakeSource) subscribe(ctx context.Context, after events.Position) (<-chan message, error) {
	f.mu.Lock()
	a := f.attempts[min(len(f.afters), len(f.attempts)-1)]
	f.afters = append(f.afters, after)
	f.mu.Unlock()
	if a.err != nil {
		return nil, a.err
	}
	feed := make(chan message)
	go func() {
		defer close(feed)
		for _, m := range a.msgs {
			select {
			case feed <- m:
			case <-ctx.Done():
				f.end()
				return
			}
		}
		if a.stall {
			<-ctx.Done()
			f.end()
		}
	}()
	return feed, nil
}

func (f *fakeSource) end() {
	f.mu.Lock()
	f.ended++
	f.mu.Unlock()
}

func (f *fakeSource) starts() []events.Position {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.afters)
}

func ev(n uint64) message {
	return message{kind: msgEvent, event: events.RecordedEvent{Stream: "s", Revision: n, Position: events.NewPosition(n, n)}}
}

func dropped(err error) message { return message{kind: msgDropped, err: err} }

var errPermanent = errors.New("permission denied")

// testFollower has fast waits and records the backoff it would sleep.
func testFollower(src source) (*follower, *[]time.Duration) {
	f := newFollower(src, slog.New(slog.DiscardHandler), func(err error) bool { return errors.Is(err, errPermanent) })
	var mu sync.Mutex
	var slept []time.Duration
	f.sleep = func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		slept = append(slept, d)
		mu.Unlock()
		return ctx.Err() == nil
	}
	return f, &slept
}

// receive reads n events, failing after a few seconds.
func receive(t *testing.T, sub *subscription, n int) []uint64 {
	t.Helper()
	var got []uint64
	for len(got) < n {
		select {
		case e, ok := <-sub.Events():
			if !ok {
				t.Fatalf("Events closed after %v; Err() = %v", got, sub.Err())
			}
			got = append(got, e.Revision)
		case <-time.After(5 * time.Second):
			t.Fatalf("only %v delivered within 5s", got)
		}
	}
	return got
}

// closed waits for Events to close and returns Err.
func closed(t *testing.T, sub *subscription) error {
	t.Helper()
	for {
		select {
		case _, ok := <-sub.Events():
			if !ok {
				return sub.Err()
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Events still open after 5s")
		}
	}
}

func TestFollowerResumesAfterADropWithoutDuplicatesOrGaps(t *testing.T) {
	src := &fakeSource{attempts: []attempt{
		{msgs: []message{ev(1), ev(2), ev(3), dropped(errors.New("connection reset"))}},
		// The new subscription repeats what came before the drop.
		{msgs: []message{ev(2), ev(3), {kind: msgAlive}, ev(4), ev(5)}, stall: true},
	}}
	f, _ := testFollower(src)
	sub, err := f.start(t.Context(), events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	if got := receive(t, sub, 5); !slices.Equal(got, []uint64{1, 2, 3, 4, 5}) {
		t.Errorf("delivered %v, want [1 2 3 4 5]", got)
	}
	if starts := src.starts(); len(starts) != 2 || starts[1] != events.NewPosition(3, 3) {
		t.Errorf("subscriptions started after %v, want [0/0 3/3]", starts)
	}
}

func TestFollowerStartsAfterTheGivenPosition(t *testing.T) {
	src := &fakeSource{attempts: []attempt{{msgs: []message{ev(4), ev(5), ev(6)}, stall: true}}}
	f, _ := testFollower(src)
	sub, err := f.start(t.Context(), events.NewPosition(5, 5))
	if err != nil {
		t.Fatal(err)
	}
	if got := receive(t, sub, 1); got[0] != 6 {
		t.Errorf("first event %d, want 6: a source that includes its start must not leak it", got[0])
	}
}

func TestFollowerBackoffDoublesToItsCapAndResets(t *testing.T) {
	unavailable := errors.New("unavailable")
	script := []attempt{{msgs: []message{dropped(unavailable)}}}
	for range 8 {
		script = append(script, attempt{err: unavailable})
	}
	script = append(script,
		attempt{msgs: []message{ev(1), dropped(unavailable)}},
		attempt{msgs: []message{ev(2)}, stall: true})
	src := &fakeSource{attempts: script}
	f, slept := testFollower(src)
	sub, err := f.start(t.Context(), events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	receive(t, sub, 2)
	ms := time.Millisecond
	want := []time.Duration{100 * ms, 200 * ms, 400 * ms, 800 * ms, 1600 * ms, 3200 * ms, 5000 * ms, 5000 * ms, 5000 * ms,
		100 * ms} // reset: the previous subscription delivered
	if !slices.Equal(*slept, want) {
		t.Errorf("waited %v, want %v", *slept, want)
	}
}

func TestFollowerWatchdogResubscribesASilentFeed(t *testing.T) {
	src := &fakeSource{attempts: []attempt{
		{msgs: []message{ev(1)}, stall: true}, // then silence
		{msgs: []message{ev(1), ev(2)}, stall: true},
	}}
	f, _ := testFollower(src)
	f.idle = 50 * time.Millisecond
	sub, err := f.start(t.Context(), events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	if got := receive(t, sub, 2); !slices.Equal(got, []uint64{1, 2}) {
		t.Errorf("delivered %v, want [1 2]", got)
	}
}

func TestCancellingEndsTheSubscriptionCleanly(t *testing.T) {
	src := &fakeSource{attempts: []attempt{{msgs: []message{ev(1)}, stall: true}}}
	f, _ := testFollower(src)
	ctx, cancel := context.WithCancel(t.Context())
	sub, err := f.start(ctx, events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	receive(t, sub, 1)
	cancel()
	if err := closed(t, sub); err != nil {
		t.Errorf("Err() = %v, want nil after cancelling", err)
	}
	// The server-side subscription ends with it.
	deadline := time.Now().Add(5 * time.Second)
	for src.endedCount() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if src.endedCount() == 0 {
		t.Errorf("the source's subscription context was not cancelled")
	}
}

func (f *fakeSource) endedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.ended
}

func TestClosingTheStoreEndsTheSubscriptionWithAnError(t *testing.T) {
	src := &fakeSource{attempts: []attempt{{stall: true}}}
	f, _ := testFollower(src)
	ctx, cancel := context.WithCancelCause(t.Context())
	sub, err := f.start(ctx, events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	cancel(errClosed)
	if err := closed(t, sub); !errors.Is(err, errClosed) {
		t.Errorf("Err() = %v, want errClosed", err)
	}
}

func TestPermanentFailuresEndTheSubscription(t *testing.T) {
	src := &fakeSource{attempts: []attempt{
		{msgs: []message{ev(1), dropped(errors.New("reset"))}},
		{err: errPermanent},
	}}
	f, _ := testFollower(src)
	sub, err := f.start(t.Context(), events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	if err := closed(t, sub); !errors.Is(err, errPermanent) {
		t.Errorf("Err() = %v, want the permanent failure", err)
	}
}

func TestAFirstSubscribeFailureIsReturned(t *testing.T) {
	f, _ := testFollower(&fakeSource{attempts: []attempt{{err: errPermanent}}})
	if _, err := f.start(t.Context(), events.Position{}); !errors.Is(err, errPermanent) {
		t.Errorf("start: err = %v, want the source's error", err)
	}
}
