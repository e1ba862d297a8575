package pgstore

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// DefaultTailWindow is how many of the latest events a Store keeps at
// least for its subscriptions (Options.TailWindow); it keeps up to twice
// as many.
const DefaultTailWindow = PageSize / 2

// tailWindow is the latest events of the log, read once for every
// subscription of the store. A service follows the log with eight
// subscriptions (six projections, the audit sealer, the webhook
// dispatcher); each read a page after every commit that concerned it, so a
// create cost four page reads, each detoasting and sending the same
// payload. One reader (runTail) now reads the log's tail, with every
// payload, into this window; a subscription whose position is inside it
// takes its events from here and waits for the window to move, and one
// behind it (catching up) or ahead of it reads for itself as before.
//
// The window holds every event after start up to end, in log order, with
// no gap: runTail fills it with the same page reads, from the same
// position, that a subscription makes, so what a subscription takes from
// it is what its own reads would have returned.
type tailWindow struct {
	mu       sync.Mutex
	capacity int
	ready    bool // start is known and the reader is not failing
	start    events.Position
	end      events.Position
	evs      []events.RecordedEvent // after start up to end (its last)
	changed  chan struct{}          // closed when the window moves or stops being ready
}

func newTailWindow(capacity int) *tailWindow {
	return &tailWindow{capacity: capacity, changed: make(chan struct{})}
}

// after returns the window's events after pos and a channel closed when
// the window next changes; ok is false when pos is not inside the window
// (or the window is not ready): the subscription then reads for itself.
func (t *tailWindow) after(pos events.Position) (evs []events.RecordedEvent, changed <-chan struct{}, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.ready || pos.Compare(t.start) < 0 || pos.Compare(t.end) > 0 {
		return nil, nil, false
	}
	i, _ := slices.BinarySearchFunc(t.evs, pos, func(ev events.RecordedEvent, p events.Position) int {
		if ev.Position.Compare(p) <= 0 {
			return -1
		}
		return 1
	})
	// Capped: a later push appends past len, never into what is returned.
	return t.evs[i:len(t.evs):len(t.evs)], t.changed, true
}

// begin makes the window start, empty, at pos.
func (t *tailWindow) begin(pos events.Position) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.start, t.end, t.evs, t.ready = pos, pos, nil, true
	t.signal()
}

// push adds a page read after end, dropping the oldest events beyond
// capacity (start moves past them).
func (t *tailWindow) push(page []events.RecordedEvent) {
	if len(page) == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.evs = append(t.evs, page...)
	// Trimmed back to capacity once it holds twice that: a copy every
	// capacity events, not one per page.
	if len(t.evs) > 2*t.capacity {
		drop := len(t.evs) - t.capacity
		t.start = t.evs[drop-1].Position
		t.evs = slices.Clone(t.evs[drop:])
	}
	t.end = t.evs[len(t.evs)-1].Position
	t.signal()
}

// setReady marks whether subscriptions may use the window: not while its
// reader fails (they then read for themselves, and meet the failure
// themselves).
func (t *tailWindow) setReady(ready bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ready != ready {
		t.ready = ready
		t.signal()
	}
}

func (t *tailWindow) signal() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// tailStartSQL is the last event no transaction can still come before:
// every later commit has a later transaction id than this snapshot's
// xmin, so a reader that starts here misses nothing.
const tailStartSQL = `
SELECT tx_id::text, global_position FROM events
WHERE tx_id < pg_snapshot_xmin(pg_current_snapshot())
ORDER BY tx_id DESC, global_position DESC LIMIT 1`

// tailRetry bounds the reader's wait after a failed read.
const tailRetry = time.Second

// startTail starts the tail reader with the first subscription.
func (s *Store) startTail() {
	s.tailOnce.Do(func() {
		s.wg.Add(1)
		go s.runTail(s.stopCtx)
	})
}

// runTail keeps the window at the log's tail, with the same reads and
// waits (awaitRead) as a subscription's, for every type.
func (s *Store) runTail(ctx context.Context) {
	defer s.wg.Done()
	pos, ok := s.tailStart(ctx)
	if !ok {
		return
	}
	s.tail.begin(pos)
	held := heldBackPoll
	for {
		wake := s.wake.Wait(nil)
		page, _, err := s.readPage(ctx, pos, PageSize, nil)
		if err != nil {
			if !s.tailFailed(ctx, err) {
				return
			}
			continue
		}
		s.tail.setReady(true)
		s.tail.push(page)
		if len(page) > 0 {
			pos = page[len(page)-1].Position
		}
		if !s.awaitRead(ctx, wake, nil, pos, len(page), &held) {
			return
		}
	}
}

// tailStart reads where the window starts, retrying until the store
// stops (ok false).
func (s *Store) tailStart(ctx context.Context) (events.Position, bool) {
	for {
		var txID string
		var gp int64
		err := s.pool.QueryRow(ctx, tailStartSQL).Scan(&txID, &gp)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			return events.Position{}, true
		case err == nil:
			pos, perr := position(txID, gp)
			if perr == nil {
				return pos, true
			}
			err = perr
		}
		if !s.tailFailed(ctx, err) {
			return events.Position{}, false
		}
	}
}

// tailFailed takes the window out of use after a failed read, waits, and
// reports whether to try again (false once the store stops).
func (s *Store) tailFailed(ctx context.Context, err error) bool {
	s.tail.setReady(false)
	if ctx.Err() != nil {
		return false
	}
	if s.logger != nil {
		s.logger.Warn("pgstore: reading the log's tail failed; subscriptions read for themselves meanwhile", "error", err)
	}
	select {
	case <-ctx.Done():
		return false
	case <-time.After(tailRetry):
		return true
	}
}
