package eventstoretest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/invoicing/invoicing/events"
)

func appendCases() []testCase {
	return []testCase{
		{"NoStream append to a new stream returns revision 0 and the event's non-zero position", testAppendNew},
		{"NoStream append to an existing stream is a conflict and writes nothing", testAppendExisting},
		{"AtRevision append at the stream's last revision succeeds", testAtRevision},
		{"AtRevision append at a stale or future revision is a conflict and writes nothing", testStaleRevision},
		{"AtRevision append to a missing stream is a conflict", testAtRevisionMissing},
		{"several events in one append get consecutive revisions and are written all or none", testAppendMany},
		{"of 20 concurrent NoStream appends to one stream exactly one wins", testConcurrentNoStream},
		{"a retried identical append is acknowledged where it landed or refused, never written twice", testRetry},
		{"Ping succeeds", testPing},
	}
}

func testAppendNew(f *fixture) {
	s := f.stream("new")
	res := f.mustAppend(s, events.NoStream(), event(s, 0, "first"))
	if res.NextRevision != 0 {
		f.t.Errorf("NextRevision = %d, want 0", res.NextRevision)
	}
	if res.Position.IsZero() {
		f.t.Errorf("Position is zero, want the event's global position")
	}
	got := f.readStream(s)
	if len(got) != 1 {
		f.t.Fatalf("ReadStream returned %d events, want 1", len(got))
	}
	if got[0].Position.Compare(res.Position) != 0 {
		f.t.Errorf("AppendResult.Position = %s, but the event reads back at %s", res.Position, got[0].Position)
	}
}

// testAppendExisting tries both ways a second create can arrive: with the
// id the service derives for revision 0 (a concurrent request with the same
// idempotency key but another body) and with a fresh id. Neither may
// overwrite or add to the stream.
func testAppendExisting(f *fixture) {
	s := f.stream("existing")
	first := event(s, 0, "first")
	f.mustAppend(s, events.NoStream(), first)

	sameID := event(s, 0, "another body")
	_, err := f.store.Append(f.ctx, s, events.NoStream(), sameID)
	f.checkConflict("NoStream append with the first event's id and another body", err)

	_, err = f.store.Append(f.ctx, s, events.NoStream(), event(s, 1, "fresh id"))
	f.checkConflict("NoStream append with a fresh id", err)

	got := f.readStream(s)
	if len(got) != 1 {
		f.t.Fatalf("stream holds %d events after refused appends, want 1", len(got))
	}
	f.checkSame(got[0], first, s, 0)
}

func testAtRevision(f *fixture) {
	s := f.stream("at")
	want := []events.EventData{event(s, 0, "a"), event(s, 1, "b"), event(s, 2, "c"), event(s, 3, "d")}
	f.mustAppend(s, events.NoStream(), want[0])
	if res := f.mustAppend(s, events.AtRevision(0), want[1]); res.NextRevision != 1 {
		f.t.Errorf("append at revision 0: NextRevision = %d, want 1", res.NextRevision)
	}
	if res := f.mustAppend(s, events.AtRevision(1), want[2:]...); res.NextRevision != 3 {
		f.t.Errorf("append of 2 at revision 1: NextRevision = %d, want 3", res.NextRevision)
	}
	got := f.readStream(s)
	if len(got) != len(want) {
		f.t.Fatalf("ReadStream returned %d events, want %d", len(got), len(want))
	}
	for i := range want {
		f.checkSame(got[i], want[i], s, uint64(i))
	}
}

func testStaleRevision(f *fixture) {
	s := f.stream("stale")
	f.appendEach(s, 2)
	_, err := f.store.Append(f.ctx, s, events.AtRevision(0), event(s, 1, "stale"))
	f.checkConflict("append at stale revision 0 of a stream at revision 1", err)
	_, err = f.store.Append(f.ctx, s, events.AtRevision(5), event(s, 6, "future"))
	f.checkConflict("append at future revision 5 of a stream at revision 1", err)
	if got := f.readStream(s); len(got) != 2 {
		f.t.Errorf("stream holds %d events after refused appends, want 2", len(got))
	}
}

func testAtRevisionMissing(f *fixture) {
	s := f.stream("missing")
	_, err := f.store.Append(f.ctx, s, events.AtRevision(0), event(s, 1, "orphan"))
	f.checkConflict("append at revision 0 of a missing stream", err)
	if _, err := f.store.ReadStream(f.ctx, s); !errors.Is(err, events.ErrStreamNotFound) {
		f.t.Errorf("ReadStream after the refused append: err = %v, want events.ErrStreamNotFound", err)
	}
}

func testAppendMany(f *fixture) {
	s := f.stream("many")
	want := []events.EventData{event(s, 0, "one"), event(s, 1, "two"), event(s, 2, "three")}
	res := f.mustAppend(s, events.NoStream(), want...)
	if res.NextRevision != 2 {
		f.t.Errorf("NextRevision = %d, want 2 (the last event's revision)", res.NextRevision)
	}
	got := f.readStream(s)
	if len(got) != 3 {
		f.t.Fatalf("ReadStream returned %d events, want 3", len(got))
	}
	for i := range want {
		f.checkSame(got[i], want[i], s, uint64(i))
		if i > 0 && got[i].Position.Compare(got[i-1].Position) <= 0 {
			f.t.Errorf("revision %d at %s is not after revision %d at %s", i, got[i].Position, i-1, got[i-1].Position)
		}
	}
	if last := got[2].Position; res.Position.Compare(last) != 0 {
		f.t.Errorf("AppendResult.Position = %s, want the last event's position %s", res.Position, last)
	}

	more := []events.EventData{event(s, 1, "stale one"), event(s, 2, "stale two"), event(s, 3, "stale three")}
	_, err := f.store.Append(f.ctx, s, events.AtRevision(0), more...)
	f.checkConflict("append of 3 at a stale revision", err)
	if got := f.readStream(s); len(got) != 3 {
		f.t.Errorf("stream holds %d events after a refused append of 3, want 3 (nothing of it written)", len(got))
	}
}

// testConcurrentNoStream races writers the way concurrent create requests
// with one idempotency key do: the same stream, the same event id (derived
// from stream and revision), different bodies.
func testConcurrentNoStream(f *fixture) {
	s := f.stream("race")
	const writers = 20
	errs := make([]error, writers)
	evs := make([]events.EventData, writers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range writers {
		evs[i] = event(s, 0, fmt.Sprintf("writer %d", i))
		wg.Go(func() {
			<-start
			_, errs[i] = f.store.Append(f.ctx, s, events.NoStream(), evs[i])
		})
	}
	close(start)
	wg.Wait()

	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			f.t.Errorf("writers %d and %d both succeeded", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, events.ErrWrongExpectedRevision):
			f.t.Errorf("writer %d: err = %v, want success or events.ErrWrongExpectedRevision", i, err)
		}
	}
	if winner < 0 {
		f.t.Fatalf("no writer succeeded")
	}
	got := f.readStream(s)
	if len(got) != 1 {
		f.t.Fatalf("stream holds %d events, want 1", len(got))
	}
	f.checkSame(got[0], evs[winner], s, 0)
}

// testRetry re-sends an append whose acknowledgement a caller might have
// lost. Both answers are allowed; a second copy of the event is not, and an
// acknowledgement must say where the event is, since callers wait for
// projections to reach that position.
func testRetry(f *fixture) {
	s := f.stream("retry")
	ev := event(s, 0, "once")
	first := f.mustAppend(s, events.NoStream(), ev)
	res, err := f.store.Append(f.ctx, s, events.NoStream(), ev)
	switch {
	case err == nil:
		if res.NextRevision != 0 || res.Position.Compare(first.Position) != 0 {
			f.t.Errorf("acknowledged retry = revision %d at %s, want revision 0 at %s", res.NextRevision, res.Position, first.Position)
		}
	case errors.Is(err, events.ErrWrongExpectedRevision):
	default:
		f.t.Errorf("retry: err = %v, want success or events.ErrWrongExpectedRevision", err)
	}
	if got := f.readStream(s); len(got) != 1 {
		f.t.Errorf("stream holds %d events after a retried append, want 1", len(got))
	}
}

func testPing(f *fixture) {
	if err := f.store.Ping(f.ctx); err != nil {
		f.t.Errorf("Ping: %v", err)
	}
}
