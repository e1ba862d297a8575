package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/pgstore"
)

// The stress tests below hold the subscriptions' guarantee whatever the way
// they read (each on its own, or sharing reads at the log's tail): every
// subscription delivers every committed event after its start, once, in log
// order, whether its transaction committed late or not, and nothing that
// was rolled back or refused; one with payload types may leave out events
// of other types, but delivers every event of its types and reaches the
// log's last event. They use the exported API only.

// stressTypes are the event types the stress appends, chosen at random.
var stressTypes = []string{events.TypeCompanyCreated, events.TypeInvoiceDrafted, events.TypeCustomerCreated}

// appended is what the test knows of an event it wrote.
type appended struct {
	eventType string
	data      string
	metadata  string // as stored: "{}" when appended without
}

// stressLog gathers what the appenders wrote (wanted) and what must never
// be read (rolled back, or refused for a wrong expected revision).
type stressLog struct {
	mu     sync.Mutex
	wanted map[uuid.UUID]appended
	never  map[uuid.UUID]string // why
	// lateCommits and rollbacks count the late committers' transactions.
	lateCommits, rollbacks int
}

func (l *stressLog) want(evs ...events.EventData) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ev := range evs {
		meta := string(ev.Metadata)
		if meta == "" {
			meta = "{}"
		}
		l.wanted[uuid.UUID(ev.ID)] = appended{eventType: ev.Type, data: string(ev.Data), metadata: meta}
	}
}

func (l *stressLog) forbid(why string, ids ...uuid.UUID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, id := range ids {
		l.never[id] = why
	}
}

// stressEvent is an event of a random type with a small JSON payload; a
// third come without metadata.
func stressEvent(who string, n int) events.EventData {
	ev := events.EventData{
		ID:   uuid.New(),
		Type: stressTypes[rand.IntN(len(stressTypes))],
		Data: json.RawMessage(fmt.Sprintf(`{"by":%q,"n":%d}`, who, n)),
	}
	if rand.IntN(3) > 0 {
		ev.Metadata = json.RawMessage(fmt.Sprintf(`{"account_id":"a-%d"}`, n))
	}
	return ev
}

func stressEvents(who string, n, count int) []events.EventData {
	evs := make([]events.EventData, count)
	for i := range evs {
		evs[i] = stressEvent(who, n*10+i)
	}
	return evs
}

// collector drains one subscription into a slice while the test runs, as a
// projection would.
type collector struct {
	name       string
	from       events.Position
	payloadsOf []string
	sub        events.Subscription
	done       chan struct{} // closed when the subscription's channel is

	mu  sync.Mutex
	got []events.RecordedEvent
}

// delivered reports whether c has delivered its share of want, the log
// after its start: every event, or, with payload types, up to the last.
func (c *collector) delivered(want []events.RecordedEvent) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.payloadsOf == nil || len(want) == 0 {
		return len(c.got) >= len(want)
	}
	return len(c.got) > 0 && c.got[len(c.got)-1].Position.Compare(want[len(want)-1].Position) >= 0
}

// filtered reports whether ev is an event whose payload c does not read.
func (c *collector) filtered(ev events.RecordedEvent) bool {
	return c.payloadsOf != nil && !slices.Contains(c.payloadsOf, ev.Type)
}

func (c *collector) String() string {
	types := "every payload"
	if c.payloadsOf != nil {
		types = "payloads of " + strings.Join(c.payloadsOf, ",")
	}
	return fmt.Sprintf("subscription %q (from %s, %s)", c.name, c.from, types)
}

// TestSubscriptionsSeeEveryEventOnceInOrderUnderConcurrentCommits appends
// for three seconds from several goroutines (single events and multi-event
// appends, new streams and existing ones, contended streams where some
// appends are refused), while others insert rows in transactions of their
// own that stay open 5 to 80 ms as later appends commit, and then commit
// or roll back. Subscriptions start from zero at the start, from zero a
// second later (catching up while the appends go on), and from positions
// read midway, with and without payload filters. Each must deliver exactly
// the log that ReadAll returns at the end, after its start (those with
// payload filters: every event of their types, others or not, up to the
// log's last event).
//
// It runs with the store's tail window (tail.go), with a window of three
// events (so that subscriptions move in and out of it all the time, and
// catch up behind it), and without one.
func TestSubscriptionsSeeEveryEventOnceInOrderUnderConcurrentCommits(t *testing.T) {
	for _, c := range []struct {
		name   string
		window int
	}{{"tail window", 0}, {"a window of three events", 3}, {"no window", -1}} {
		t.Run(c.name, func(t *testing.T) {
			subscriptionsUnderConcurrentCommits(t, pgstore.Options{PollInterval: 50 * time.Millisecond, TailWindow: c.window})
		})
	}
}

func subscriptionsUnderConcurrentCommits(t *testing.T, opts pgstore.Options) {
	const (
		appendFor        = 3 * time.Second
		appenders        = 5 // through Append
		lateCommitters   = 2 // through their own transactions
		deliveryDeadline = 20 * time.Second
	)
	store, pool := newStoreWith(t, opts)
	subCtx, cancelSubs := context.WithCancel(context.Background())
	defer cancelSubs()

	var collectors []*collector
	subscribe := func(name string, from events.Position, payloadsOf ...string) {
		t.Helper()
		sub, err := store.SubscribeAll(subCtx, from, payloadsOf...)
		if err != nil {
			t.Fatalf("subscribe %s: %v", name, err)
		}
		if len(payloadsOf) == 0 {
			payloadsOf = nil
		}
		c := &collector{name: name, from: from, payloadsOf: payloadsOf, sub: sub, done: make(chan struct{})}
		go func() {
			defer close(c.done)
			for ev := range sub.Events() {
				c.mu.Lock()
				c.got = append(c.got, ev)
				c.mu.Unlock()
			}
		}()
		collectors = append(collectors, c)
	}

	log := &stressLog{wanted: map[uuid.UUID]appended{}, never: map[uuid.UUID]string{}}
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	var wg sync.WaitGroup
	stopAppending := sync.OnceFunc(func() { close(stop); wg.Wait() })
	defer stopAppending() // a test that fails midway leaves no appender behind

	subscribe("zero at start", events.Position{})
	subscribe("zero at start, companies", events.Position{}, events.TypeCompanyCreated)

	// Streams every appender writes to, with a guess of their heads: an
	// append that loses the race is refused and must write nothing.
	var shared struct {
		sync.Mutex
		heads map[string]int64 // -1: not created yet
	}
	shared.heads = map[string]int64{"shared-0": -1, "shared-1": -1, "shared-2": -1}
	expectedAt := func(head int64) events.ExpectedRevision {
		if head < 0 {
			return events.NoStream()
		}
		return events.AtRevision(uint64(head))
	}

	for g := range appenders {
		wg.Go(func() {
			ctx := context.Background()
			who := fmt.Sprintf("appender-%d", g)
			heads := map[string]uint64{} // this goroutine's streams: last revision
			var own []string
			for n := 0; !stopped(); n++ {
				var (
					stream   string
					expected events.ExpectedRevision
					evs      []events.EventData
				)
				count := 1
				if rand.IntN(10) < 3 {
					count = 2 + rand.IntN(4)
				}
				evs = stressEvents(who, n, count)
				switch r := rand.IntN(20); {
				case r < 2: // a contended stream
					stream = fmt.Sprintf("shared-%d", rand.IntN(3))
					shared.Lock()
					head := shared.heads[stream]
					shared.Unlock()
					_, err := store.Append(ctx, stream, expectedAt(head), evs...)
					switch {
					case err == nil:
						log.want(evs...)
						shared.Lock()
						shared.heads[stream] = max(shared.heads[stream], head+int64(len(evs)))
						shared.Unlock()
					case errors.Is(err, events.ErrWrongExpectedRevision):
						log.forbid(fmt.Sprintf("refused append to %s expecting %d", stream, head), idsOf(evs)...)
						last, err := store.ReadLast(ctx, stream)
						if err != nil {
							t.Errorf("%s: read last of %s: %v", who, stream, err)
							return
						}
						shared.Lock()
						shared.heads[stream] = max(shared.heads[stream], int64(last.Revision))
						shared.Unlock()
					default:
						t.Errorf("%s: append to %s: %v", who, stream, err)
						return
					}
					continue
				case r < 3: // a wrong expected revision on an own stream: refused
					if len(own) == 0 {
						continue
					}
					stream = own[rand.IntN(len(own))]
					_, err := store.Append(ctx, stream, events.AtRevision(heads[stream]+1), evs...)
					if !errors.Is(err, events.ErrWrongExpectedRevision) {
						t.Errorf("%s: append to %s ahead of its head = %v, want ErrWrongExpectedRevision", who, stream, err)
						return
					}
					log.forbid("refused append to "+stream+" ahead of its head", idsOf(evs)...)
					continue
				case r < 11 || len(own) == 0: // a new stream
					stream = fmt.Sprintf("%s-%d", who, n)
					expected = events.NoStream()
				default: // an existing one
					stream = own[rand.IntN(len(own))]
					expected = events.AtRevision(heads[stream])
				}
				res, err := store.Append(ctx, stream, expected, evs...)
				if err != nil {
					t.Errorf("%s: append %d events to %s expecting %s: %v", who, len(evs), stream, expected, err)
					return
				}
				if expected.IsNoStream() {
					own = append(own, stream)
				}
				heads[stream] = res.NextRevision
				log.want(evs...)
			}
		})
	}

	// Late committers: a row inserted in a transaction of its own takes a
	// transaction id, and so its place in the log, at the INSERT; appends
	// that commit while it stays open come after it, and readers must wait
	// for it. A quarter roll back.
	for g := range lateCommitters {
		wg.Go(func() {
			ctx := context.Background()
			who := fmt.Sprintf("late-%d", g)
			for n := 0; !stopped(); n++ {
				if err := lateCommit(ctx, pool, log, who, n); err != nil {
					t.Errorf("%s: %v", who, err)
					return
				}
			}
		})
	}

	start := time.Now()
	sleepUntil := func(d time.Duration) { time.Sleep(time.Until(start.Add(d))) }

	sleepUntil(time.Second)
	subscribe("zero, late", events.Position{})
	subscribe("zero, late, invoices", events.Position{}, events.TypeInvoiceDrafted)

	sleepUntil(1500 * time.Millisecond)
	midway := readToTail(t, store, true)
	if len(midway) < 10 {
		t.Fatalf("after 1.5 s of appends, ReadAll read %d events", len(midway))
	}
	subscribe("midway, behind the tail", midway[len(midway)*2/3].Position, events.TypeCustomerCreated)
	subscribe("midway, at the tail", midway[len(midway)-1].Position, events.TypeCustomerCreated, events.TypeInvoiceDrafted)
	subscribe("midway, near the start", midway[5].Position)

	sleepUntil(2200 * time.Millisecond)
	tail := readToTail(t, store, true)
	subscribe("at the tail, later", tail[len(tail)-1].Position)

	sleepUntil(appendFor)
	stopAppending()
	appendTime := time.Since(start)
	if t.Failed() {
		t.FailNow()
	}

	truth := readToTail(t, store, false)
	checkTruth(t, truth, log)
	t.Logf("%d events in %v; %d transactions committed late, %d rolled back; %d events refused or rolled back; %d subscriptions",
		len(truth), appendTime.Round(time.Millisecond), log.lateCommits, log.rollbacks, len(log.never), len(collectors))

	// Wait for each subscription to deliver its share of the log, then a
	// little longer: nothing more may come.
	deadline := time.Now().Add(deliveryDeadline)
	for _, c := range collectors {
		want := eventsAfter(truth, c.from)
		for !c.delivered(want) && time.Now().Before(deadline) && !chanClosed(c.done) {
			time.Sleep(5 * time.Millisecond)
		}
	}
	caughtUp := time.Since(start)
	time.Sleep(200 * time.Millisecond) // four polls: room for an extra event to show
	cancelSubs()
	for _, c := range collectors {
		select {
		case <-c.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: its channel was not closed within 10 s of its context's end", c)
		}
		if err := c.sub.Err(); err != nil {
			t.Errorf("%s ended with %v", c, err)
		}
		if msg := compareDelivery(c, eventsAfter(truth, c.from), log); msg != "" {
			t.Errorf("%s, given up to %v after the appends: %s", c, deliveryDeadline, msg)
		}
		if c.payloadsOf != nil {
			t.Logf("%s delivered %d of the %d events after its start", c, len(c.got), len(eventsAfter(truth, c.from)))
		}
	}
	t.Logf("subscriptions caught up %v after the first append", caughtUp.Round(time.Millisecond))
}

// lateCommit inserts one or two events of a new stream in a transaction of
// its own, holds it open 5–80 ms while other appends commit, then commits
// it or, one time in four, rolls it back.
func lateCommit(ctx context.Context, pool *pgxpool.Pool, log *stressLog, who string, n int) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	stream := fmt.Sprintf("%s-%d", who, n)
	evs := stressEvents(who, n, 1+rand.IntN(2))
	for rev, ev := range evs {
		meta := string(ev.Metadata)
		if meta == "" {
			meta = "{}"
		}
		if _, err := tx.Exec(ctx, `
			INSERT INTO events (event_id, stream_name, stream_revision, event_type, data, metadata)
			VALUES ($1, $2, $3, $4, $5::text::json, $6::text::json)`,
			uuid.UUID(ev.ID), stream, rev, ev.Type, string(ev.Data), meta); err != nil {
			return fmt.Errorf("insert into %s: %w", stream, err)
		}
	}
	time.Sleep(time.Duration(5+rand.IntN(76)) * time.Millisecond)
	if rand.IntN(4) == 0 {
		if err := tx.Rollback(ctx); err != nil {
			return fmt.Errorf("roll back %s: %w", stream, err)
		}
		log.forbid("rolled back insert into "+stream, idsOf(evs)...)
		log.mu.Lock()
		log.rollbacks++
		log.mu.Unlock()
		return nil
	}
	// Wanted before the commit: a subscriber may read it at once.
	log.want(evs...)
	log.mu.Lock()
	log.lateCommits++
	log.mu.Unlock()
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit %s: %w", stream, err)
	}
	return nil
}

func idsOf(evs []events.EventData) []uuid.UUID {
	ids := make([]uuid.UUID, len(evs))
	for i, ev := range evs {
		ids[i] = ev.ID
	}
	return ids
}

func chanClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// readToTail reads the log from its start with ReadAll, page after page,
// until a page comes back empty or, while appends go on (and the tail
// moves), short.
func readToTail(t *testing.T, store *pgstore.Store, whileAppending bool) []events.RecordedEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var all []events.RecordedEvent
	var from events.Position
	for {
		page, err := store.ReadAll(ctx, from, 1000)
		if err != nil {
			t.Fatalf("ReadAll after %s: %v", from, err)
		}
		all = append(all, page...)
		if len(page) == 0 || whileAppending && len(page) < 1000 {
			return all
		}
		from = page[len(page)-1].Position
	}
}

// checkTruth checks the log read at the end against what was appended: in
// increasing positions, each wanted event once, with its payload, and none
// refused or rolled back.
func checkTruth(t *testing.T, truth []events.RecordedEvent, log *stressLog) {
	t.Helper()
	seen := make(map[uuid.UUID]bool, len(truth))
	for i, ev := range truth {
		id := uuid.UUID(ev.ID)
		if i > 0 && ev.Position.Compare(truth[i-1].Position) <= 0 {
			t.Fatalf("ReadAll: event %d of %d (%s@%d) at %s, not after the previous one's %s", i, len(truth), ev.Stream, ev.Revision, ev.Position, truth[i-1].Position)
		}
		if seen[id] {
			t.Fatalf("ReadAll: event %d of %d (%s@%d, %s) read twice", i, len(truth), ev.Stream, ev.Revision, id)
		}
		seen[id] = true
		if why, ok := log.never[id]; ok {
			t.Fatalf("ReadAll: event %d of %d (%s@%d) comes from a %s", i, len(truth), ev.Stream, ev.Revision, why)
		}
		want, ok := log.wanted[id]
		if !ok {
			t.Fatalf("ReadAll: event %d of %d (%s@%d, %s) was never appended", i, len(truth), ev.Stream, ev.Revision, id)
		}
		if ev.Type != want.eventType || string(ev.Data) != want.data || string(ev.Metadata) != want.metadata {
			t.Fatalf("ReadAll: event %d (%s@%d) = %s %s %s; appended %s %s %s", i, ev.Stream, ev.Revision,
				ev.Type, ev.Data, ev.Metadata, want.eventType, want.data, want.metadata)
		}
	}
	if len(seen) != len(log.wanted) {
		for id := range log.wanted {
			if !seen[id] {
				t.Fatalf("ReadAll read %d events, %d were appended; %s is missing", len(truth), len(log.wanted), id)
			}
		}
	}
}

func eventsAfter(truth []events.RecordedEvent, from events.Position) []events.RecordedEvent {
	i, _ := slices.BinarySearchFunc(truth, from, func(ev events.RecordedEvent, p events.Position) int {
		if ev.Position.Compare(p) <= 0 {
			return -1
		}
		return 1
	})
	return truth[i:]
}

// compareDelivery returns what is wrong with what c delivered, given the
// log after its start, in order; "" if nothing.
func compareDelivery(c *collector, want []events.RecordedEvent, log *stressLog) string {
	got := c.got
	if c.payloadsOf != nil {
		if msg := reachedEnd(c, want); msg != "" {
			return msg
		}
		want = filteredShare(c, want)
	}
	describe := func(ev events.RecordedEvent) string {
		return fmt.Sprintf("%s@%d %s at %s (id %s)", ev.Stream, ev.Revision, ev.Type, ev.Position, uuid.UUID(ev.ID))
	}
	index := make(map[uuid.UUID]int, len(want))
	for i, ev := range want {
		index[uuid.UUID(ev.ID)] = i
	}
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Position != w.Position || g.Stream != w.Stream || g.Revision != w.Revision || g.Type != w.Type {
			var what string
			id := uuid.UUID(g.ID)
			if why, ok := log.never[id]; ok {
				what = "an event of a " + why
			} else if j, ok := index[id]; ok && j < i {
				what = fmt.Sprintf("a duplicate of its event %d", j)
			} else if ok {
				what = fmt.Sprintf("the log's event %d after its start: %d skipped", j, j-i)
			} else {
				what = "an event not in the log after its start"
			}
			return fmt.Sprintf("delivered %d events, want %d; the first difference is at index %d: got %s, %s; want %s",
				len(got), len(want), i, describe(g), what, describe(w))
		}
		payload := !c.filtered(w)
		switch {
		case payload && (!bytes.Equal(g.Data, w.Data) || !bytes.Equal(g.Metadata, w.Metadata)):
			return fmt.Sprintf("event %d of %d (%s) came with data %q metadata %q; want %q %q",
				i, len(want), describe(g), g.Data, g.Metadata, w.Data, w.Metadata)
		case !payload && (g.Data != nil || g.Metadata != nil):
			return fmt.Sprintf("event %d of %d (%s) came with data %q metadata %q; want none (not a type it reads)",
				i, len(want), describe(g), g.Data, g.Metadata)
		case !g.RecordedAt.Equal(w.RecordedAt):
			return fmt.Sprintf("event %d of %d (%s) recorded at %v; ReadAll says %v", i, len(want), describe(g), g.RecordedAt, w.RecordedAt)
		}
	}
	switch {
	case len(got) < len(want):
		return fmt.Sprintf("delivered %d events, want %d: missing from index %d on, the first %s", len(got), len(want), len(got), describe(want[len(got)]))
	case len(got) > len(want):
		return fmt.Sprintf("delivered %d events, want %d: the first extra one %s", len(got), len(want), describe(got[len(want)]))
	}
	return ""
}

// reachedEnd returns what is wrong if c, which has payload types, did not
// deliver the log's last event (want's); "" if it did.
func reachedEnd(c *collector, want []events.RecordedEvent) string {
	if len(want) == 0 {
		return ""
	}
	end := want[len(want)-1]
	if len(c.got) == 0 {
		return fmt.Sprintf("delivered nothing; the log ends at %s", end.Position)
	}
	if last := c.got[len(c.got)-1]; last.ID != end.ID {
		return fmt.Sprintf("its last delivery is %s@%d at %s; the log ends with %s@%d at %s", last.Stream, last.Revision, last.Position, end.Stream, end.Revision, end.Position)
	}
	return ""
}

// filteredShare is what c, which has payload types, must have delivered of
// want: every event of its types, and the others it delivered (it may
// leave those out), so that compareDelivery still finds every duplicate,
// gap, reordering or stranger among them.
func filteredShare(c *collector, want []events.RecordedEvent) []events.RecordedEvent {
	delivered := make(map[[16]byte]bool, len(c.got))
	for _, ev := range c.got {
		delivered[ev.ID] = true
	}
	var share []events.RecordedEvent
	for _, ev := range want {
		if !c.filtered(ev) || delivered[ev.ID] {
			share = append(share, ev)
		}
	}
	return share
}

// TestManySubscribersAtTheTailAllSeeEachAppend: eight subscriptions at the
// tail, with various payload filters that all take the appended types, and
// 300 appends one at a time, each waiting until all eight delivered it.
// Polls are an hour apart, so only a wake-up moves a subscriber: one that
// waited for its poll would miss the 5 s deadline.
func TestManySubscribersAtTheTailAllSeeEachAppend(t *testing.T) {
	const (
		subscribers = 8
		appends     = 300
		perEvent    = 5 * time.Second
	)
	ctx := t.Context()
	_, pool := newStore(t)
	store := pgstore.New(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), pgstore.Options{PollInterval: time.Hour})
	t.Cleanup(func() { store.Close() })

	for i := range 20 { // some history before the tail
		createStream(t, store, fmt.Sprintf("company-history-%d", i))
	}
	history, err := store.ReadAll(ctx, events.Position{}, 100)
	if err != nil || len(history) != 20 {
		t.Fatalf("ReadAll = %d events, %v; want 20", len(history), err)
	}
	tail := history[len(history)-1].Position

	filters := [][]string{
		nil, nil, nil, nil,
		{events.TypeCompanyCreated, events.TypeCustomerCreated}, {events.TypeCompanyCreated, events.TypeCustomerCreated},
		{events.TypeCustomerCreated, events.TypeCompanyCreated, events.TypeInvoiceDrafted}, {events.TypeCustomerCreated, events.TypeCompanyCreated, events.TypeInvoiceDrafted},
	}
	subs := make([]events.Subscription, subscribers)
	for i := range subs {
		if subs[i], err = store.SubscribeAll(ctx, tail, filters[i]...); err != nil {
			t.Fatal(err)
		}
	}

	var slowest time.Duration
	var customerRev uint64
	for n := range appends {
		stream, expected := fmt.Sprintf("company-tail-%d", n), events.NoStream()
		ev := events.EventData{ID: uuid.New(), Type: events.TypeCompanyCreated, Data: json.RawMessage(fmt.Sprintf(`{"n":%d}`, n))}
		if n%2 == 1 { // the other type, to one stream
			stream, ev.Type = "customer-tail", events.TypeCustomerCreated
			if n > 1 {
				expected = events.AtRevision(customerRev)
			}
		}
		appendedAt := time.Now()
		res, err := store.Append(ctx, stream, expected, ev)
		if err != nil {
			t.Fatalf("append %d: %v", n, err)
		}
		if ev.Type == events.TypeCustomerCreated {
			customerRev = res.NextRevision
		}
		deadline := time.NewTimer(perEvent)
		for i, sub := range subs {
			select {
			case got, ok := <-sub.Events():
				switch {
				case !ok:
					t.Fatalf("subscriber %d (payloads of %v) ended before append %d of %d: %v", i, filters[i], n, appends, sub.Err())
				case got.ID != ev.ID || got.Position != res.Position:
					t.Fatalf("append %d of %d (%s at %s): subscriber %d (payloads of %v) delivered %s@%d at %s instead",
						n, appends, stream, res.Position, i, filters[i], got.Stream, got.Revision, got.Position)
				case string(got.Data) != string(ev.Data):
					t.Fatalf("append %d of %d: subscriber %d (payloads of %v) delivered data %q, want %s", n, appends, i, filters[i], got.Data, ev.Data)
				}
			case <-deadline.C:
				t.Fatalf("append %d of %d (%s at %s): subscriber %d (payloads of %v) did not deliver it within %v (polls are an hour apart: no wake-up moved it)",
					n, appends, stream, res.Position, i, filters[i], perEvent)
			}
		}
		deadline.Stop()
		slowest = max(slowest, time.Since(appendedAt))
	}
	t.Logf("%d appends, each delivered to %d subscribers; the slowest append to last delivery took %v", appends, subscribers, slowest)
}
