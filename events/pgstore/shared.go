package pgstore

import (
	"context"
	"sync"

	"github.com/invoicing/invoicing/events"
)

// sharedPageCount is how many of the latest full pages a Store keeps for
// subscriptions catching up: enough for readers a few pages apart, each
// page up to PageSize events (about 5 MB of invoices).
const sharedPageCount = 4

// sharedPages are full pages of the log, read with every payload, that
// every catching-up subscription reading most payloads takes instead of
// reading its own. Behind the tail window, a service's projections of
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
// A subscription asking for a page another is reading waits for that read
// rather than making its own: readers of one catch-up ask for the same
// positions at about the same time, as every page they share costs each
// of them less.
type sharedPages struct {
	mu    sync.Mutex
	pages map[events.Position]*sharedPage
	order []events.Position // keys of pages, oldest first
}

// sharedPage is one page read, or being read, for every subscription.
type sharedPage struct {
	ready chan struct{} // closed once evs and err are set
	evs   []events.RecordedEvent
	err   error
}

func newSharedPages() *sharedPages {
	return &sharedPages{pages: map[events.Position]*sharedPage{}}
}

// read returns the full page after from, read once by read for every
// caller, or what read returns for this caller alone when the page is
// short or the shared read failed. The events returned are shared: their
// callers must not change them.
func (p *sharedPages) read(ctx context.Context, from events.Position, read func() ([]events.RecordedEvent, error)) ([]events.RecordedEvent, error) {
	page, reading := p.claim(from)
	if !reading {
		select {
		case <-page.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if page.err == nil && len(page.evs) == PageSize {
			return page.evs, nil
		}
		return read()
	}
	page.evs, page.err = read()
	if page.err != nil || len(page.evs) < PageSize {
		p.forget(from, page)
	}
	close(page.ready)
	return page.evs, page.err
}

// claim returns the page after from, and whether the caller is to read
// it: it was neither kept nor being read.
func (p *sharedPages) claim(from events.Position) (*sharedPage, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if page, ok := p.pages[from]; ok {
		return page, false
	}
	page := &sharedPage{ready: make(chan struct{})}
	p.pages[from] = page
	p.order = append(p.order, from)
	for len(p.order) > sharedPageCount {
		delete(p.pages, p.order[0])
		p.order = p.order[1:]
	}
	return page, true
}

// forget drops page, if it is still the one kept after from.
func (p *sharedPages) forget(from events.Position, page *sharedPage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pages[from] != page {
		return
	}
	delete(p.pages, from)
	for i, pos := range p.order {
		if pos == from {
			p.order = append(p.order[:i], p.order[i+1:]...)
			break
		}
	}
}
