package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"regexp"
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
	eachPlan(t, conn.Conn(), func(step, mode string) {
		var plan string
		err := conn.QueryRow(ctx, `EXPLAIN (COSTS OFF, FORMAT JSON) EXECUTE pending('{InvoiceDrafted,CompanyCreated}', '0', 0)`).Scan(&plan)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(plan, `"Index Name": "events_global_order"`) || !strings.Contains(plan, `"Scan Direction": "Backward"`) ||
			strings.Contains(plan, `"Seq Scan"`) || strings.Contains(plan, `"Sort"`) {
			t.Errorf("%s, %s: the pending check is not a backward scan of events_global_order:\n%s", step, mode, plan)
		}
	})
}

// readSkippingSQL reads its page from events_global_order as readAllSQL
// does, and joins back to events, by primary key, only the rows it keeps:
// no sequential scan, whatever the statistics, in the generic plan a
// prepared statement keeps and in a custom one. Nothing in it runs once
// per row of the page: the planner guesses a page of one row, and had
// counted the page again for each of its rows (170-550 ms a page).
func TestSkippingPageReadsTheIndexAndJoinsBackByKey(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	var txID string
	if err := pool.QueryRow(ctx, `
		INSERT INTO events (event_id, stream_name, stream_revision, event_type, data, metadata)
		SELECT gen_random_uuid(), 'invoice-' || i, 0, CASE WHEN i % 500 = 0 THEN 'CompanyCreated' ELSE 'InvoiceDrafted' END,
			json_build_object('lines', repeat(md5(i::text), 70)), '{}' -- 2 KB and more, as an invoice's
		FROM generate_series(1, 20000) i
		RETURNING tx_id::text`).Scan(&txID); err != nil {
		t.Fatal(err)
	}
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Conn().Prepare(ctx, "skipping", readSkippingSQL); err != nil {
		t.Fatal(err)
	}
	// From midway: the planner's guess of the page's rows is then smallest.
	// A subscriber of company events keeps few rows of the page, one of
	// invoice events nearly all, with their payloads.
	for _, kept := range []string{events.TypeCompanyCreated, events.TypeInvoiceDrafted} {
		skippingPlans(t, conn.Conn(), kept, skippingArgs(txID, kept))
	}
	// Once VACUUM has marked the pages all-visible, the page is read from
	// the index alone (migration 003): a skipped event's row is not
	// fetched. (The test cluster commits asynchronously, and VACUUM marks
	// no row whose commit is not yet flushed: CHECKPOINT flushes it.)
	if _, err := conn.Exec(ctx, `CHECKPOINT`); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, `VACUUM events`); err != nil {
		t.Fatal(err)
	}
	plan := explain(t, conn.Conn(), "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE skipping("+skippingArgs(txID, events.TypeCompanyCreated)+")")
	if !strings.Contains(plan, "Index Only Scan using events_global_order") || !strings.Contains(plan, "Heap Fetches: 0") {
		t.Errorf("after VACUUM, the page is not read from the index alone:\n%s", plan)
	}
}

// skippingArgs are the skipping statement's arguments for a page from
// midway (the planner's guess of the page's rows is then smallest) of the
// log written in txID, keeping the payloads of kept.
func skippingArgs(txID, kept string) string {
	return fmt.Sprintf("'%s', 8000, '%s', 2000, '%s'", txID, typeList(events.Types), typeList([]string{kept}))
}

// skippingPlans checks the plans of readSkippingSQL, prepared as
// "skipping", with args: before and after ANALYZE, generic and custom.
func skippingPlans(t *testing.T, conn *pgx.Conn, kept, args string) {
	loops := regexp.MustCompile(`loops=(\d+)`)
	eachPlan(t, conn, func(step, mode string) {
		plan := explain(t, conn, "EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE skipping("+args+")")
		if strings.Contains(plan, "external") || strings.Contains(plan, "Disk:") {
			t.Errorf("%s, %s, keeping %s: the page spills to disk:\n%s", step, mode, kept, plan)
		}
		if !strings.Contains(plan, "events_global_order") || !strings.Contains(plan, "events_pkey") || strings.Contains(plan, "Seq Scan") {
			t.Errorf("%s, %s, keeping %s: the page is not read from events_global_order and joined back by key:\n%s", step, mode, kept, plan)
		}
		for _, line := range strings.Split(plan, "\n") {
			if m := loops.FindStringSubmatch(line); m != nil && m[1] != "1" && !strings.Contains(line, "events_pkey") {
				t.Errorf("%s, %s, keeping %s: %s runs %s times:\n%s", step, mode, kept, strings.TrimSpace(line), m[1], plan)
			}
		}
	})
}

// eachPlan runs check once per plan a prepared statement on conn may run
// with: before and after ANALYZE, generic and custom.
func eachPlan(t *testing.T, conn *pgx.Conn, check func(step, mode string)) {
	t.Helper()
	ctx := context.Background()
	for _, step := range []string{"", "ANALYZE events"} {
		if step != "" {
			if _, err := conn.Exec(ctx, step); err != nil {
				t.Fatal(err)
			}
		}
		for _, mode := range pgtest.PlanModes {
			if _, err := conn.Exec(ctx, "SET plan_cache_mode = "+mode); err != nil {
				t.Fatal(err)
			}
			check(step, mode)
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
	return storeWith(t, pool, Options{PollInterval: time.Hour})
}

// ownReadsStore is a wakeOnlyStore without a tail window: every
// subscription reads for itself, as one catching up does.
func ownReadsStore(t *testing.T, pool *pgxpool.Pool) *Store {
	t.Helper()
	return storeWith(t, pool, Options{PollInterval: time.Hour, TailWindow: -1})
}

func storeWith(t *testing.T, pool *pgxpool.Pool, opts Options) *Store {
	t.Helper()
	s := New(pool, slog.New(slog.NewTextHandler(io.Discard, nil)), opts)
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

// The type lists of the page read and of the pending check are parsed
// once per statement, in the generic plan too, which PostgreSQL uses for a
// prepared statement after five runs: a cast of a parameter in a filter is
// evaluated for every row there, and that had cost a catch-up a tenth of
// PostgreSQL's CPU.
func TestTypeListsAreParsedOncePerStatement(t *testing.T) {
	ctx := context.Background()
	pool := migratedPool(t)
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, "SET plan_cache_mode = force_generic_plan"); err != nil {
		t.Fatal(err)
	}
	all, one := typeList(events.Types), typeList([]string{events.TypeCompanyCreated})
	for _, c := range []struct {
		name, sql string
		args      string
	}{
		{"read_all", readAllSQL, fmt.Sprintf("'0', 0, '%s', 2000", all)},
		{"read_skipping", readSkippingSQL, fmt.Sprintf("'0', 0, '%s', 2000, '%s'", all, one)},
		{"pending", pendingSQL, fmt.Sprintf("'%s', '0', 0", all)},
	} {
		if _, err := conn.Conn().Prepare(ctx, c.name, c.sql); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		plan := explain(t, conn.Conn(), "EXPLAIN (VERBOSE) EXECUTE "+c.name+"("+c.args+")")
		for _, line := range strings.Split(plan, "\n") {
			if strings.Contains(line, "ANY (") && strings.Contains(line, "::text[]") {
				t.Errorf("%s: a type list is cast where rows are tested: %s\n%s", c.name, strings.TrimSpace(line), plan)
			}
		}
		if !strings.Contains(plan, "InitPlan") {
			t.Errorf("%s: no InitPlan casts the type lists:\n%s", c.name, plan)
		}
	}
}

// explain returns the plan statement prints, one line per row.
func explain(t *testing.T, conn *pgx.Conn, statement string) string {
	t.Helper()
	rows, err := conn.Query(context.Background(), statement)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// Subscriptions at the log's tail share its page reads through the tail
// window: eight of them cost about one read per append, where each read
// for itself (eight per append) before.
func TestSubscriptionsAtTheTailShareThePageReads(t *testing.T) {
	pool := migratedPool(t)
	for _, c := range []struct {
		name     string
		opts     Options
		min, max int64 // page reads per append
	}{
		{"with the tail window", Options{PollInterval: time.Hour}, 0, 2},
		{"every subscription reading for itself", Options{PollInterval: time.Hour, TailWindow: -1}, 8, 1 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := storeWith(t, pool, c.opts)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var subs []events.Subscription
			for range 8 {
				sub, err := s.SubscribeAll(ctx, lastPosition(t, s), events.TypeCompanyCreated)
				if err != nil {
					t.Fatal(err)
				}
				subs = append(subs, sub)
			}
			time.Sleep(200 * time.Millisecond) // each at the tail, waiting
			before := s.pageReads.Load()
			const appends = 50
			for i := range appends {
				stream := fmt.Sprintf("company-%s-%d", strings.ReplaceAll(c.name, " ", "-"), i)
				ev := events.EventData{ID: events.EventID(stream, 0), Type: events.TypeCompanyCreated,
					Data: json.RawMessage(`{"n":1}`), Metadata: json.RawMessage(`{}`)}
				if _, err := s.Append(ctx, stream, events.NoStream(), ev); err != nil {
					t.Fatal(err)
				}
				for n, sub := range subs {
					select {
					case got := <-sub.Events():
						if got.Stream != stream || string(got.Data) != `{"n":1}` {
							t.Fatalf("subscriber %d got %s %q, want %s with its payload", n, got.Stream, got.Data, stream)
						}
					case <-time.After(5 * time.Second):
						t.Fatalf("subscriber %d did not get %s", n, stream)
					}
				}
			}
			perAppend := (s.pageReads.Load() - before) / appends
			if perAppend < c.min || perAppend > c.max {
				t.Fatalf("%d page reads per append, want %d to %d", perAppend, c.min, c.max)
			}
		})
	}
}

// lastPosition is the position of the store's last event (zero if none).
func lastPosition(t *testing.T, s *Store) events.Position {
	t.Helper()
	var pos events.Position
	for {
		page, _, err := s.readPage(context.Background(), pos, PageSize, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(page) == 0 {
			return pos
		}
		pos = page[len(page)-1].Position
	}
}
