package eventstoretest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/invoicing/invoicing/events"
)

func subscribeCases() []testCase {
	return []testCase{
		{"SubscribeAll from zero delivers the history then live events in order and exactly once", testSubscribeFromZero},
		{"SubscribeAll from a position starts right after it", testSubscribeFromMid},
		{"cancelling the context closes Events and leaves Err nil", testSubscribeCancel},
		{"a subscription resumed from the last delivered position continues without gap or duplicate", testSubscribeResume},
		{"200 streams appended from 8 goroutines each appear exactly once in ReadAll and SubscribeAll", testManyStreams},
		{"SubscribeAll with payload types delivers each of their events once with its payload, and reaches the log's last event", testSubscribeWithPayloadTypes},
	}
}

func testSubscribeFromZero(f *fixture) {
	a, b, c := f.stream("a"), f.stream("b"), f.stream("c")
	history := []events.EventData{event(a, 0, "a0"), event(b, 0, "b0"), event(a, 1, "a1")}
	f.mustAppend(a, events.NoStream(), history[0])
	f.mustAppend(b, events.NoStream(), history[1])
	f.mustAppend(a, events.AtRevision(0), history[2])

	w := f.follow(events.Position{})
	f.checkSequence("history", w.nextOwnN(len(history)), history)

	live := []events.EventData{event(b, 1, "b1"), event(c, 0, "c0"), event(c, 1, "c1")}
	f.mustAppend(b, events.AtRevision(0), live[0])
	f.mustAppend(c, events.NoStream(), live[1:]...)
	f.checkSequence("live", w.nextOwnN(len(live)), live)

	if extra := w.untilFence(); len(extra) > 0 {
		f.t.Errorf("after history and live events, %d more were delivered (first %s@%d): duplicates", len(extra), extra[0].Stream, extra[0].Revision)
	}
}

func testSubscribeFromMid(f *fixture) {
	s := f.stream("mid")
	want, res := f.appendEach(s, 5)
	w := f.follow(res[1].Position)
	f.checkSequence("subscription after revision 1", w.untilFence(), want[2:])
}

func testSubscribeCancel(f *fixture) {
	from := f.marker()
	s := f.stream("cancel")
	f.mustAppend(s, events.NoStream(), event(s, 0, "cancel"))
	w := f.follow(from)
	w.nextOwn()
	if err := w.stop(); err != nil {
		f.t.Errorf("after cancelling a subscription that delivered events: Err() = %v, want nil", err)
	}

	// A subscription waiting for live events must end as cleanly.
	idle := f.follow(f.marker())
	if err := idle.stop(); err != nil {
		f.t.Errorf("after cancelling an idle subscription: Err() = %v, want nil", err)
	}
}

func testSubscribeResume(f *fixture) {
	from := f.marker()
	want, _ := f.appendEach(f.stream("resume"), 10)
	w := f.follow(from)
	f.checkSequence("before the drop", w.nextOwnN(4), want[:4])
	resume := w.last
	if err := w.stop(); err != nil {
		f.t.Errorf("dropping the first subscription: Err() = %v, want nil", err)
	}

	again := f.follow(resume)
	f.checkSequence("after resuming", again.nextOwnN(6), want[4:])
	if extra := again.untilFence(); len(extra) > 0 {
		f.t.Errorf("after resuming, %d events beyond the rest were delivered (first %s@%d)", len(extra), extra[0].Stream, extra[0].Revision)
	}
}

func testManyStreams(f *fixture) {
	const streams = 200
	from := f.marker()
	name := func(i int) string { return f.stream(fmt.Sprintf("fan-%03d", i)) }
	f.appendConcurrently(streams, 8, name)

	once := func(how string, evs []events.RecordedEvent) {
		f.t.Helper()
		seen := map[string]int{}
		for _, ev := range evs {
			seen[ev.Stream]++
		}
		for i := range streams {
			if n := seen[name(i)]; n != 1 {
				f.t.Errorf("%s: %s seen %d times, want once", how, name(i), n)
			}
		}
	}
	read := f.ownOnly(f.readAll(from, 50))
	once("ReadAll", read)

	w := f.follow(from)
	got := append(w.nextOwnN(streams), w.untilFence()...)
	once("SubscribeAll", got)
	for i := range min(len(read), len(got)) {
		if read[i].Position.Compare(got[i].Position) != 0 {
			f.t.Errorf("event %d: ReadAll has %s at %s, SubscribeAll %s at %s", i, read[i].Stream, read[i].Position, got[i].Stream, got[i].Position)
			break
		}
	}
}

// testSubscribeWithPayloadTypes: a subscriber of some types gets every
// event of them, once, in order, with its payload. Events of other types
// it may get or not (PostgreSQL leaves most out, EventStoreDB delivers
// them all), in order, once, and without payload or with the right one;
// but it gets past them: its last delivered position reaches the log's
// last event, of another type here, as read-your-writes needs. The log is
// longer than a page of the PostgreSQL adapter.
func testSubscribeWithPayloadTypes(f *fixture) {
	payloadsOf := []string{events.Types[0], events.Types[1]} // a fence, at revision 0, is of Types[0]
	from := f.marker()
	var appended []events.EventData
	for i := range 25 {
		s := f.stream(fmt.Sprintf("typed-%02d", i))
		evs := make([]events.EventData, 100)
		for rev := range evs {
			evs[rev] = event(s, uint64(rev), "typed")
		}
		f.mustAppend(s, events.NoStream(), evs...)
		appended = append(appended, evs...)
	}
	s := f.stream("typed-last")
	last := event(s, 0, "last, of another type")
	last.Type = events.Types[2]
	end := f.mustAppend(s, events.NoStream(), last).Position
	appended = append(appended, last)

	w := f.followTypes(from, payloadsOf...)
	for w.last.Compare(end) < 0 {
		w.next()
	}
	got := append(f.ownOnly(w.all), w.untilFence()...)
	var want []events.EventData
	for _, ev := range appended {
		if slices.Contains(payloadsOf, ev.Type) {
			want = append(want, ev)
		}
	}
	sent := map[[16]byte]events.EventData{}
	for _, ev := range appended {
		sent[ev.ID] = ev
	}
	var typed []events.RecordedEvent
	for _, ev := range got {
		if slices.Contains(payloadsOf, ev.Type) {
			typed = append(typed, ev)
			continue
		}
		if ev.Data != nil && !jsonEqual(ev.Data, sent[ev.ID].Data) || ev.Metadata != nil && !jsonEqual(ev.Metadata, sent[ev.ID].Metadata) {
			f.t.Errorf("%s@%d, not of the payload types, came with data %.200s metadata %s: neither none nor its own", ev.Stream, ev.Revision, ev.Data, ev.Metadata)
		}
	}
	f.checkSequence("events of the payload types", typed, want)
	f.t.Logf("of %d events, %d of the payload types, the subscription delivered %d", len(appended), len(want), len(got))
	for _, ev := range typed {
		if !jsonEqual(ev.Metadata, sent[ev.ID].Metadata) {
			f.t.Errorf("%s@%d: Metadata = %s, want %s", ev.Stream, ev.Revision, ev.Metadata, sent[ev.ID].Metadata)
		}
	}
}

// appendConcurrently creates streams name(0) to name(n-1), one event each,
// from several goroutines at once.
func (f *fixture) appendConcurrently(n, writers int, name func(int) string) {
	next := make(chan int)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for i := range next {
				s := name(i)
				if _, err := f.store.Append(f.ctx, s, events.NoStream(), event(s, 0, "fan")); err != nil {
					errs <- fmt.Errorf("append to %s: %w", s, err)
				}
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
	close(errs)
	for err := range errs {
		f.t.Error(err)
	}
}

// watcher follows one subscription and checks that every event it delivers
// comes strictly after the one before: no duplicate, nothing out of order.
type watcher struct {
	f      *fixture
	sub    events.Subscription
	cancel context.CancelFunc
	from   events.Position
	last   events.Position
	all    []events.RecordedEvent
}

// follow subscribes after from; the subscription ends with the subtest.
func (f *fixture) follow(from events.Position) *watcher {
	f.t.Helper()
	return f.followTypes(from)
}

// followTypes is follow with the payload types payloadsOf.
func (f *fixture) followTypes(from events.Position, payloadsOf ...string) *watcher {
	f.t.Helper()
	ctx, cancel := context.WithCancel(f.ctx)
	f.t.Cleanup(cancel)
	sub, err := f.store.SubscribeAll(ctx, from, payloadsOf...)
	if err != nil {
		f.t.Fatalf("SubscribeAll(%s, %v): %v", from, payloadsOf, err)
	}
	return &watcher{f: f, sub: sub, cancel: cancel, from: from, last: from}
}

// next returns the next delivered event, failing after waitFor.
func (w *watcher) next() events.RecordedEvent {
	w.f.t.Helper()
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	select {
	case ev, ok := <-w.sub.Events():
		if !ok {
			w.f.t.Fatalf("subscription from %s ended after %d events; Err() = %v", w.from, len(w.all), w.sub.Err())
		}
		if ev.Position.Compare(w.last) <= 0 {
			w.f.t.Fatalf("subscription delivered %s@%d at %s after %s: twice or out of order", ev.Stream, ev.Revision, ev.Position, w.last)
		}
		w.last = ev.Position
		w.all = append(w.all, ev)
		return ev
	case <-timer.C:
		w.f.t.Fatalf("subscription from %s delivered nothing within %v (after %d events, the last at %s)", w.from, waitFor, len(w.all), w.last)
	}
	return events.RecordedEvent{}
}

// nextOwn skips other writers' events.
func (w *watcher) nextOwn() events.RecordedEvent {
	w.f.t.Helper()
	for {
		if ev := w.next(); w.f.own(ev) {
			return ev
		}
	}
}

func (w *watcher) nextOwnN(n int) []events.RecordedEvent {
	w.f.t.Helper()
	out := make([]events.RecordedEvent, 0, n)
	for range n {
		out = append(out, w.nextOwn())
	}
	return out
}

// untilFence appends a fence event and returns this subtest's events
// delivered before it. Stores deliver in global order, so anything delivered
// twice, or late, shows up before the fence; no sleeping needed.
func (w *watcher) untilFence() []events.RecordedEvent {
	w.f.t.Helper()
	s := w.f.stream(fencePrefix + randomHex(4))
	w.f.mustAppend(s, events.NoStream(), event(s, 0, "fence"))
	var own []events.RecordedEvent
	for {
		ev := w.next()
		if ev.Stream == s {
			return own
		}
		if w.f.own(ev) {
			own = append(own, ev)
		}
	}
}

// stop cancels the subscription's context, drains Events until it closes,
// and returns Err.
func (w *watcher) stop() error {
	w.f.t.Helper()
	w.cancel()
	timer := time.NewTimer(waitFor)
	defer timer.Stop()
	for {
		select {
		case _, ok := <-w.sub.Events():
			if !ok {
				return w.sub.Err()
			}
		case <-timer.C:
			w.f.t.Fatalf("Events() still open %v after the context was cancelled", waitFor)
			return nil
		}
	}
}
