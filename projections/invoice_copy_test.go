package projections

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// appendDrafts appends n drafts and returns the log's events, in order.
func appendDrafts(t *testing.T, e env, n int) []events.RecordedEvent {
	t.Helper()
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range n {
		appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, draftedInvoice(created.Add(time.Duration(i)*time.Second)))
	}
	evs, err := e.store.ReadAll(context.Background(), events.Position{}, n+1)
	if err != nil || len(evs) != n {
		t.Fatalf("setup: read %d events, %v", len(evs), err)
	}
	return evs
}

// invoiceCount is the number of rows in invoices.
func invoiceCount(t *testing.T, e env) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM invoices`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// mustCopy fails unless a batch of evs copies its drafts, and returns the
// batch's writes.
func mustCopy(t *testing.T, evs []events.RecordedEvent) *built {
	t.Helper()
	pre := build(Invoices{}, evs)
	if len(pre.copies) != 1 {
		t.Fatalf("setup: a batch of %d drafts made %d copies, want 1 (copyMinRows %d)", len(evs), len(pre.copies), copyMinRows)
	}
	return pre
}

// A batch that copies its drafts writes them in the transaction of its
// compare-and-swap: behind a moved checkpoint it writes nothing.
func TestACopiedBatchBehindAMovedCheckpointWritesNothing(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	evs := appendDrafts(t, e, copyMinRows+1)
	mustCopy(t, evs[1:])
	if _, err := loadCheckpoint(ctx, e.pool, "invoices"); err != nil {
		t.Fatal(err)
	}
	q, err := loadQuarantine(ctx, e.pool, "invoices")
	if err != nil {
		t.Fatal(err)
	}
	stale := evs[0].Position // the checkpoint is at the start, not here
	_, _, err = applyBatch(ctx, e.pool, Invoices{}, target{checkpoint: "invoices"}, q, stale, evs[1:], nil)
	if !errors.Is(err, errCheckpointMoved) {
		t.Fatalf("applyBatch from a stale checkpoint = %v, want errCheckpointMoved", err)
	}
	if n := invoiceCount(t, e); n != 0 {
		t.Fatalf("%d rows copied by a batch whose compare-and-swap failed, want 0", n)
	}
	if _, _, err := applyBatch(ctx, e.pool, Invoices{}, target{checkpoint: "invoices"}, q, events.Position{}, evs, nil); err != nil {
		t.Fatal(err)
	}
	if n, cp := invoiceCount(t, e), checkpointOf(t, e, "invoices"); n != len(evs) || cp != evs[len(evs)-1].Position {
		t.Fatalf("from the right checkpoint: %d rows, checkpoint %s; want %d at %s", n, cp, len(evs), evs[len(evs)-1].Position)
	}
}

// A copy has no ON CONFLICT: a row already there fails it, and the batch
// is written again carefully, whose INSERTs skip that row as the batch's
// INSERT would have. Nothing is quarantined, nothing is lost, and the row
// already there is kept as it was.
func TestARowAlreadyThereFailsTheCopyAndTheCarefulPathSkipsIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	evs := appendDrafts(t, e, copyMinRows)
	mustCopy(t, evs)
	if err := writeBatch(ctx, e.pool, Invoices{}, target{}, evs[7:8], nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `UPDATE invoices SET notes = 'there before'`); err != nil {
		t.Fatal(err)
	}
	if _, err := loadCheckpoint(ctx, e.pool, "invoices"); err != nil {
		t.Fatal(err)
	}
	q, err := loadQuarantine(ctx, e.pool, "invoices")
	if err != nil {
		t.Fatal(err)
	}
	_, set, err := applyBatch(ctx, e.pool, Invoices{}, target{checkpoint: "invoices"}, q, events.Position{}, evs, nil)
	if err != nil || len(set) != 0 {
		t.Fatalf("applyBatch = %d quarantined, %v; want none, nil", len(set), err)
	}
	var n, before int
	err = e.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE notes = 'there before') FROM invoices`).Scan(&n, &before)
	if err != nil {
		t.Fatal(err)
	}
	if n != len(evs) || before != 1 {
		t.Fatalf("%d rows, %d of them as they were before; want %d, 1", n, before, len(evs))
	}
}

// A copy sends ids and dates parsed by the service; an id or a date in
// another form than the service writes goes to the server's casts, in an
// INSERT, which keeps what the server accepts and refuses what it refuses
// (a year 0), as before there were copies. An upper-case id is copied: the
// server reads it as the same UUID.
func TestDraftsNotInTheServicesFormAreInsertedNotCopied(t *testing.T) {
	id := uuid.NewString()
	for _, tc := range []struct {
		name   string
		change func(d *events.InvoiceDrafted)
		copied bool
	}{
		{"upper-case id", func(d *events.InvoiceDrafted) { d.InvoiceID = strings.ToUpper(id) }, true},
		{"id that is no UUID", func(d *events.InvoiceDrafted) { d.InvoiceID = "z" + id[1:] }, false},
		{"company id in braces", func(d *events.InvoiceDrafted) { d.CompanyID = "{" + id + "}" }, false},
		{"customer id without hyphens", func(d *events.InvoiceDrafted) { d.CustomerID = strings.ReplaceAll(id, "-", "") }, false},
		{"issue date without leading zeros", func(d *events.InvoiceDrafted) { d.IssueDate = "2026-3-1" }, false},
		{"due date in year 0", func(d *events.InvoiceDrafted) { d.DueDate = "0000-12-31" }, false},
		{"due date past 9999", func(d *events.InvoiceDrafted) { d.DueDate = "10000-01-01" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
			evs := make([]events.RecordedEvent, 3)
			for i := range evs {
				d := draftedInvoice(created)
				if i == 1 {
					tc.change(&d)
				}
				evs[i] = recordedDraft(t, d, uint64(i))
			}
			if w := applyAll(t, Invoices{}, evs, 1); (len(w.copies) == 1) != tc.copied || len(w.copies)+w.statements.Len() != 1 {
				t.Fatalf("%d copies and %d statements, want copied %v (one copy, or one INSERT)", len(w.copies), w.statements.Len(), tc.copied)
			}
			evs[1] = recordedDraft(t, draftedInvoice(created), 1)
			if w := applyAll(t, Invoices{}, evs, 1); len(w.copies) != 1 || w.statements.Len() != 0 {
				t.Fatalf("in the service's form: %d copies and %d statements, want one copy", len(w.copies), w.statements.Len())
			}
		})
	}
}

// recordedDraft is d as the log's event at position lo.
func recordedDraft(t *testing.T, d events.InvoiceDrafted, lo uint64) events.RecordedEvent {
	t.Helper()
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	stream := "invoice-" + uuid.NewString()
	return events.RecordedEvent{Stream: stream, Type: events.TypeInvoiceDrafted, Data: data, Metadata: []byte(`{}`),
		ID: events.EventID(stream, 0), Position: events.NewPosition(1, lo+1), RecordedAt: d.CreatedAt}
}

// A rebuild copies into its shadow tables, not the live ones: the
// rebuilt invoices and public events are what the live runner wrote. The
// live tables are emptied first, so that a copy into them would succeed
// and leave the shadow tables, which the rebuild swaps in, empty.
func TestARebuildCopiesIntoItsOwnTables(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	evs := appendDrafts(t, e, copyMinRows+5)
	mustCopy(t, evs)
	runAll(t, e, evs[len(evs)-1].Position)
	const dump = `SELECT coalesce((SELECT json_agg(i ORDER BY id) FROM invoices i)::text, 'no invoices') ||
		coalesce((SELECT json_agg(p ORDER BY position_hi, position_lo) FROM public_events p)::text, ', no public events')`
	var live string
	if err := e.pool.QueryRow(ctx, dump).Scan(&live); err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, `TRUNCATE invoices, public_events`); err != nil {
		t.Fatal(err)
	}
	r := &Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet}
	for _, p := range []Projection{Invoices{}, PublicEvents{}} {
		if pre := build(p, evs); len(pre.copies) != 1 {
			t.Fatalf("setup: a rebuild of %s from %d drafts made %d copies, want 1", p.Name(), len(evs), len(pre.copies))
		}
		if err := r.Rebuild(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	var rebuilt string
	if err := e.pool.QueryRow(ctx, dump).Scan(&rebuilt); err != nil {
		t.Fatal(err)
	}
	if rebuilt != live {
		t.Fatalf("rebuilt:\n%.600s\nthe runner wrote:\n%.600s", rebuilt, live)
	}
	if n := invoiceCount(t, e); n != len(evs) {
		t.Fatalf("%d invoices after the rebuilds, want %d", n, len(evs))
	}
}

// Each COPY outside a transaction would commit on its own, ahead of the
// checkpoint's compare-and-swap: copyRows refuses a bare connection and
// copies nothing.
func TestACopyOutsideATransactionIsRefused(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	evs := appendDrafts(t, e, copyMinRows)
	pre := mustCopy(t, evs)
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if err := copyRows(ctx, conn, pre.copies); !errors.Is(err, errCopyOutsideTransaction) {
		t.Fatalf("copyRows on a connection = %v, want errCopyOutsideTransaction", err)
	}
	if n := invoiceCount(t, e); n != 0 {
		t.Fatalf("%d rows copied outside a transaction, want 0", n)
	}
}
