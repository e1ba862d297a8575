package eventstoretest

import (
	"errors"
	"fmt"
	"sync"

	"github.com/invoicing/invoicing/events"
)

// numberingWriters is how many writers race for one stream's next revision,
// as concurrent invoice issues race for a company's next number.
const numberingWriters = 64

func numberingCases() []testCase {
	return []testCase{
		{"64 writers appending at the expected revision, retrying on conflict, take revisions 0..63 once each (a numbering stream)", testContendedRevisions},
	}
}

// testContendedRevisions is the property gapless invoice numbers rest on:
// each writer reads the stream's last revision and appends after it; a
// loser's append fails with ErrWrongExpectedRevision and it tries again.
// Every writer must end up owning exactly one revision, and the stream must
// hold revisions 0..63 with no gap and no revision written twice.
func testContendedRevisions(f *fixture) {
	s := f.stream("numbering")
	won := make([]uint64, numberingWriters)
	var wg sync.WaitGroup
	errs := make(chan error, numberingWriters)
	for w := range numberingWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rev, err := f.appendNext(s, fmt.Sprint("writer ", w))
			won[w] = rev
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			f.t.Fatal(err)
		}
	}
	f.checkEachWriterOwnsItsRevision(s, won)
}

// appendNext appends one event after the stream's current end, retrying
// until it wins a revision, and returns that revision.
func (f *fixture) appendNext(stream, note string) (uint64, error) {
	for attempt := 0; attempt < 10*numberingWriters; attempt++ {
		expected, next := events.NoStream(), uint64(0)
		last, err := f.store.ReadLast(f.ctx, stream)
		switch {
		case err == nil:
			expected, next = events.AtRevision(last.Revision), last.Revision+1
		case !errors.Is(err, events.ErrStreamNotFound):
			return 0, fmt.Errorf("%s: ReadLast: %w", note, err)
		}
		res, err := f.store.Append(f.ctx, stream, expected, event(stream, next, note))
		if errors.Is(err, events.ErrWrongExpectedRevision) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("%s: append at %d: %w", note, next, err)
		}
		if res.NextRevision != next {
			return 0, fmt.Errorf("%s: appended at revision %d, expected %d", note, res.NextRevision, next)
		}
		return next, nil
	}
	return 0, fmt.Errorf("%s: no revision won in %d attempts", note, 10*numberingWriters)
}

func (f *fixture) checkEachWriterOwnsItsRevision(stream string, won []uint64) {
	got := f.readStream(stream)
	if len(got) != numberingWriters {
		f.t.Fatalf("the stream holds %d events, want %d", len(got), numberingWriters)
	}
	for w, rev := range won {
		ev := got[rev]
		if ev.Revision != rev {
			f.t.Fatalf("event %d has revision %d", rev, ev.Revision)
		}
		if want := event(stream, rev, fmt.Sprint("writer ", w)); !jsonEqual(ev.Data, want.Data) {
			f.t.Errorf("writer %d was told it won revision %d, which holds %s", w, rev, ev.Data)
		}
	}
}
