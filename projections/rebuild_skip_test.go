package projections

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// payloadCounter is a store that counts the payloads of each type its
// reads returned.
type payloadCounter struct {
	events.Store
	skipping events.SkippingReader
	mu       sync.Mutex
	payloads map[string]int
}

func (c *payloadCounter) count(page []events.RecordedEvent) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ev := range page {
		if ev.Data != nil {
			c.payloads[ev.Type]++
		}
	}
}

func (c *payloadCounter) ReadAll(ctx context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	page, err := c.Store.ReadAll(ctx, from, max)
	c.count(page)
	return page, err
}

// readAllOnly is a store without ReadAllOf.
type readAllOnly struct{ events.Store }

func (c *payloadCounter) ReadAllOf(ctx context.Context, from events.Position, max int, payloadsOf ...string) ([]events.RecordedEvent, int, error) {
	page, scanned, err := c.skipping.ReadAllOf(ctx, from, max, payloadsOf...)
	c.count(page)
	return page, scanned, err
}

// companyRows dumps the companies read model, every column.
func companyRows(t *testing.T, e env) string {
	t.Helper()
	var rows string
	err := e.pool.QueryRow(context.Background(),
		`SELECT coalesce(string_agg(c::text, E'\n' ORDER BY id), '') FROM companies c`).Scan(&rows)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// A rebuild of a projection that handles few of the log's types reads
// only their payloads (where the store can leave the others out), and
// still reaches the end of the log and writes every row: companies behind
// runs of invoices longer than a page, and the log ending with invoices,
// rebuilt in pages of 10, give the rows a rebuild reading every payload
// gives, and its progress counts every event of the log.
func TestARebuildReadsOnlyThePayloadsItsProjectionHandles(t *testing.T) {
	e := newEnv(t)
	var want []string
	total := 0
	for i := range 4 {
		company := goodCompany("acme")
		appendEvent(t, e.store, events.KindCompany, events.TypeCompanyCreated, company)
		want = append(want, company.CompanyID)
		for range 5 + 10*i {
			appendEvent(t, e.store, events.KindInvoice, events.TypeInvoiceDrafted,
				map[string]any{"invoice_id": uuid.NewString(), "company_id": company.CompanyID, "account_id": "acme"})
		}
		total += 1 + 5 + 10*i
	}
	rebuild := func(store events.Store) (applied int64) {
		t.Helper()
		r := &Rebuilder{Store: store, Pool: e.pool, Logger: quiet, BatchSize: 10,
			OnBatch: func(p Progress) { applied = p.Applied }}
		if err := r.Rebuild(context.Background(), Companies{}); err != nil {
			t.Fatal(err)
		}
		return applied
	}
	every := &payloadCounter{Store: e.store, skipping: e.store, payloads: map[string]int{}}
	if applied := rebuild(readAllOnly{every}); applied != int64(total) {
		t.Errorf("reading every payload: progress at %d events, want %d", applied, total)
	}
	rowsReadingEvery := companyRows(t, e)
	skipping := &payloadCounter{Store: e.store, skipping: e.store, payloads: map[string]int{}}
	if applied := rebuild(skipping); applied != int64(total) {
		t.Errorf("skipping: progress at %d events, want %d", applied, total)
	}
	if got := companyRows(t, e); got != rowsReadingEvery {
		t.Errorf("rebuilt reading only companies' payloads:\n%s\nreading every payload:\n%s", got, rowsReadingEvery)
	}
	for _, id := range want {
		if !strings.Contains(rowsReadingEvery, id) {
			t.Errorf("company %s missing from the rebuilt rows:\n%s", id, rowsReadingEvery)
		}
	}
	if got, want := fmt.Sprint(skipping.payloads), fmt.Sprintf("map[%s:4]", events.TypeCompanyCreated); got != want || len(every.payloads) != 2 {
		t.Errorf("skipping read the payloads %s, want the 4 companies' only (reading every payload: %v)", got, every.payloads)
	}
}
