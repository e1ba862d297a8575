package pgstore

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgtest"
)

// An open transaction that appends nothing (a projection's batch) hides an
// event appended after it began. The subscriber, woken by the append,
// reads an empty page; if that transaction ends before the subscriber asks
// what is pending, the event is readable but no longer hidden, and no
// wake-up will come. It must still be read soon, not at the next poll (an
// hour here). The step between the page and the question is where the
// transaction ends.
func TestEventReadableAfterAnEmptyPageIsNotLeftForThePoll(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	store := wakeOnlyStore(t, pool)
	holder := holdTransaction(t, pool)
	var armed, ended atomic.Bool
	store.beforePendingCheck = func() {
		if armed.Load() && !ended.Swap(true) {
			if err := holder.Commit(ctx); err != nil {
				t.Error(err)
			}
		}
	}
	sub, err := store.SubscribeAll(ctx, events.Position{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the first, empty, page is read and checked
	armed.Store(true)
	ev := events.EventData{ID: events.EventID("company-1", 0), Type: events.TypeCompanyCreated, Data: json.RawMessage(`{}`)}
	if _, err := store.Append(ctx, "company-1", events.NoStream(), ev); err != nil {
		t.Fatal(err)
	}
	select {
	case got := <-sub.Events():
		if got.Stream != "company-1" {
			t.Fatalf("got %s, want company-1", got.Stream)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the event was not delivered within 10s (transaction ended before the check: %v)", ended.Load())
	}
	if !ended.Load() {
		t.Error("the holding transaction did not end between a page and the check; the test did not test the race")
	}
}

// pendingSQL runs after every empty page, so it must read the end of
// events_global_order whatever the size of the log and the statistics:
// checked on 20,000 events without ANALYZE, then with, for the plan a
// prepared statement keeps (generic) and for a custom one.
func TestPendingCheckReadsTheEndOfTheIndex(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	if _, err := pool.Exec(ctx, `
		INSERT INTO events (event_id, stream_name, stream_revision, event_type, data, metadata)
		SELECT gen_random_uuid(), 'company-' || i, 0, 'CompanyCreated', '{}', '{}' FROM generate_series(1, 20000) i`); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "PREPARE pending(text[], text, bigint) AS "+pendingSQL); err != nil {
		t.Fatal(err)
	}
	for _, step := range []string{"", "ANALYZE events"} {
		if step != "" {
			if _, err := conn.Exec(ctx, step); err != nil {
				t.Fatal(err)
			}
		}
		for _, mode := range []string{"force_generic_plan", "force_custom_plan"} {
			if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
				t.Fatal(err)
			}
			var plan string
			err := conn.QueryRow(ctx, `EXPLAIN (COSTS OFF, FORMAT JSON) EXECUTE pending('{InvoiceDrafted,CompanyCreated}', '0', 0)`).Scan(&plan)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(plan, `"Index Name": "events_global_order"`) || !strings.Contains(plan, `"Scan Direction": "Backward"`) ||
				strings.Contains(plan, `"Seq Scan"`) || strings.Contains(plan, `"Sort"`) {
				t.Errorf("%s, %s: the pending check is not a backward scan of events_global_order:\n%s", step, mode, plan)
			}
		}
	}
}

// migratedPool connects to a fresh database holding the event store's
// schema.
func migratedPool(t *testing.T) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	return pool
}

// wakeOnlyStore is a store on pool whose subscribers poll once an hour:
// within a test, only wake-ups move them.
func wakeOnlyStore(t *testing.T, pool *pgxpool.Pool) *Store {
	t.Helper()
	s := New(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{PollInterval: time.Hour})
	t.Cleanup(func() { s.Close() })
	return s
}

// holdTransaction opens a transaction with a transaction id, which holds
// back every event appended after it until it ends; rolled back at the
// end of the test unless the test ends it.
func holdTransaction(t *testing.T, pool *pgxpool.Pool) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	holder, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Rollback(ctx) })
	if _, err := holder.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil { // takes a transaction id
		t.Fatal(err)
	}
	return holder
}

// A type list reaches PostgreSQL as the same strings, whatever they hold:
// the statements cast it with ::text::text[].
func TestTypeListIsTheArrayPostgreSQLReads(t *testing.T) {
	pool := migratedPool(t)
	for _, types := range [][]string{
		events.Types,
		{"InvoiceDrafted"},
		{`quote"d`, `back\slash`, "with space", "comma,inside", "{braces}", "NULL", ""},
	} {
		var got []string
		if err := pool.QueryRow(context.Background(), "SELECT $1::text::text[]", typeList(types)).Scan(&got); err != nil {
			t.Fatalf("%q: %v", types, err)
		}
		if !slices.Equal(got, types) {
			t.Errorf("typeList(%q) reads back as %q", types, got)
		}
	}
}
