package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/follow"
	"github.com/invoicing/invoicing/projections"
)

// dataset creates companies, customers and invoices and returns every read
// path of the API with its current body.
func dataset(t *testing.T, s *service) map[string]string {
	t.Helper()
	b := newBilling(t, s, "acme", minimalCompany)
	paths := []string{"/v1/companies?limit=100", "/v1/companies/" + b.companyID,
		"/v1/companies/" + b.companyID + "/customers?limit=100", "/v1/companies/" + b.companyID + "/customers/" + b.customerID,
		b.path("?limit=100")}
	for i := range 6 {
		inv := b.create(t, fmt.Sprint("ops-invoice-", i), b.invoiceBody(t, map[string]any{"external_reference": fmt.Sprint("ref-", i)}))
		paths = append(paths, b.path("/"+inv["id"].(string)))
		s.createCustomer(t, b.tok, b.companyID, fmt.Sprint("ops-customer-", i), minimalCustomer)
		s.createCompany(t, b.tok, fmt.Sprint("ops-company-", i), minimalCompany)
	}
	bodies := map[string]string{}
	for _, p := range paths {
		res := s.get(t, p, b.tok)
		mustStatus(t, res, http.StatusOK)
		bodies[p] = string(res.body)
	}
	return bodies
}

func (s *service) env() func(string) string {
	return func(k string) string { return map[string]string{"DATABASE_URL": s.dbURL}[k] }
}

// readContinuously reads every path until stop closes, counting any answer
// that is not the expected body (a 5xx, a missing row, an empty list).
func readContinuously(t *testing.T, s *service, tok string, want map[string]string, stop chan struct{}) (reads *atomic.Int64, wait func() []string) {
	reads = &atomic.Int64{}
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for {
				for path, body := range want {
					select {
					case <-stop:
						return
					default:
					}
					res := s.get(t, path, tok)
					reads.Add(1)
					if res.status != http.StatusOK || compactJSON(t, res.body) != compactJSON(t, []byte(body)) {
						mu.Lock()
						bad = append(bad, fmt.Sprintf("%s: %d %.200s", path, res.status, res.body))
						mu.Unlock()
					}
				}
			}
		})
	}
	return reads, func() []string { wg.Wait(); return bad }
}

func TestRebuildSwapsInEqualReadModelsWhileServing(t *testing.T) {
	s := newService(t)
	want := dataset(t, s)
	stop := make(chan struct{})
	reads, wait := readContinuously(t, s, token(t, "acme"), want, stop)
	var out bytes.Buffer
	err := run(context.Background(), []string{"projections", "rebuild"}, s.env(), io.Discard, &out)
	close(stop)
	bad := wait()
	if err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out.String())
	}
	for _, b := range bad {
		t.Errorf("during the rebuild a reader got %s", b)
	}
	if reads.Load() == 0 {
		t.Fatal("no reads happened during the rebuild")
	}
	t.Logf("%d reads during the rebuild, none failed", reads.Load())
	for _, name := range []string{"companies", "customers", "invoices"} {
		if !strings.Contains(out.String(), name+": rebuilt from") {
			t.Errorf("rebuild output lacks %s's progress:\n%s", name, out.String())
		}
	}
	for path, body := range want {
		if got := s.get(t, path, token(t, "acme")); compactJSON(t, got.body) != compactJSON(t, []byte(body)) {
			t.Errorf("after the rebuild %s =\n%s\nwant\n%s", path, got.body, body)
		}
	}
	// The live projector goes on into the swapped-in tables.
	s.createCompany(t, token(t, "acme"), "after-rebuild", minimalCompany)
}

func TestInterruptedRebuildResumesAndEndsEqual(t *testing.T) {
	s := newService(t)
	want := dataset(t, s)
	ctx, cancel := context.WithCancel(context.Background())
	batches := 0
	r := &projections.Rebuilder{Store: s.app.store, Pool: s.pool, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), BatchSize: 3,
		OnBatch: func(projections.Progress) {
			if batches++; batches == 2 {
				cancel() // interrupted halfway
			}
		}}
	if err := r.Rebuild(ctx, projections.Invoices{}); err == nil {
		t.Fatal("setup: the interrupted rebuild finished")
	}
	var status bytes.Buffer
	if err := run(context.Background(), []string{"projections", "status"}, s.env(), &status, io.Discard); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(status.String(), "invoices") || !strings.Contains(status.String(), "at ") {
		t.Errorf("status does not show the unfinished rebuild:\n%s", status.String())
	}
	if err := run(context.Background(), []string{"projections", "rebuild", "invoices"}, s.env(), io.Discard, io.Discard); err != nil {
		t.Fatalf("resumed rebuild: %v", err)
	}
	for path, body := range want {
		if got := s.get(t, path, token(t, "acme")); compactJSON(t, got.body) != compactJSON(t, []byte(body)) {
			t.Errorf("after the resumed rebuild %s differs", path)
		}
	}
}

func TestProjectionsStatusShowsVersionsAndLag(t *testing.T) {
	s := newService(t)
	dataset(t, s)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"projections", "status"}, s.env(), &out, io.Discard); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"companies", "customers", "invoices"} {
		if !strings.Contains(out.String(), name+"  ") {
			t.Errorf("status lacks %s:\n%s", name, out.String())
		}
	}
	if !strings.Contains(out.String(), "LAG EVENTS") {
		t.Errorf("status lacks the lag columns:\n%s", out.String())
	}
}

func TestAuditVerify(t *testing.T) {
	s := newService(t)
	dataset(t, s)
	var out bytes.Buffer
	if err := run(context.Background(), []string{"audit", "verify"}, s.env(), &out, io.Discard); err != nil {
		t.Fatalf("audit of a healthy database: %v\n%s", err, out.String())
	}
	tests := []struct {
		name, table, tamper, want string
	}{
		{"an invoice total changed behind the projector", "invoices", `UPDATE invoices SET total_minor = total_minor + 1 WHERE id = $1`, "in column(s) total_minor"},
		{"a company renamed behind the projector", "companies", `UPDATE companies SET legal_name = 'Tampered', version = 7 WHERE id = $1`, "in column(s) legal_name, version"},
		{"a customer row deleted behind the projector", "customers", `DELETE FROM customers WHERE id = $1`, "is missing from the read model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var id string
			ctx := context.Background()
			if err := s.pool.QueryRow(ctx, `SELECT id::text FROM `+tt.table+` ORDER BY position_hi, position_lo LIMIT 1`).Scan(&id); err != nil {
				t.Fatal(err)
			}
			if _, err := s.pool.Exec(ctx, tt.tamper, id); err != nil {
				t.Fatal(err)
			}
			var report bytes.Buffer
			err := run(ctx, []string{"audit", "verify"}, s.env(), &report, io.Discard)
			if err == nil || !strings.Contains(report.String(), tt.table+" "+id) || !strings.Contains(report.String(), tt.want) {
				t.Errorf("audit after tampering = %v\n%s\nwant a failure naming %s %s: %s", err, report.String(), tt.table, id, tt.want)
			}
			restore(t, s, tt.table, id)
		})
	}
}

// restore puts back a tampered row from the events by rebuilding its table.
func restore(t *testing.T, s *service, table, id string) {
	t.Helper()
	if err := run(context.Background(), []string{"projections", "rebuild", table}, s.env(), io.Discard, io.Discard); err != nil {
		t.Fatalf("restore %s by rebuild: %v", table, err)
	}
}

func TestACursorIssuedBeforeARebuildContinuesAfterIt(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	for i := range 7 {
		s.createCompany(t, tok, fmt.Sprint("cursor-rebuild-", i), minimalCompany)
	}
	all := s.walk(t, "/v1/companies", tok, 100, nil)
	first := s.get(t, "/v1/companies?limit=3", tok).object(t)
	cursor := first["pagination"].(map[string]any)["next_cursor"].(string)
	if err := run(context.Background(), []string{"projections", "rebuild", "companies"}, s.env(), io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	res := s.get(t, "/v1/companies?limit=100&after="+cursor, tok)
	mustStatus(t, res, http.StatusOK)
	var rest []string
	for _, c := range res.object(t)["data"].([]any) {
		rest = append(rest, c.(map[string]any)["id"].(string))
	}
	if strings.Join(rest, ",") != strings.Join(all[3:], ",") {
		t.Fatalf("after the rebuild the old cursor continues with %v, want %v", rest, all[3:])
	}
}

// A rebuild of every projection builds RebuildLanes of them at a time: at
// some moment during it, that many rebuild locks are held at once, and
// never more.
func TestRebuildBuildsProjectionsInLanes(t *testing.T) {
	s := newService(t)
	dataset(t, s)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var keys []int64
	for _, p := range projections.All() {
		keys = append(keys, follow.LockKey("rebuild:"+p.Name()))
	}
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"projections", "rebuild"}, s.env(), io.Discard, io.Discard) }()
	most := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("rebuild: %v", err)
			}
			running = false
		default:
			var held int
			err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted
				AND ((classid::bigint << 32) | objid::bigint) = ANY($1)`, keys).Scan(&held)
			if err != nil {
				t.Fatal(err)
			}
			most = max(most, held)
		}
	}
	if most < 2 || most > RebuildLanes {
		t.Errorf("at most %d rebuilds ran at once, want %d (RebuildLanes)", most, RebuildLanes)
	}
}
