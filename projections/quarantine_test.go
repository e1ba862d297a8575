package projections

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/eventstoretest"
	"github.com/invoicing/invoicing/internal/follow"
	"github.com/invoicing/invoicing/internal/pgtest"
)

// ledger is a test projection that writes one row per event of any type,
// with no unique key, so that an event's rows count how often it was
// applied. An event whose data names a fault fails: {"fault":"go"} in
// Apply, {"fault":"40001"} with that SQLSTATE. It fails on its first
// "times" attempts when given, else until fixed is set.
type ledger struct {
	fixed    atomic.Bool
	mu       sync.Mutex
	attempts map[events.Position]int
}

type ledgerFault struct {
	Fault string `json:"fault"`
	Times int    `json:"times"`
}

func (*ledger) Name() string     { return "ledger" }
func (*ledger) Version() int     { return 1 }
func (*ledger) Tables() []string { return []string{"ledger"} }
func (*ledger) Schema() string {
	return `CREATE TABLE ledger (seq bigserial PRIMARY KEY, stream_name text NOT NULL, revision bigint NOT NULL)`
}

func (*ledger) Handles(string) bool { return true }

func (l *ledger) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	var f ledgerFault
	if err := json.Unmarshal(ev.Data, &f); err != nil {
		return err
	}
	if attempt, fail := l.fails(ev.Position, f); fail {
		if f.Fault == "go" {
			return fmt.Errorf("injected failure, attempt %d", attempt)
		}
		batch.Queue(`DO $$ BEGIN RAISE EXCEPTION 'injected %', ` + fmt.Sprint(attempt) + ` USING ERRCODE = '` + f.Fault + `'; END $$`)
	}
	batch.Queue(`INSERT INTO ledger (stream_name, revision) VALUES ($1, $2)`, ev.Stream, int64(ev.Revision))
	return nil
}

// fails counts an attempt at the event and tells whether it fails.
func (l *ledger) fails(pos events.Position, f ledgerFault) (attempt int, fail bool) {
	if f.Fault == "" {
		return 0, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.attempts == nil {
		l.attempts = map[events.Position]int{}
	}
	l.attempts[pos]++
	attempt = l.attempts[pos]
	return attempt, !l.fixed.Load() && (f.Times == 0 || attempt <= f.Times)
}

// newLedgerEnv is an env with the ledger projection's table installed.
func newLedgerEnv(t *testing.T) (env, *ledger) {
	t.Helper()
	e := newEnv(t)
	l := &ledger{}
	if _, err := Install(context.Background(), e.pool, []Projection{l}); err != nil {
		t.Fatal(err)
	}
	return e, l
}

// appendAt appends an event with data to stream at revision rev.
func appendAt(t *testing.T, store events.Store, stream string, rev uint64, data string) events.Position {
	t.Helper()
	expected := events.NoStream()
	if rev > 0 {
		expected = events.AtRevision(rev - 1)
	}
	res, err := store.Append(context.Background(), stream, expected, events.EventData{
		ID: events.EventID(stream, rev), Type: events.TypeCompanyCreated, Data: []byte(data), Metadata: []byte(`{}`),
	})
	if err != nil {
		t.Fatalf("append %s@%d: %v", stream, rev, err)
	}
	return res.Position
}

// ledgerRows counts the ledger's rows by "stream@revision".
func ledgerRows(t *testing.T, e env) map[string]int {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT stream_name || '@' || revision FROM ledger`)
	if err != nil {
		t.Fatal(err)
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, k := range keys {
		counts[k]++
	}
	return counts
}

// quarantinedKeys lists the quarantined events of projs as "stream@revision".
func quarantinedKeys(t *testing.T, e env, projs ...Projection) []string {
	t.Helper()
	list, err := QuarantinedEvents(context.Background(), e.pool, projs)
	if err != nil {
		t.Fatal(err)
	}
	return keysOf(list)
}

func keysOf(list []QuarantinedEvent) []string {
	keys := []string{}
	for _, qe := range list {
		keys = append(keys, fmt.Sprintf("%s@%d", qe.Stream, qe.Revision))
	}
	return keys
}

// startGroup runs projs until the test ends.
func startGroup(t *testing.T, e env, opts RunnerOptions, projs ...Projection) *Group {
	t.Helper()
	g := NewGroup(projs, e.store, e.pool, quiet, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); g.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return g
}

// waitFor is g.WaitFor of every event type, with a generous deadline: every
// projection of g has passed pos, applying or quarantining the event there.
func waitFor(g *Group, pos events.Position) error {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, typ := range events.Types {
		if err := g.WaitFor(ctx, pos, typ); err != nil {
			return err
		}
	}
	return nil
}

func mustReach(t *testing.T, g *Group, pos events.Position) {
	t.Helper()
	if err := waitFor(g, pos); err != nil {
		t.Fatalf("WaitFor(%s) = %v, want nil", pos, err)
	}
}

func newStream(kind string) string { return kind + "-" + uuid.NewString() }

func goodCompany(account string) events.CompanyCreated {
	return events.CompanyCreated{CompanyID: uuid.NewString(), AccountID: account, LegalName: "Good GmbH",
		Address: testAddress, DefaultCurrency: "EUR", DefaultLanguage: "en", DefaultPaymentTermsDays: 30,
		CreatedAt: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)}
}

// unappliable is an event a real projection cannot apply, and a good one
// of the same type from another account.
type unappliable struct {
	name, kind, typ string
	bad, good       any
	projection      string
	wantError       string
}

func unappliableEvents() []unappliable {
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	nulCompany := goodCompany("mallory")
	nulCompany.LegalName = "Bad\u0000Name"
	customer := events.CustomerCreated{CustomerID: uuid.NewString(), CompanyID: uuid.NewString(), AccountID: "acme",
		Name: "Initech", Address: testAddress, CreatedAt: created}
	nulCustomer := customer
	nulCustomer.CustomerID, nulCustomer.AccountID, nulCustomer.Name = uuid.NewString(), "mallory", "Ini\u0000tech"
	yearZero := draftedInvoice(created)
	yearZero.IssueDate = "0000-01-01"
	return []unappliable{
		{"company data that is not a JSON object", "company", events.TypeCompanyCreated,
			json.RawMessage(`[1, 2]`), goodCompany("acme"), "companies", "cannot unmarshal array"},
		{"company name with a NUL character", "company", events.TypeCompanyCreated,
			nulCompany, goodCompany("acme"), "companies", "SQLSTATE 22021"},
		{"customer name with a NUL character", "customer", events.TypeCustomerCreated,
			nulCustomer, customer, "customers", "SQLSTATE 22021"},
		{"invoice issued in the year 0", "invoice", events.TypeInvoiceDrafted,
			yearZero, draftedInvoice(created), "invoices", "SQLSTATE 22008"},
	}
}

func TestAnEventAProjectionCannotApplyIsQuarantinedAndTheOthersGoOn(t *testing.T) {
	e := newEnv(t)
	tests := unappliableEvents()
	bad, good := make([]events.Position, len(tests)), make([]events.Position, len(tests))
	for i, tt := range tests {
		_, _, bad[i] = appendEvent(t, e.store, tt.kind, tt.typ, tt.bad)
		_, _, good[i] = appendEvent(t, e.store, tt.kind, tt.typ, tt.good)
	}
	g := startGroup(t, e, RunnerOptions{}, All()...)
	mustReach(t, g, good[len(good)-1])

	list, err := QuarantinedEvents(context.Background(), e.pool, All())
	if err != nil {
		t.Fatal(err)
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := waitFor(g, good[i]); err != nil {
				t.Errorf("WaitFor(the good event) = %v, want nil", err)
			}
			if err := waitFor(g, bad[i]); !errors.Is(err, ErrQuarantined) {
				t.Errorf("WaitFor(the bad event) = %v, want ErrQuarantined", err)
			}
			i := slices.IndexFunc(list, func(qe QuarantinedEvent) bool { return qe.Position == bad[i] && qe.Projection == tt.projection })
			if i < 0 {
				t.Fatalf("the bad event is not quarantined; quarantine: %+v", list)
			}
			if qe := list[i]; qe.Projection != tt.projection || qe.Type != tt.typ || !strings.Contains(qe.Error, tt.wantError) {
				t.Errorf("quarantined as %+v; want projection %s, type %s, an error with %q", qe, tt.projection, tt.typ, tt.wantError)
			}
		})
	}
	checkGoodRowsAndStatus(t, e, g)
}

// checkGoodRowsAndStatus checks the readable rows, Statuses and the
// group's count after TestAnEventAProjectionCannotApply...
func checkGoodRowsAndStatus(t *testing.T, e env, g *Group) {
	t.Helper()
	var companies, customers, invoices int
	err := e.pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM companies WHERE account_id = 'acme'),
		(SELECT count(*) FROM customers WHERE account_id = 'acme'), (SELECT count(*) FROM invoices)`).Scan(&companies, &customers, &invoices)
	if err != nil {
		t.Fatal(err)
	}
	if companies != 2 || customers != 1 || invoices != 1 {
		t.Errorf("good rows: %d companies, %d customers, %d invoices; want 2, 1, 1", companies, customers, invoices)
	}
	statuses, err := Statuses(context.Background(), e.pool, e.store, All(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	// The company data that is no JSON object is no public event either.
	want := map[string]int64{"companies": 2, "customers": 1, "invoices": 1, "public_events": 1}
	for _, st := range statuses {
		if st.Quarantined != want[st.Name] {
			t.Errorf("status of %s: %d quarantined, want %d", st.Name, st.Quarantined, want[st.Name])
		}
	}
	if n, err := g.QuarantineCount(context.Background()); err != nil || n != 5 {
		t.Errorf("QuarantineCount = %d, %v; want 5", n, err)
	}
	if err := g.Err(); err != nil {
		t.Errorf("Group.Err = %v; quarantined events must not make the service unready", err)
	}
}

// Batches built ahead (see readAhead) fail as batches built at their write
// do: an Apply error carried by the built batch, and a statement that fails
// on the server, each quarantine their event, and every other event is
// applied once.
func TestEventsOfBatchesBuiltAheadAreQuarantinedOrAppliedOnce(t *testing.T) {
	e, l := newLedgerEnv(t)
	const n = 3 * readAheadMin
	faults := map[int]string{readAheadMin + 50: `{"fault":"go"}`, 2*readAheadMin + 10: `{"fault":"22P02"}`}
	var streams []string
	var last events.Position
	for i := range n {
		streams = append(streams, newStream("ahead"))
		data, ok := faults[i]
		if !ok {
			data = `{}`
		}
		last = appendAt(t, e.store, streams[i], 0, data)
	}
	r := NewRunner(l, e.store, e.pool, quiet, RunnerOptions{BatchSize: readAheadMin})
	runUntil(t, e, r, last)
	if r.builtAhead == 0 {
		t.Fatal("no batch was built ahead: the test does not test reading ahead")
	}
	applied, quarantined := ledgerRows(t, e), quarantinedKeys(t, e, l)
	for i, stream := range streams {
		_, faulty := faults[i]
		key := stream + "@0"
		if want := map[bool]int{true: 0, false: 1}[faulty]; applied[key] != want || slices.Contains(quarantined, key) != faulty {
			t.Errorf("event %d (fault %v): applied %d times, quarantined %v", i, faulty, applied[key], slices.Contains(quarantined, key))
		}
	}
}

func TestLaterEventsOfAQuarantinedStreamAreQuarantinedToo(t *testing.T) {
	// first appends the bad stream's first event, which fails, and another
	// stream's; rest appends the bad stream's later events, which would
	// apply, around another event of the other stream. Each returns the
	// position of the other stream's event.
	type appenders struct{ first, rest func() events.Position }
	tests := []struct {
		name string
		run  func(t *testing.T, e env, l *ledger, a appenders)
	}{
		{"in the same batch", func(t *testing.T, e env, l *ledger, a appenders) {
			a.first()
			runUntil(t, e, NewRunner(l, e.store, e.pool, quiet, RunnerOptions{}), a.rest())
		}},
		{"in a later batch", func(t *testing.T, e env, l *ledger, a appenders) {
			g := startGroup(t, e, RunnerOptions{}, l)
			mustReach(t, g, a.first())
			mustReach(t, g, a.rest())
		}},
		{"after the runner restarts, from the table", func(t *testing.T, e env, l *ledger, a appenders) {
			runUntil(t, e, NewRunner(l, e.store, e.pool, quiet, RunnerOptions{}), a.first())
			runUntil(t, e, NewRunner(l, e.store, e.pool, quiet, RunnerOptions{}), a.rest())
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, l := newLedgerEnv(t)
			bad, other := newStream("bad"), newStream("other")
			tt.run(t, e, l, appenders{
				first: func() events.Position {
					appendAt(t, e.store, bad, 0, `{"fault":"go"}`)
					return appendAt(t, e.store, other, 0, `{}`)
				},
				rest: func() events.Position {
					appendAt(t, e.store, bad, 1, `{}`)
					appendAt(t, e.store, bad, 2, `{}`)
					return appendAt(t, e.store, other, 1, `{}`)
				},
			})
			checkStreamQuarantined(t, e, l, bad, other)
		})
	}
}

func checkStreamQuarantined(t *testing.T, e env, l *ledger, bad, other string) {
	t.Helper()
	want := []string{bad + "@0", bad + "@1", bad + "@2"}
	if got := quarantinedKeys(t, e, l); !slices.Equal(got, want) {
		t.Errorf("quarantined %v, want %v", got, want)
	}
	if got := ledgerRows(t, e); len(got) != 2 || got[other+"@0"] != 1 || got[other+"@1"] != 1 {
		t.Errorf("applied %v, want only the other stream's two events, once each", got)
	}
}

// retry runs RetryQuarantined on the ledger and returns what it applied and
// what remains, as "stream@revision".
func retry(t *testing.T, e env, l *ledger) (applied, remaining []string) {
	t.Helper()
	res, err := RetryQuarantined(context.Background(), e.pool, e.store, l)
	if err != nil {
		t.Fatalf("RetryQuarantined: %v", err)
	}
	return keysOf(res.Applied), keysOf(res.Remaining)
}

func TestRetryAppliesAFixedEventExactlyOnceWhileTheRunnerRuns(t *testing.T) {
	e, l := newLedgerEnv(t)
	g := startGroup(t, e, RunnerOptions{}, l)
	bad, other := newStream("bad"), newStream("other")
	appendAt(t, e.store, bad, 0, `{"fault":"go"}`)
	appendAt(t, e.store, bad, 1, `{}`)
	mustReach(t, g, appendAt(t, e.store, other, 0, `{}`))
	quarantined := []string{bad + "@0", bad + "@1"}
	before, err := QuarantinedEvents(context.Background(), e.pool, []Projection{l})
	if err != nil {
		t.Fatal(err)
	}

	applied, remaining := retry(t, e, l)
	if len(applied) != 0 || !slices.Equal(remaining, quarantined) {
		t.Fatalf("retry before the fix: applied %v, remaining %v; want nothing applied, %v remaining", applied, remaining, quarantined)
	}
	after, err := QuarantinedEvents(context.Background(), e.pool, []Projection{l})
	if err != nil {
		t.Fatal(err)
	}
	if after[0].Error == before[0].Error || !strings.Contains(after[0].Error, "injected failure") {
		t.Errorf("after a failed retry the error is %q (was %q); want the new attempt's", after[0].Error, before[0].Error)
	}

	l.fixed.Store(true)
	if applied, remaining := retry(t, e, l); !slices.Equal(applied, quarantined) || len(remaining) != 0 {
		t.Fatalf("retry after the fix: applied %v, remaining %v; want %v applied, none remaining", applied, remaining, quarantined)
	}
	if applied, remaining := retry(t, e, l); len(applied)+len(remaining) != 0 {
		t.Fatalf("second retry: applied %v, remaining %v; want nothing", applied, remaining)
	}
	// The runner forgot the stream: its next event applies.
	if err := waitFor(g, appendAt(t, e.store, bad, 2, `{}`)); err != nil {
		t.Fatalf("WaitFor(the stream's next event) = %v, want nil", err)
	}
	want := map[string]int{bad + "@0": 1, bad + "@1": 1, bad + "@2": 1, other + "@0": 1}
	if got := ledgerRows(t, e); !maps.Equal(got, want) {
		t.Fatalf("applied %v, want each event once: %v", got, want)
	}
}

func TestConcurrentRetriesApplyEachEventOnce(t *testing.T) {
	e, l := newLedgerEnv(t)
	g := startGroup(t, e, RunnerOptions{}, l)
	var streams []string
	var last events.Position
	for range 5 {
		s := newStream("bad")
		streams = append(streams, s)
		appendAt(t, e.store, s, 0, `{"fault":"go"}`)
		last = appendAt(t, e.store, s, 1, `{}`)
	}
	if err := waitFor(g, last); !errors.Is(err, ErrQuarantined) {
		t.Fatalf("setup: WaitFor = %v, want ErrQuarantined", err)
	}
	l.fixed.Store(true)
	results := make([][]string, 4)
	var wg sync.WaitGroup
	for i := range results {
		wg.Go(func() {
			res, err := RetryQuarantined(context.Background(), e.pool, e.store, l)
			if err != nil {
				t.Errorf("RetryQuarantined: %v", err)
			}
			results[i] = keysOf(res.Applied)
		})
	}
	wg.Wait()
	var applied []string
	for _, r := range results {
		applied = append(applied, r...)
	}
	if len(applied) != 10 {
		t.Errorf("the retries applied %d events between them (%v), want 10", len(applied), applied)
	}
	got := ledgerRows(t, e)
	for _, s := range streams {
		if got[s+"@0"] != 1 || got[s+"@1"] != 1 {
			t.Errorf("%s applied %d and %d times, want once each", s, got[s+"@0"], got[s+"@1"])
		}
	}
	if keys := quarantinedKeys(t, e, l); len(keys) != 0 {
		t.Errorf("still quarantined: %v", keys)
	}
}

func TestOnlyErrorsTheEventCausesQuarantineIt(t *testing.T) {
	tests := []struct {
		name, data  string
		quarantined bool
	}{
		{"an error from Apply", `{"fault":"go"}`, true},
		{"a data exception (22008)", `{"fault":"22008"}`, true},
		{"a unique violation (23505)", `{"fault":"23505"}`, true},
		{"a serialization failure (40001)", `{"fault":"40001","times":2}`, false},
		{"a server shutting down (57P01)", `{"fault":"57P01","times":2}`, false},
		{"a connection failure (08006)", `{"fault":"08006","times":2}`, false},
		{"a canceled statement (57014)", `{"fault":"57014","times":2}`, false},
	}
	e, l := newLedgerEnv(t)
	streams := make([]string, len(tests))
	for i, tt := range tests {
		streams[i] = newStream("fault")
		appendAt(t, e.store, streams[i], 0, tt.data)
	}
	last := appendAt(t, e.store, newStream("good"), 0, `{}`)
	// One event a batch, so that each event's attempts are its own.
	g := startGroup(t, e, RunnerOptions{BatchSize: 1, Retry: follow.Retry{MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond}}, l)
	mustReach(t, g, last)
	quarantined, applied := quarantinedKeys(t, e, l), ledgerRows(t, e)
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := streams[i] + "@0"
			if got := slices.Contains(quarantined, key); got != tt.quarantined {
				t.Errorf("quarantined = %v, want %v", got, tt.quarantined)
			}
			if want := map[bool]int{true: 0, false: 1}[tt.quarantined]; applied[key] != want {
				t.Errorf("applied %d times, want %d", applied[key], want)
			}
		})
	}
}

// backoffLog records the backoff of every "restarting" log line.
type backoffLog struct {
	mu    sync.Mutex
	waits []time.Duration
}

func (h *backoffLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *backoffLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *backoffLog) WithGroup(string) slog.Handler            { return h }
func (h *backoffLog) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "backoff" {
			h.mu.Lock()
			defer h.mu.Unlock()
			h.waits = append(h.waits, a.Value.Duration())
		}
		return true
	})
	return nil
}

func TestBackoffStartsOverAfterABatchCommits(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name     string
		min, max time.Duration
		want     []time.Duration
	}{
		{"doubling", 10 * ms, time.Second, []time.Duration{10 * ms, 20 * ms, 40 * ms, 10 * ms, 20 * ms, 40 * ms}},
		{"capped at MaxBackoff", 10 * ms, 15 * ms, []time.Duration{10 * ms, 15 * ms, 15 * ms, 10 * ms, 15 * ms, 15 * ms}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, l := newLedgerEnv(t)
			// Two events, each failing transiently three times, each in a
			// batch of its own: the first commits before the second fails.
			appendAt(t, e.store, newStream("flaky"), 0, `{"fault":"40001","times":3}`)
			last := appendAt(t, e.store, newStream("flaky"), 0, `{"fault":"40001","times":3}`)
			log := &backoffLog{}
			r := NewRunner(l, e.store, e.pool, slog.New(log), RunnerOptions{BatchSize: 1, Retry: follow.Retry{MinBackoff: tt.min, MaxBackoff: tt.max}})
			runUntil(t, e, r, last)
			log.mu.Lock()
			defer log.mu.Unlock()
			if !slices.Equal(log.waits, tt.want) {
				t.Fatalf("backoffs %v, want %v", log.waits, tt.want)
			}
		})
	}
}

func TestDefaultMaxBackoffIsHalfASecond(t *testing.T) {
	var opts RunnerOptions
	opts.defaults()
	if opts.MaxBackoff != 500*time.Millisecond {
		t.Fatalf("default MaxBackoff = %v; a projector must resume within a second of the database", opts.MaxBackoff)
	}
}

func TestProjectorsAndWaitsOutlastADatabaseOutage(t *testing.T) {
	srv := pgtest.NewServer(t)
	e := newEnvAt(t, srv.NewDatabase(t))
	g := startGroup(t, e, RunnerOptions{}, Companies{}) // the default backoff
	before := eventstoretest.AppendCompanies(t, e.store, 1)
	mustReach(t, g, before)

	srv.StopImmediate()
	// A process that does not run the projection asks the database, and
	// reports why it could not tell. (One that runs it may answer from its
	// runner's memory until the runner notices the outage.)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	start := time.Now()
	err := checkpointWatcher(e, Companies{}).WaitFor(ctx, before, events.TypeCompanyCreated)
	cancel()
	if !errors.Is(err, ErrWaitTimeout) || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "last error") {
		t.Errorf("WaitFor while the database is down = %v; want ErrWaitTimeout with the last error", err)
	}
	if waited := time.Since(start); waited < 250*time.Millisecond {
		t.Errorf("WaitFor gave up after %v, before its deadline", waited)
	}
	spanning := make(chan error, 1)
	go func() { spanning <- waitFor(checkpointWatcher(e, Companies{}), before) }()
	time.Sleep(3 * time.Second) // long enough for a backoff capped at seconds to show
	accepted := srv.Start()
	if err := <-spanning; err != nil {
		t.Errorf("WaitFor across the restart = %v, want nil", err)
	}

	after := eventstoretest.AppendCompanies(t, e.store, 1)
	ctx, cancel = context.WithDeadline(context.Background(), accepted.Add(time.Second))
	defer cancel()
	if err := g.WaitFor(ctx, after, events.TypeCompanyCreated); err != nil {
		t.Fatalf("the projector had not resumed a second after the database accepted connections: %v", err)
	}
	t.Logf("an event appended after the restart was projected %v after the database accepted connections", time.Since(accepted).Round(time.Millisecond))
}

func TestARebuildsQuarantineReplacesTheLiveOneAtTheSwap(t *testing.T) {
	tests := []struct {
		name          string
		fixedForBuild bool // the new build's code applies the event
	}{
		{"the build applies the event the live tables lack", true},
		{"the build quarantines the event again", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, l := newLedgerEnv(t)
			g := startGroup(t, e, RunnerOptions{}, l)
			bad, other := newStream("bad"), newStream("other")
			appendAt(t, e.store, bad, 0, `{"fault":"go"}`)
			mustReach(t, g, appendAt(t, e.store, other, 0, `{}`))
			l.fixed.Store(tt.fixedForBuild)
			r := &Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet}
			if err := r.Rebuild(context.Background(), l); err != nil {
				t.Fatal(err)
			}
			if left, err := listQuarantine(context.Background(), e.pool, []string{buildCheckpoint(l)}); err != nil || len(left) != 0 {
				t.Fatalf("rows left under the build's name: %v, %v", left, err)
			}
			// The live runner must know the swapped-in quarantine: the
			// stream's next event applies only if the build applied the first.
			err := waitFor(g, appendAt(t, e.store, bad, 1, `{}`))
			want := map[string]int{other + "@0": 1}
			wantQuarantined := []string{bad + "@0", bad + "@1"}
			if tt.fixedForBuild {
				want[bad+"@0"], want[bad+"@1"], wantQuarantined = 1, 1, []string{}
			}
			if (err == nil) != tt.fixedForBuild || (err != nil && !errors.Is(err, ErrQuarantined)) {
				t.Errorf("WaitFor(the stream's next event) = %v", err)
			}
			if got := quarantinedKeys(t, e, l); !slices.Equal(got, wantQuarantined) {
				t.Errorf("quarantined %v, want %v", got, wantQuarantined)
			}
			if got := ledgerRows(t, e); !maps.Equal(got, want) {
				t.Errorf("rows %v, want %v", got, want)
			}
		})
	}
}
