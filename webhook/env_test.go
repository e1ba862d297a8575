package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/pgstore"
	"github.com/invoicing/invoicing/internal/pgtest"
	"github.com/invoicing/invoicing/webhook/migrations"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

var testKey = []byte(strings.Repeat("m", MinMasterKeyBytes))

// env is a migrated database: the event store and the delivery tables.
type env struct {
	pool  *pgxpool.Pool
	store *pgstore.Store
	eps   *fakeEndpoints
}

func newEnv(t *testing.T) *env {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for _, migrate := range []func(context.Context, *pgxpool.Pool) error{pgstore.Migrate, migrations.Migrate} {
		if err := migrate(context.Background(), pool); err != nil {
			t.Fatal(err)
		}
	}
	store := pgstore.New(pool, quiet, pgstore.Options{PollInterval: 20 * time.Millisecond})
	t.Cleanup(func() { store.Close() })
	return &env{pool: pool, store: store, eps: &fakeEndpoints{byAccount: map[string][]Endpoint{}}}
}

// fakeEndpoints is the endpoints' read model, kept in memory.
type fakeEndpoints struct {
	mu        sync.Mutex
	byAccount map[string][]Endpoint
}

func (f *fakeEndpoints) For(_ context.Context, accountID string) ([]Endpoint, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Endpoint(nil), f.byAccount[accountID]...), nil
}

// add registers an endpoint of account at url, taking types (none: all).
func (f *fakeEndpoints) add(t *testing.T, account, url string, types ...string) Endpoint {
	t.Helper()
	id := uuid.NewString()
	secret, err := Secret(testKey, account, id, 1)
	if err != nil {
		t.Fatal(err)
	}
	ep := Endpoint{ID: id, URL: url, EventTypes: types, Secrets: []string{secret}, CreatedAt: time.Now().Add(-time.Millisecond)}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.byAccount[account] = append(f.byAccount[account], ep)
	return ep
}

// testPublic names two internal types publicly; the numbering event stays
// internal.
func testPublic(internalType string) (string, bool) {
	switch internalType {
	case events.TypeCompanyCreated:
		return "company.created", true
	case events.TypeCompanyUpdated:
		return "company.updated", true
	}
	return "", false
}

// testRender renders an event as the test receivers read it back.
func testRender(stream []events.RecordedEvent, revision uint64) (json.RawMessage, error) {
	if revision >= uint64(len(stream)) {
		return nil, fmt.Errorf("%d events, no revision %d", len(stream), revision)
	}
	ev := stream[revision]
	t, _ := testPublic(ev.Type)
	return json.Marshal(map[string]any{"id": uuid.UUID(ev.ID).String(), "type": t, "stream": ev.Stream, "revision": ev.Revision})
}

// write appends n events to each stream (CompanyCreated, then
// CompanyUpdated; every third an InvoiceNumberAssigned, never public)
// round-robin, so the streams' events interleave in the log.
func (e *env) write(t *testing.T, account string, streams []string, n int) {
	t.Helper()
	ctx := context.Background()
	meta, _ := json.Marshal(events.Metadata{AccountID: account, SchemaVersion: 1})
	for i := 0; i < n; i++ {
		for _, s := range streams {
			typ, exp := events.TypeCompanyUpdated, events.AtRevision(uint64(i-1))
			if i == 0 {
				typ, exp = events.TypeCompanyCreated, events.NoStream()
			} else if i%3 == 0 {
				typ = events.TypeInvoiceNumberAssigned
			}
			ev := events.EventData{ID: events.EventID(s, uint64(i)), Type: typ, Data: json.RawMessage(`{}`), Metadata: meta}
			if _, err := e.store.Append(ctx, s, exp, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// run runs f until the test ends; stop ends it sooner.
func run(t *testing.T, f func(context.Context)) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); f(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// fastSender is a sender with test timings: retries after milliseconds.
func (e *env) fastSender(opts SenderOptions) *Sender {
	opts.Guard = &Guard{AllowPrivate: true}
	setDefault(&opts.BackoffMin, 20*time.Millisecond)
	setDefault(&opts.BackoffMax, 100*time.Millisecond)
	setDefault(&opts.Poll, 20*time.Millisecond)
	setDefault(&opts.Timeout, 2*time.Second)
	return NewSender(e.pool, e.store, testRender, e.eps, quiet, opts)
}

func (e *env) dispatcher() *Dispatcher {
	return NewDispatcher(e.store, e.pool, quiet, testPublic, e.eps, DispatcherOptions{})
}

// received is a request a test receiver took.
type received struct {
	header   http.Header
	body     []byte
	stream   string
	revision uint64
	id       string
	status   int
}

// receiver is an httptest server that answers with answer (200 when nil)
// and keeps every request.
type receiver struct {
	*httptest.Server
	mu     sync.Mutex
	got    []received
	answer func(r received) int
}

func newReceiver(t *testing.T, answer func(r received) int) *receiver {
	rc := &receiver{answer: answer}
	rc.Server = httptest.NewServer(http.HandlerFunc(rc.serve))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var v struct {
		ID       string `json:"id"`
		Stream   string `json:"stream"`
		Revision uint64 `json:"revision"`
	}
	_ = json.Unmarshal(body, &v) // a test checks the fields it needs
	got := received{header: r.Header.Clone(), body: body, stream: v.Stream, revision: v.Revision, id: v.ID, status: 200}
	if rc.answer != nil {
		got.status = rc.answer(got)
	}
	rc.mu.Lock()
	rc.got = append(rc.got, got)
	rc.mu.Unlock()
	w.WriteHeader(got.status)
}

// requests returns a copy of what came in so far.
func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

// successes returns the requests answered 2xx.
func (rc *receiver) successes() []received {
	var out []received
	for _, r := range rc.requests() {
		if r.status < 300 {
			out = append(out, r)
		}
	}
	return out
}

// waitFor polls cond until it holds or 30 s pass.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// statuses counts the deliveries by status.
func (e *env) statuses(t *testing.T) map[string]int {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `SELECT status, count(*) FROM webhook_deliveries GROUP BY status`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var s string
		var n int
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		out[s] = n
	}
	return out
}

func streams(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("company-%s%d", prefix, i)
	}
	return out
}
