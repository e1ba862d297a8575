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

// PageSize is how many events a subscription reads per query while catching
// up. A projection runner's batch takes at most what one page delivered, so
// it is projections.DefaultBatchSize (a test there keeps them so).
const PageSize = 2000

// heldBackPoll is how soon a subscription reads again when committed events
// are hidden behind an older open transaction.
const heldBackPoll = 5 * time.Millisecond

type subscription struct {
	ch         chan events.RecordedEvent
	payloadsOf []string // nil: every payload
	// payloadList is payloadsOf as a typeList, nil for every payload.
	payloadList *string
	// dense tells whether the subscription's last full page kept most of
	// the events it scanned: it then reads the store's shared pages (see
	// readPage). Every subscription starts dense, so that subscriptions
	// catching up from one place start in one convoy: a filtered one that
	// started in the sparse convoy was no reader of the dense one yet,
	// whose faster readers ran past pages it then read alone (four
	// subscriptions over 15 full pages read 51-53 pages instead of 40 in
	// some runs, 37 now). Its first page tells (told); a short one, as
	// before, sends a filtered subscription to the sparse convoy.
	dense, told bool
	mu          sync.Mutex
	err         error
	done        chan struct{}
}

func (s *subscription) Events() <-chan events.RecordedEvent { return s.ch }

func (s *subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// SubscribeAll implements events.Store: it reads pages from its position and,
// once caught up, waits for a local commit, a notification from another
// process, or the poll interval. With payloadsOf, its pages leave out the
// events of other types but the last of each page (readSkippingSQL). A
// subscription whose position is inside the store's tail window (tail.go)
// takes its events from there instead, every one, and waits for the window
// to move.
func (s *Store) SubscribeAll(ctx context.Context, from events.Position, payloadsOf ...string) (events.Subscription, error) {
	if everyPayload(payloadsOf) {
		payloadsOf = nil // nothing to skip
	}
	s.startListener()
	if s.tail != nil {
		s.startTail()
	}
	sub := newSubscription(payloadsOf)
	go sub.run(ctx, s, from)
	return sub, nil
}

// newSubscription is a subscription to the payloads of payloadsOf (nil:
// every payload) that has read nothing yet: dense, as every one starts.
func newSubscription(payloadsOf []string) *subscription {
	return &subscription{ch: make(chan events.RecordedEvent, PageSize), done: make(chan struct{}),
		payloadsOf: payloadsOf, payloadList: typeListOf(payloadsOf), dense: true}
}

// everyPayload reports whether a reader of payloadsOf takes every
// payload: it names no type, or every one of this service's.
func everyPayload(payloadsOf []string) bool {
	for _, t := range events.Types {
		if len(payloadsOf) > 0 && !slices.Contains(payloadsOf, t) {
			return false
		}
	}
	return true
}

func (sub *subscription) run(ctx context.Context, s *Store, pos events.Position) {
	defer close(sub.ch)
	defer s.shared.leave(sub)
	defer s.sparse.leave(sub)
	held := heldBackPoll
	for {
		if next, ok, ended := sub.fromTail(ctx, s, pos); ended {
			return
		} else if ok {
			pos = next
			continue
		}
		wake := s.wake.Wait(sub.payloadsOf) // taken before reading, so no commit is missed
		page, scanned, err := sub.readPage(ctx, s, pos)
		if err != nil {
			sub.fail(ctx, err)
			return
		}
		for _, ev := range page {
			select {
			case sub.ch <- ev:
				pos = ev.Position
			case <-ctx.Done():
				return
			}
		}
		if !s.awaitRead(ctx, wake, sub.payloadList, pos, scanned, &held) {
			return
		}
	}
}

// readPage reads the subscription's next page after pos, and how many
// events it scanned. A subscription that keeps most of what it scans
// takes the store's shared full page (sharedPages); one that keeps few
// takes the store's shared sparse page, read skipping the payloads of
// types no such subscription takes. Either leaves out the events of other
// types itself, as readSkippingSQL would. Which of the two it is, it
// learns from its last full page.
func (sub *subscription) readPage(ctx context.Context, s *Store, pos events.Position) ([]events.RecordedEvent, int, error) {
	convoy := s.shared
	if !sub.dense {
		convoy = s.sparse
	}
	page, scanned, err := convoy.read(ctx, sub, pos, func(types []string) ([]events.RecordedEvent, int, error) {
		return s.readPage(ctx, pos, PageSize, typeListOf(types))
	})
	if err != nil || sub.payloadsOf == nil {
		return page, scanned, err
	}
	kept := sub.skip(page)
	sub.learn(s, len(kept), scanned)
	return kept, scanned, nil
}

// learn sets dense from a page that kept kept of the scanned events; only
// a full page tells, or the first page (dense). A subscription that
// changes leaves the convoy of the shared pages it took until then.
func (sub *subscription) learn(s *Store, kept, scanned int) {
	full := scanned == PageSize
	if sub.payloadsOf == nil || (!full && sub.told) {
		return
	}
	sub.told = true
	if dense := full && 2*kept > scanned; dense != sub.dense {
		sub.dense = dense
		if dense {
			s.sparse.leave(sub)
		} else {
			s.shared.leave(sub)
		}
	}
}

// skip is what readSkippingSQL returns of page: its events of the
// subscription's types, and its last event, without its payload unless it
// is of those types. page is shared: its events are copied, not changed.
// It may hold the payloads of more types (a full page, or a sparse page
// read for other subscriptions too), never fewer (sharedPages.read).
func (sub *subscription) skip(page []events.RecordedEvent) []events.RecordedEvent {
	kept := make([]events.RecordedEvent, 0, len(page))
	for i, ev := range page {
		if sub.wants(ev.Type) {
			kept = append(kept, ev)
		} else if i == len(page)-1 {
			ev.Data, ev.Metadata = nil, nil
			kept = append(kept, ev)
		}
	}
	return kept
}

// wants tells whether the subscription takes the payloads of eventType.
func (sub *subscription) wants(eventType string) bool {
	return sub.payloadsOf == nil || slices.Contains(sub.payloadsOf, eventType)
}

// awaitRead waits, after a page that scanned n events and ended at pos,
// until the next page read is due: at once after a full page (n counts
// the rows a filtered page skipped too: it is full though it delivered
// few), else at a wake-up, or after nextRead's wait. held is the
// reader's held-back backoff. It is false when ctx or the store ended
// meanwhile. Subscriptions and the tail window's reader (runTail) follow
// the log with it alike.
func (s *Store) awaitRead(ctx context.Context, wake <-chan struct{}, types *string, pos events.Position, n int, held *time.Duration) bool {
	if n == PageSize {
		return true
	}
	wait, hidden := s.nextRead(ctx, types, pos, n > 0, held)
	select {
	case <-ctx.Done():
		return false
	case <-s.stopped():
		return false
	case <-wake:
	case <-time.After(wait):
		if hidden {
			// Still held back after a whole wait: a long transaction.
			*held = min(*held*2, s.poll)
		}
	}
	return true
}

// nextRead tells how long a subscription may wait for a wake-up before it
// reads again, and whether events are pending. Committed events hidden
// behind an older open transaction show up as soon as it ends, which no
// notification announces (it may be any transaction of the cluster: a
// projection's batch, the sealer's), and it may have ended since the page
// was read: then poll soon, backing off (held) only
// while the same hold outlasts whole waits, in case it is a long one. A
// wake-up does not back off: under load every append wakes the subscriber
// while some batch holds the horizon, and backing off per wake-up had grown
// the wait to the full poll interval within a dozen appends, so the last
// events of a burst waited up to a second. After a page with events it
// polls soon without asking: under load, when something is nearly always
// held back and a wake-up nearly always comes first, the question would
// cost a query per page; once idle, an empty page asks.
func (s *Store) nextRead(ctx context.Context, types *string, pos events.Position, gotEvents bool, held *time.Duration) (time.Duration, bool) {
	if gotEvents {
		*held = heldBackPoll
		return heldBackPoll, false
	}
	if s.beforePendingCheck != nil {
		s.beforePendingCheck()
	}
	if hidden, err := s.eventsPending(ctx, types, pos); err == nil && hidden {
		return *held, true
	}
	return s.poll, false
}

// fromTail delivers the tail window's events after pos, or waits for the
// window to move when it has none, and returns the new position; ok is
// false when pos is not inside the window (the subscription then reads
// for itself); ended when the subscription or the store ended meanwhile.
func (sub *subscription) fromTail(ctx context.Context, s *Store, pos events.Position) (next events.Position, ok, ended bool) {
	if s.tail == nil {
		return pos, false, false
	}
	evs, changed, ok := s.tail.after(pos)
	if !ok {
		return pos, false, false
	}
	for _, ev := range evs {
		if !sub.wants(ev.Type) {
			ev.Data, ev.Metadata = nil, nil
		}
		select {
		case sub.ch <- ev:
			pos = ev.Position
		case <-ctx.Done():
			return pos, true, true
		}
	}
	if len(evs) > 0 {
		return pos, true, false
	}
	select {
	case <-ctx.Done():
		return pos, true, true
	case <-s.stopped():
		return pos, true, true
	case <-changed:
		return pos, true, false
	}
}

func (sub *subscription) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	sub.mu.Lock()
	sub.err = err
	sub.mu.Unlock()
}

// eventsPending reports whether events of types (a typeList; nil: any
// known type) after pos are committed that the last page did not hold (see
// pendingSQL).
func (s *Store) eventsPending(ctx context.Context, types *string, pos events.Position) (bool, error) {
	if types == nil {
		types = &s.knownTypes // readers leave out types this service does not know
	}
	var newest string
	txID, gp := positionArgs(pos)
	err := s.pool.QueryRow(ctx, pendingSQL, *types, txID, gp).Scan(&newest)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

// stopped is closed when the store is closed.
func (s *Store) stopped() <-chan struct{} {
	return s.stopCtx.Done()
}
