package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// oneByOne hides a projection's ApplyAll: sendEvents then applies each
// event with Apply, as the careful path does.
type oneByOne struct{ Projection }

// ApplyAll (one multi-row INSERT of every draft, then one UPDATE of every
// change) writes exactly the rows that Apply, one event at a time, writes:
// same events, same table; drafts and changes interleaved, invoices revised
// and issued, one revised, issued with new dates and voided in the same
// batch.
func TestInvoicesApplyAllWritesWhatApplyWrites(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	created := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	for i := range 12 {
		d := draftedInvoice(created.Add(time.Duration(i) * time.Minute))
		if i%3 == 0 {
			d.ExternalReference, d.Notes, d.DueDate = fmt.Sprint("ref-", i), "Danke", ""
		}
		stream, _, _ := appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, d)
		rev := uint64(1)
		if i%3 == 1 || i == 5 { // revised, then maybe issued: both fold into one change
			appendNext(t, e, stream, rev, events.TypeInvoiceRevised, revisionOf(d, created.Add(time.Hour)))
			rev++
		}
		if i%4 == 1 { // an update between drafts ends a run of them
			issued := events.InvoiceIssued{InvoiceID: d.InvoiceID, CompanyID: d.CompanyID,
				AccountID: d.AccountID, Number: fmt.Sprintf("INV-%06d", i), Sequence: uint64(i), IssuedAt: created}
			if i == 5 {
				issued.IssueDate, issued.DueDate = "2026-06-01", "2026-06-15"
			}
			appendNext(t, e, stream, rev, events.TypeInvoiceIssued, issued)
			rev++
		}
		if i == 5 {
			appendNext(t, e, stream, rev, events.TypeInvoiceVoided, events.InvoiceVoided{InvoiceID: d.InvoiceID, CompanyID: d.CompanyID,
				AccountID: d.AccountID, Reason: "Doppelt", VoidedAt: created})
		}
	}
	evs, err := e.store.ReadAll(ctx, events.Position{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var b pgx.Batch
	if err := (Invoices{}).ApplyAll(evs, &b); err != nil {
		t.Fatal(err)
	}
	if b.Len() != 2 {
		t.Fatalf("ApplyAll of %d events queued %d statements, want 2 (one INSERT, one UPDATE)", len(evs), b.Len())
	}
	tables := map[string]string{}
	for name, p := range map[string]Projection{"ApplyAll": Invoices{}, "Apply": oneByOne{Invoices{}}} {
		if _, err := e.pool.Exec(ctx, `TRUNCATE invoices`); err != nil {
			t.Fatal(err)
		}
		if err := writeBatch(ctx, e.pool, p, target{}, evs, nil, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var table string
		if err := e.pool.QueryRow(ctx, `SELECT json_agg(i ORDER BY id)::text FROM invoices i`).Scan(&table); err != nil {
			t.Fatal(err)
		}
		tables[name] = table
	}
	if n := strings.Count(tables["Apply"], `"status":"issued"`) + strings.Count(tables["Apply"], `"status":"void"`); n != 3 {
		t.Fatalf("setup: %d issued or void rows, want 3: %s", n, tables["Apply"])
	}
	if n := strings.Count(tables["Apply"], `"currency":"CHF"`); n != 5 {
		t.Fatalf("setup: %d revised rows, want 5: %s", n, tables["Apply"])
	}
	if tables["ApplyAll"] != tables["Apply"] {
		t.Fatalf("ApplyAll wrote\n%s\nApply wrote\n%s", tables["ApplyAll"], tables["Apply"])
	}
}

// appendNext appends an event of typ at revision rev (> 0) of stream.
func appendNext(t *testing.T, e env, stream string, rev uint64, typ string, payload any) {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	_, err = e.store.Append(context.Background(), stream, events.AtRevision(rev-1), events.EventData{
		ID: events.EventID(stream, rev), Type: typ, Data: data, Metadata: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
}
