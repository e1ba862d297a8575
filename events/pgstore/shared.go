package pgstore

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/invoicing/invoicing/events"
)

// sharedPageCount is how many full pages a Store keeps for subscriptions
// catching up, each up to PageSize events (about 5 MB of invoices). Every
// page kept is live heap, and a catch-up runs at the service's memory
// limit, where the collector runs as often as the heap's headroom makes it:
// with four pages, a 300,000-invoice catch-up held 64 MB live on average
// and collected 760 times; with two, 50 MB and 430 times, and the service
// spent half the core-seconds on it. The convoy holds together with two
// as it did with four (TestCatchingUpSubscriptionsShareFullPages).
const sharedPageCount = 2

// DefaultConvoyPatience is how long a subscription that would read a new
// page waits, at most, for a slower one to take the oldest page kept (see
// sharedPages).
const DefaultConvoyPatience = 2 * time.Second

// sharedPages are full pages of the log, read with every payload, that
// the catching-up subscriptions reading most payloads take instead of
// reading their own. Behind the tail window, a service's projections of
// invoices and of public events and its webhook dispatcher each read
// every page with its payloads: 40% of PostgreSQL's time in a catch-up of
// 300,000 invoices went to those page reads, three copies of each.
//
// A full page holds the same events whenever it is read: its rows are the
// first PageSize after its start whose transactions were below the
// horizon, so every transaction that wrote them had ended, and a row
// committed later belongs to a transaction above the horizon, which sorts
// after every row of the page (order.go). So a page read by one
// subscription is what another's read of the same position would return.
// A short page is not kept: the log may have grown since.
//
// The subscriptions move as a convoy. Their projections write at
// different speeds (the dispatcher's batches cost little, the invoices'
// much), and with a few pages kept, the fastest soon ran past the others
// and each read its own pages again. So a subscription that would read a
// new page while every kept page is full waits until the oldest is taken
// by the subscriptions whose next page it is. It waits patience at most:
// one that does not take its page in that time (its projection is stuck,
// or restarting) is no longer waited for until it takes a page again, so
// a stuck projection costs the others one wait, not their progress.
//
// The subscriptions that keep few of the events they scan share pages too,
// in a convoy of their own (sparse): each page is read, skipping payloads
// in the database (readSkippingSQL), for the types of every subscription
// in that convoy when it was claimed, and a subscription takes it only if
// those types include its own. Behind the tail window, the projections of
// companies, customers, credit notes and webhook endpoints each scanned
// every page for the few events they keep: 9.4 s of PostgreSQL's time in
// a catch-up of 300,000 invoices.
type sharedPages struct {
	// sparse tells the convoy of subscriptions that skip payloads from
	// that of those reading every payload.
	sparse   bool
	patience time.Duration
	mu       sync.Mutex
	pages    map[events.Position]*sharedPage
	order    []events.Position // keys of pages, oldest first
	// readers holds, for each subscription in the convoy, the position of
	// the page it asks for next.
	readers map[*subscription]events.Position
	moved   chan struct{} // closed and replaced when a reader moves or leaves
}

// sharedPage is one page read, or being read, for every subscription.
type sharedPage struct {
	ready chan struct{} // closed once evs, scanned and err are set
	// types are the types whose payloads the page holds, nil for every
	// type; set when the page is claimed.
	types   []string
	evs     []events.RecordedEvent
	scanned int // rows the read scanned: evs and those it skipped
	err     error
}

// pageRead reads the page after a position with the payloads of types
// (nil: every type): its events and how many rows it scanned.
type pageRead func(types []string) ([]events.RecordedEvent, int, error)

func newSharedPages(sparse bool, patience time.Duration) *sharedPages {
	return &sharedPages{sparse: sparse, patience: patience, pages: map[events.Position]*sharedPage{},
		readers: map[*subscription]events.Position{}, moved: make(chan struct{})}
}

// read returns the full page after from for sub, read once by read for
// every subscription, or what read returns for sub alone when the page is
// short, holds the payloads of fewer types than sub's, or the shared read
// failed; and how many rows the page scanned. The events returned are
// shared: their callers must not change them.
func (p *sharedPages) read(ctx context.Context, sub *subscription, from events.Position, read pageRead) ([]events.RecordedEvent, int, error) {
	page, reading, err := p.claim(ctx, sub, from)
	if err != nil {
		return nil, 0, err
	}
	if reading {
		page.evs, page.scanned, page.err = read(page.types)
		close(page.ready)
		if page.err != nil || page.scanned < PageSize {
			p.forget(from, page)
			return page.evs, page.scanned, page.err
		}
	} else {
		select {
		case <-page.ready:
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		}
		if page.err != nil || page.scanned < PageSize || !covers(page.types, sub.payloadsOf) {
			return read(sub.payloadsOf)
		}
	}
	p.move(sub, page.evs[len(page.evs)-1].Position)
	return page.evs, page.scanned, nil
}

// covers reports whether a page with the payloads of types holds those of
// want (nil: every type).
func covers(types, want []string) bool {
	if types == nil {
		return true
	}
	return want != nil && !slices.ContainsFunc(want, func(t string) bool { return !slices.Contains(types, t) })
}

// readersTypes are the types of every reader's payloads, for a sparse
// page; nil (every type) for the other convoy, or when a reader takes
// every payload.
func (p *sharedPages) readersTypes() []string {
	if !p.sparse {
		return nil
	}
	var types []string
	for r := range p.readers {
		if r.payloadsOf == nil {
			return nil
		}
		for _, t := range r.payloadsOf {
			if !slices.Contains(types, t) {
				types = append(types, t)
			}
		}
	}
	slices.Sort(types) // the same set, the same list
	return types
}

// claim returns the page after from, and whether sub is to read it: it
// was neither kept nor being read. A new page waits for room (see
// sharedPages); one older than every page kept is read but not kept.
func (p *sharedPages) claim(ctx context.Context, sub *subscription, from events.Position) (*sharedPage, bool, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readers[sub] = from
	p.changed()
	var timer *time.Timer
	for patient := true; ; {
		if page, ok := p.pages[from]; ok {
			return page, false, nil
		}
		waitedOn := p.waitedOn(sub, from)
		if len(waitedOn) == 0 {
			break
		}
		if !patient {
			for _, r := range waitedOn { // stuck or restarting: waited for no more
				delete(p.readers, r)
			}
			break
		}
		if timer == nil {
			timer = time.NewTimer(p.patience)
			defer timer.Stop()
		}
		moved := p.moved
		p.mu.Unlock()
		select {
		case <-moved:
		case <-timer.C:
			patient = false
		case <-ctx.Done():
			p.mu.Lock()
			return nil, false, ctx.Err()
		}
		p.mu.Lock()
	}
	page := &sharedPage{ready: make(chan struct{}), types: p.readersTypes()}
	p.keep(from, page)
	return page, true, nil
}

// keep adds page at from, in position order, dropping the oldest page
// beyond sharedPageCount (page itself when it is the oldest).
func (p *sharedPages) keep(from events.Position, page *sharedPage) {
	i, _ := slices.BinarySearchFunc(p.order, from, events.Position.Compare)
	p.order = slices.Insert(p.order, i, from)
	p.pages[from] = page
	if len(p.order) > sharedPageCount {
		delete(p.pages, p.order[0])
		p.order = slices.Delete(p.order, 0, 1)
	}
}

// waitedOn are the subscriptions other than sub whose next page is the
// oldest kept, when every kept page is taken and a new page after from
// would drop it before they take it.
func (p *sharedPages) waitedOn(sub *subscription, from events.Position) []*subscription {
	if len(p.order) < sharedPageCount || from.Compare(p.order[0]) < 0 {
		return nil
	}
	var out []*subscription
	for r, next := range p.readers {
		if r != sub && next == p.order[0] {
			out = append(out, r)
		}
	}
	return out
}

// move records that sub took the page ending at next, and drops the pages
// every reader has passed.
func (p *sharedPages) move(sub *subscription, next events.Position) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.readers[sub] = next
	p.changed()
}

// leave takes sub out of the convoy.
func (p *sharedPages) leave(sub *subscription) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.readers, sub)
	p.changed()
}

// changed drops the pages before every reader's next page (all of them
// when no subscription is left: a service at the log's tail holds no
// page) and wakes the subscriptions waiting for room.
func (p *sharedPages) changed() {
	var first events.Position
	n := 0
	for _, next := range p.readers {
		if n == 0 || next.Compare(first) < 0 {
			first = next
		}
		n++
	}
	for len(p.order) > 0 && (n == 0 || p.order[0].Compare(first) < 0) {
		delete(p.pages, p.order[0])
		p.order = p.order[1:]
	}
	close(p.moved)
	p.moved = make(chan struct{})
}

// forget drops page, if it is still the one kept after from.
func (p *sharedPages) forget(from events.Position, page *sharedPage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pages[from] != page {
		return
	}
	delete(p.pages, from)
	if i := slices.Index(p.order, from); i >= 0 {
		p.order = slices.Delete(p.order, i, i+1)
	}
}
