package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// fullPage is PageSize events, the last at lo.
func fullPage(lo uint64) []events.RecordedEvent {
	page := make([]events.RecordedEvent, PageSize)
	for i := range page {
		page[i].Position = events.NewPosition(1, lo-uint64(PageSize-1-i))
	}
	return page
}

// The shared pages read a full page once for every caller, whoever asks
// first; a short or failed page is read by each caller for itself; and
// only the latest sharedPageCount pages are kept.
func TestSharedPagesReadAFullPageOnce(t *testing.T) {
	ctx := context.Background()
	at := func(lo uint64) events.Position { return events.NewPosition(1, lo) }
	cases := []struct {
		name      string
		page      func(read int) ([]events.RecordedEvent, error)
		callers   int
		wantReads int
		wantErrs  int32
	}{
		{"full page, four callers at once", func(int) ([]events.RecordedEvent, error) { return fullPage(2000), nil }, 4, 1, 0},
		{"short page: each reads", func(int) ([]events.RecordedEvent, error) { return fullPage(2000)[:10], nil }, 4, 4, 0},
		{"failed read: each reads", func(read int) ([]events.RecordedEvent, error) {
			if read == 1 {
				return nil, errors.New("connection lost")
			}
			return fullPage(2000), nil
		}, 4, 4, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newSharedPages()
			var reads, errs atomic.Int32
			release := make(chan struct{})
			read := func() ([]events.RecordedEvent, error) {
				n := reads.Add(1)
				if n == 1 {
					<-release // every caller asks while the first read is under way
				}
				return c.page(int(n))
			}
			var wg sync.WaitGroup
			for range c.callers {
				wg.Go(func() {
					if _, err := p.read(ctx, at(0), read); err != nil {
						errs.Add(1)
					}
				})
			}
			waitFor(t, func() bool { return pageClaimed(p, at(0)) })
			time.Sleep(50 * time.Millisecond) // the others reach the wait
			close(release)
			wg.Wait()
			if got := int(reads.Load()); got != c.wantReads || errs.Load() != c.wantErrs {
				t.Errorf("%d reads and %d errors for %d callers, want %d and %d", got, errs.Load(), c.callers, c.wantReads, c.wantErrs)
			}
		})
	}
	t.Run("the latest pages are kept", func(t *testing.T) {
		p := newSharedPages()
		reads := 0
		for lo := range uint64(sharedPageCount + 1) {
			read := func() ([]events.RecordedEvent, error) { reads++; return fullPage(2000 * (lo + 1)), nil }
			if _, err := p.read(ctx, at(2000*lo), read); err != nil {
				t.Fatal(err)
			}
		}
		for lo := uint64(sharedPageCount); lo+1 > 0; lo-- { // newest first
			if _, err := p.read(ctx, at(2000*lo), func() ([]events.RecordedEvent, error) { reads++; return fullPage(2000 * (lo + 1)), nil }); err != nil {
				t.Fatal(err)
			}
		}
		if want := sharedPageCount + 1 + 1; reads != want { // the oldest was dropped and read again
			t.Errorf("%d reads, want %d", reads, want)
		}
	})
}

func pageClaimed(p *sharedPages, from events.Position) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.pages[from]
	return ok
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached in 5 s")
		}
	}
}

// Subscriptions catching up together share the log's full pages: a
// subscription to every payload, two filtered ones that keep most events
// and one that keeps few each deliver what the database's own page reads
// return (readSkippingSQL for the filtered ones: the same events, the
// same payloads left out), while the pages are read about once, not once
// per subscription.
func TestCatchingUpSubscriptionsShareFullPages(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := migratedPool(t)
	s := storeWith(t, pool, Options{PollInterval: 50 * time.Millisecond, TailWindow: -1})
	const fullPages = 15
	var end events.Position
	for i := range fullPages*2 + 1 {
		end = appendTyped(t, s, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, 990)
		end = appendTyped(t, s, fmt.Sprintf("issue-%d", i), events.TypeInvoiceIssued, 5)
		end = appendTyped(t, s, fmt.Sprintf("company-%d", i), events.TypeCompanyCreated, 5)
	}
	readers := [][]string{
		nil,
		{events.TypeInvoiceDrafted, events.TypeInvoiceIssued},
		{events.TypeInvoiceDrafted},
		{events.TypeCompanyCreated},
	}
	var want [][]events.RecordedEvent
	for _, types := range readers {
		want = append(want, ownPages(t, s, types, end))
	}
	before := s.pageReads.Load()
	var subs []events.Subscription
	for _, types := range readers {
		sub, err := s.SubscribeAll(ctx, events.Position{}, types...)
		if err != nil {
			t.Fatal(err)
		}
		subs = append(subs, sub)
	}
	got := drainInStep(t, subs, end)
	reads := s.pageReads.Load() - before
	for i, types := range readers {
		if diff := deliveryDiff(got[i], want[i]); diff != "" {
			t.Errorf("subscription to %v: %s", types, diff)
		}
	}
	// Alone, the three that keep most events read 3 × 15 full pages; the
	// one that keeps few reads its own 15 pages in the database.
	if reads > 2*fullPages+fullPages+12 {
		t.Errorf("%d page reads for %d full pages read by four subscriptions, want them shared", reads, fullPages)
	}
	t.Logf("%d page reads for four subscriptions over %d full pages", reads, fullPages)
}

// appendTyped appends n events of eventType to a new stream.
func appendTyped(t *testing.T, s *Store, stream, eventType string, n int) events.Position {
	t.Helper()
	evs := make([]events.EventData, n)
	for i := range evs {
		evs[i] = events.EventData{ID: uuid.New(), Type: eventType,
			Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, i)), Metadata: json.RawMessage(`{"m":1}`)}
	}
	res, err := s.Append(context.Background(), stream, events.NoStream(), evs...)
	if err != nil {
		t.Fatal(err)
	}
	return res.Position
}

// ownPages is what a subscription to types receives up to end when it
// reads every page for itself in the database.
func ownPages(t *testing.T, s *Store, types []string, end events.Position) []events.RecordedEvent {
	t.Helper()
	var list *string
	if types != nil {
		l := typeList(types)
		list = &l
	}
	var out []events.RecordedEvent
	for pos := (events.Position{}); pos != end; {
		page, _, err := s.readPage(context.Background(), pos, PageSize, list)
		if err != nil || len(page) == 0 {
			t.Fatalf("own read after %s: %d events, %v", pos, len(page), err)
		}
		out = append(out, page...)
		pos = page[len(page)-1].Position
	}
	return out
}

// drainInStep receives from every subscription until each has delivered
// end, always from the one furthest behind in the log, so that they ask
// for the same pages at about the same time, as a catch-up's do.
func drainInStep(t *testing.T, subs []events.Subscription, end events.Position) [][]events.RecordedEvent {
	t.Helper()
	got := make([][]events.RecordedEvent, len(subs))
	at := make([]events.Position, len(subs))
	deadline := time.After(60 * time.Second)
	for {
		behind := -1
		for i := range subs {
			if at[i] != end && (behind < 0 || at[i].Compare(at[behind]) < 0) {
				behind = i
			}
		}
		if behind < 0 {
			return got
		}
		select {
		case ev, ok := <-subs[behind].Events():
			if !ok {
				t.Fatalf("subscription %d ended at %s: %v", behind, at[behind], subs[behind].Err())
			}
			got[behind] = append(got[behind], ev)
			at[behind] = ev.Position
		case <-deadline:
			t.Fatalf("subscription %d stuck at %s", behind, at[behind])
		}
	}
}

// deliveryDiff describes the first difference between two deliveries.
func deliveryDiff(got, want []events.RecordedEvent) string {
	same := func(a, b events.RecordedEvent) bool {
		return a.Position == b.Position && a.ID == b.ID && a.Type == b.Type && a.Stream == b.Stream &&
			slices.Equal(a.Data, b.Data) && (a.Data == nil) == (b.Data == nil) &&
			slices.Equal(a.Metadata, b.Metadata) && (a.Metadata == nil) == (b.Metadata == nil)
	}
	for i := range min(len(got), len(want)) {
		if !same(got[i], want[i]) {
			return fmt.Sprintf("event %d is %s %s %q, want %s %s %q", i, got[i].Position, got[i].Type, got[i].Data,
				want[i].Position, want[i].Type, want[i].Data)
		}
	}
	if len(got) != len(want) {
		return fmt.Sprintf("%d events, want %d", len(got), len(want))
	}
	return ""
}
