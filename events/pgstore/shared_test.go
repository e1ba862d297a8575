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
// first; a short or failed page is read by each caller for itself.
func TestSharedPagesReadAFullPageOnce(t *testing.T) {
	ctx := context.Background()
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
			p := newSharedPages(false, time.Minute)
			var reads, errs atomic.Int32
			release := make(chan struct{})
			read := func([]string) ([]events.RecordedEvent, int, error) {
				n := reads.Add(1)
				if n == 1 {
					<-release // every caller asks while the first read is under way
				}
				page, err := c.page(int(n))
				return page, len(page), err
			}
			var wg sync.WaitGroup
			for range c.callers {
				wg.Go(func() {
					if _, _, err := p.read(ctx, &subscription{}, at(0), read); err != nil {
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
}

// at is the position after the lo-th event of a test log.
func at(lo uint64) events.Position { return events.NewPosition(1, lo) }

// pageAfter is a reader of the full page after from, counting its reads.
func pageAfter(from uint64, reads *atomic.Int32) pageRead {
	return func([]string) ([]events.RecordedEvent, int, error) {
		reads.Add(1)
		return fullPage(from + PageSize), PageSize, nil
	}
}

// A subscription that would read a new page while every kept page is
// full waits for the slower one whose next page is the oldest, and takes
// it over once that one has; one that never takes its page is waited for
// once, for the patience, and then no more: it holds no page. Pages every
// reader has passed are dropped, and all of them when the last reader
// leaves.
func TestSharedPagesMoveAsAConvoy(t *testing.T) {
	for _, stuck := range []bool{false, true} {
		t.Run(fmt.Sprintf("slow one stuck: %v", stuck), func(t *testing.T) {
			ctx := context.Background()
			p := newSharedPages(false, 300*time.Millisecond)
			fast, slow := &subscription{}, &subscription{}
			var reads atomic.Int32
			read := func(sub *subscription, from uint64) {
				t.Helper()
				if _, _, err := p.read(ctx, sub, at(from), pageAfter(from, &reads)); err != nil {
					t.Fatal(err)
				}
			}
			read(slow, 0) // dropped once read: no other reader was known behind it
			var want []uint64
			for from := uint64(0); from < sharedPageCount*PageSize; from += PageSize {
				read(fast, from)
				if from > 0 {
					want = append(want, from)
				}
			}
			if got := keptPages(p); got != fmt.Sprint(want) {
				t.Fatalf("kept %s, want the pages after %v (both passed 0)", got, want)
			}
			read(fast, sharedPageCount*PageSize) // the last page kept: room for it
			done := make(chan struct{})
			go func() { defer close(done); read(fast, (sharedPageCount+1)*PageSize) }()
			select {
			case <-done:
				t.Fatal("the fast one read a page more before the slow one took the oldest")
			case <-time.After(100 * time.Millisecond):
			}
			if !stuck {
				read(slow, PageSize)
			}
			<-done
			// The slow one's second page was the fast one's.
			if want := int32(sharedPageCount + 3); reads.Load() != want {
				t.Errorf("%d reads, want %d", reads.Load(), want)
			}
			if stuck {
				started := time.Now()
				read(fast, (sharedPageCount+2)*PageSize)
				if waited := time.Since(started); waited > 200*time.Millisecond {
					t.Errorf("a stuck reader was waited for again (%s)", waited)
				}
			}
			p.leave(fast)
			if !stuck {
				p.leave(slow)
			} // a stuck one no longer counts: it holds no page
			if got := keptPages(p); got != "[]" {
				t.Errorf("kept %s with no reader left", got)
			}
		})
	}
}

// keptPages lists where the kept pages start.
func keptPages(p *sharedPages) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []uint64
	for _, pos := range p.order {
		_, lo := pos.Parts()
		out = append(out, lo)
	}
	return fmt.Sprint(out)
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

// Subscriptions catching up together share the log's full pages, though
// they are drained at different speeds, as projections write theirs: a
// subscription to every payload, two filtered ones that keep most events
// and one that keeps few each deliver what the database's own page reads
// return (readSkippingSQL for the filtered ones: the same events, the
// same payloads left out), while the pages are read about once, not once
// per subscription.
func TestCatchingUpSubscriptionsShareFullPages(t *testing.T) {
	pool := migratedPool(t)
	s := storeWith(t, pool, Options{PollInterval: time.Hour, TailWindow: -1}) // no polls at the end
	const fullPages = 15
	var end events.Position
	for i := range fullPages*2 + 1 { // the log ends with a company
		appendTyped(t, s, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, 990)
		appendTyped(t, s, fmt.Sprintf("issue-%d", i), events.TypeInvoiceIssued, 5)
		end = appendTyped(t, s, fmt.Sprintf("company-%d", i), events.TypeCompanyCreated, 5)
	}
	readers := []shareReader{
		{nil, 0},
		{[]string{events.TypeInvoiceDrafted, events.TypeInvoiceIssued}, 2 * time.Millisecond},
		{[]string{events.TypeInvoiceDrafted}, 5 * time.Millisecond},
		{[]string{events.TypeCompanyCreated}, 0},
	}
	reads := drainTogether(t, s, readers, end)
	// Alone, the three that keep most events read 3 × 15 full pages; the
	// one that keeps few reads its own 15 pages in the database. Each also
	// reads the short last page: 37 reads in all with the convoy, which
	// all four start in (40–43 when the filtered ones started in the
	// sparse one and read their first page for themselves, and 51–53 in
	// the runs where they joined the dense one too late), 55–58 without it
	// (patience 1 ns), 69 when each read for itself.
	if limit := int64(3*fullPages + 4); reads > limit {
		t.Errorf("%d page reads for %d full pages read by four subscriptions, want at most %d", reads, fullPages, limit)
	}
	t.Logf("%d page reads for four subscriptions over %d full pages", reads, fullPages)
}

// Subscriptions that keep few of the events they scan share pages read
// for all their types, in a convoy of their own, and each delivers exactly
// what its own reads in the database return: its types' events, and each
// page's last event, without its payload, for the position.
func TestSparseSubscriptionsShareTheirScans(t *testing.T) {
	pool := migratedPool(t)
	s := storeWith(t, pool, Options{PollInterval: time.Hour, TailWindow: -1})
	const fullPages = 15
	var end events.Position
	for i := range fullPages*2 + 1 {
		appendTyped(t, s, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, 990)
		appendTyped(t, s, fmt.Sprintf("customer-%d", i), events.TypeCustomerCreated, 5)
		end = appendTyped(t, s, fmt.Sprintf("company-%d", i), events.TypeCompanyCreated, 5)
	}
	readers := []shareReader{
		{[]string{events.TypeCompanyCreated}, 0},
		{[]string{events.TypeCustomerCreated}, 5 * time.Millisecond},
		{[]string{events.TypeCompanyCreated, events.TypeCustomerCreated}, 2 * time.Millisecond},
		{[]string{events.TypeCreditNoteIssued}, 0}, // none in the log: only the pages' last events
	}
	reads := drainTogether(t, s, readers, end)
	// Alone, each reads the 15 full pages and the short last one: 64.
	// Shared, the full pages are read once, but for a subscription that
	// asks for a page read before it joined the convoy, without its types
	// (it reads its own): 22-24 reads in all.
	if limit := int64(fullPages + 3*len(readers)); reads > limit {
		t.Errorf("%d page reads for %d full pages read by %d sparse subscriptions, want at most %d", reads, fullPages, len(readers), limit)
	}
	t.Logf("%d page reads for %d sparse subscriptions over %d full pages", reads, len(readers), fullPages)
}

// Sparse subscriptions catching up while other transactions append and
// commit late (two writers, some of their events of the subscriptions'
// types) deliver exactly what their own reads return once every append has
// committed: a shared page is kept only when full, and a full page holds
// the same events whenever it is read.
func TestSparseSubscriptionsShareScansUnderConcurrentAppends(t *testing.T) {
	pool := migratedPool(t)
	s := storeWith(t, pool, Options{PollInterval: 20 * time.Millisecond, TailWindow: -1})
	for i := range 8 {
		appendTyped(t, s, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, 995)
		appendTyped(t, s, fmt.Sprintf("company-%d", i), events.TypeCompanyCreated, 5)
	}
	types := [][]string{{events.TypeCompanyCreated}, {events.TypeCustomerCreated}, {events.TypeCompanyCreated, events.TypeCustomerCreated}}
	subs := make([]events.Subscription, len(types))
	for i, ts := range types {
		subs[i] = subscribeFromZero(t, s, ts...)
	}
	var writers sync.WaitGroup
	for w := range 2 {
		writers.Go(func() {
			for i := range 20 {
				appendTyped(t, s, fmt.Sprintf("w%d-invoice-%d", w, i), events.TypeInvoiceDrafted, 300)
				appendTyped(t, s, fmt.Sprintf("w%d-customer-%d", w, i), events.TypeCustomerCreated, 1+i%3)
			}
		})
	}
	writers.Wait()
	end := appendTyped(t, s, "company-last", events.TypeCompanyCreated, 1)
	var readers sync.WaitGroup
	got := make([][]events.RecordedEvent, len(types))
	for i := range types {
		readers.Go(func() { got[i] = drainUntil(t, subs[i], end, time.Duration(i)*time.Millisecond) })
	}
	readers.Wait()
	for i, ts := range types {
		if diff := deliveryDiff(keptOf(got[i], ts), keptOf(ownPages(t, s, ts, end), ts)); diff != "" {
			t.Errorf("subscription to %v: %s", ts, diff)
		}
	}
}

// keptOf are the events of types in evs: what a subscription to them
// delivers with payloads, whatever the pages' bounds (which differ between
// a catch-up under appends and reads after them).
func keptOf(evs []events.RecordedEvent, types []string) []events.RecordedEvent {
	var out []events.RecordedEvent
	for _, ev := range evs {
		if slices.Contains(types, ev.Type) {
			out = append(out, ev)
		}
	}
	return out
}

// A sparse page holds the payloads of the types its convoy's readers had
// when it was claimed: a subscription of another type does not take it
// (that would skip its events) but reads its own, for its own types.
func TestASparsePageIsTakenOnlyForTypesItHolds(t *testing.T) {
	ctx := context.Background()
	p := newSharedPages(true, time.Minute)
	companies := &subscription{payloadsOf: []string{events.TypeCompanyCreated}}
	customers := &subscription{payloadsOf: []string{events.TypeCustomerCreated}}
	both := &subscription{payloadsOf: []string{events.TypeCustomerCreated, events.TypeCompanyCreated}}
	var asked [][]string
	read := func(types []string) ([]events.RecordedEvent, int, error) {
		asked = append(asked, types)
		return fullPage(PageSize), PageSize, nil
	}
	laggard := &subscription{payloadsOf: []string{events.TypeCompanyCreated}}
	p.readers[laggard] = at(0) // in the convoy, its next page not taken yet: the page after 0 stays
	for _, sub := range []*subscription{companies, customers} {
		if _, _, err := p.read(ctx, sub, at(0), read); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := p.read(ctx, both, at(PageSize), read); err != nil { // all are in the convoy now
		t.Fatal(err)
	}
	for _, sub := range []*subscription{companies, customers} {
		if _, _, err := p.read(ctx, sub, at(PageSize), read); err != nil {
			t.Fatal(err)
		}
	}
	wantAsked := [][]string{
		{events.TypeCompanyCreated},                             // the page after 0, for the companies
		{events.TypeCustomerCreated},                            // the customers' own: that page lacks their payloads
		{events.TypeCompanyCreated, events.TypeCustomerCreated}, // the page after 2000, for all three
	}
	if fmt.Sprint(asked) != fmt.Sprint(wantAsked) {
		t.Fatalf("reads asked for %v, want %v", asked, wantAsked)
	}
	for _, c := range []struct {
		types, want []string
		covers      bool
	}{
		{nil, []string{"A"}, true},
		{[]string{"A", "B"}, []string{"B"}, true},
		{[]string{"A"}, []string{"A", "B"}, false},
		{[]string{"A"}, nil, false},
	} {
		if got := covers(c.types, c.want); got != c.covers {
			t.Errorf("covers(%v, %v) = %v", c.types, c.want, got)
		}
	}
}

// shareReader is a subscription of a share test: its types, and how long
// it pauses every 100 events.
type shareReader struct {
	types []string
	pause time.Duration
}

// drainTogether subscribes readers from the log's start at once, drains
// each until end, checks that each delivered what its own page reads in
// the database return, and returns how many pages they read.
func drainTogether(t *testing.T, s *Store, readers []shareReader, end events.Position) int64 {
	t.Helper()
	var want [][]events.RecordedEvent
	for _, r := range readers {
		want = append(want, ownPages(t, s, r.types, end))
	}
	before := s.pageReads.Load()
	got := make([][]events.RecordedEvent, len(readers))
	var wg sync.WaitGroup
	for i, r := range readers {
		sub := subscribeFromZero(t, s, r.types...)
		wg.Go(func() { got[i] = drainUntil(t, sub, end, r.pause) })
	}
	wg.Wait()
	reads := s.pageReads.Load() - before
	for i, r := range readers {
		if diff := deliveryDiff(got[i], want[i]); diff != "" {
			t.Errorf("subscription to %v: %s", r.types, diff)
		}
	}
	return reads
}

// A subscription that is not drained (its projection stuck) does not hold
// back another: the other waits for it once, for the convoy's patience,
// and reaches the end of the log.
func TestAStuckSubscriptionDoesNotHoldBackTheConvoy(t *testing.T) {
	pool := migratedPool(t)
	s := storeWith(t, pool, Options{PollInterval: 50 * time.Millisecond, TailWindow: -1, ConvoyPatience: 200 * time.Millisecond})
	var end events.Position
	for i := range 2 * (sharedPageCount + 4) {
		end = appendTyped(t, s, fmt.Sprintf("invoice-%d", i), events.TypeInvoiceDrafted, PageSize/2)
	}
	subscribeFromZero(t, s) // never drained
	started := time.Now()
	got := drainUntil(t, subscribeFromZero(t, s), end, 0)
	if len(got) != 2*(sharedPageCount+4)*PageSize/2 {
		t.Errorf("%d events delivered, want every one", len(got))
	}
	t.Logf("reached the end past a stuck subscription in %s", time.Since(started).Round(time.Millisecond))
}

// subscribeFromZero subscribes to s from the log's start until the test
// ends.
func subscribeFromZero(t *testing.T, s *Store, payloadsOf ...string) events.Subscription {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	sub, err := s.SubscribeAll(ctx, events.Position{}, payloadsOf...)
	if err != nil {
		t.Fatal(err)
	}
	return sub
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
	list := typeListOf(types)
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

// drainUntil receives from sub until it delivers end, in strictly
// increasing positions, pausing every 100 events. It reports failures
// with t.Errorf, so that goroutines may call it, and returns what it got.
func drainUntil(t *testing.T, sub events.Subscription, end events.Position, pause time.Duration) []events.RecordedEvent {
	var got []events.RecordedEvent
	deadline := time.After(60 * time.Second)
	for {
		select {
		case ev, ok := <-sub.Events():
			if !ok {
				t.Errorf("subscription ended after %d events: %v", len(got), sub.Err())
				return got
			}
			if len(got) > 0 && ev.Position.Compare(got[len(got)-1].Position) <= 0 {
				t.Errorf("%s at %s delivered after %s", ev.Stream, ev.Position, got[len(got)-1].Position)
				return got
			}
			if got = append(got, ev); ev.Position == end {
				return got
			}
			if pause > 0 && len(got)%100 == 0 {
				time.Sleep(pause)
			}
		case <-deadline:
			t.Errorf("subscription did not reach %s within 60 s: %d events", end, len(got))
			return got
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

// A subscription starts in the dense convoy; its first page tells where
// it goes: a full page by what it kept, a short one (a subscription at the
// log's tail) sends a filtered subscription to the sparse convoy as
// before. After that only full pages tell.
func TestTheFirstPageTellsASubscriptionsConvoy(t *testing.T) {
	for _, c := range []struct {
		name       string
		payloadsOf []string
		pages      [][2]int // kept, scanned
		dense      bool
	}{
		{"filtered, nothing read yet", []string{"a"}, nil, true},
		{"every payload, a short page", nil, [][2]int{{3, 3}}, true},
		{"filtered, keeps most of a full page", []string{"a"}, [][2]int{{PageSize, PageSize}}, true},
		{"filtered, keeps few of a full page", []string{"a"}, [][2]int{{1, PageSize}}, false},
		{"filtered, a short first page", []string{"a"}, [][2]int{{3, 3}}, false},
		{"filtered, short pages after a dense full one", []string{"a"}, [][2]int{{PageSize, PageSize}, {0, 3}}, true},
		{"filtered, a full page after short ones", []string{"a"}, [][2]int{{3, 3}, {3, 3}, {PageSize, PageSize}}, true},
	} {
		s := &Store{shared: newSharedPages(false, time.Second), sparse: newSharedPages(true, time.Second)}
		sub := newSubscription(c.payloadsOf)
		for _, p := range c.pages {
			sub.learn(s, p[0], p[1])
		}
		if sub.dense != c.dense {
			t.Errorf("%s: dense %v, want %v", c.name, sub.dense, c.dense)
		}
	}
}
