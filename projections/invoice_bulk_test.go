package projections

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// oneByOne hides a projection's ApplyAll: sendEvents then applies each
// event with Apply, as the careful path does.
type oneByOne struct{ Projection }

// applyAll is p's ApplyAll of evs, its drafts copied from copyMin of them
// on.
func applyAll(t *testing.T, p batchApplier, evs []events.RecordedEvent, copyMin int) bulkWrite {
	t.Helper()
	w := bulkWrite{statements: &pgx.Batch{}, copyMin: copyMin}
	if err := p.ApplyAll(evs, &w); err != nil {
		t.Fatal(err)
	}
	return w
}

// writeEachWay writes evs into emptied tables three ways: p's ApplyAll
// with its rows inserted, ApplyAll with them copied, and Apply one event
// at a time. It returns what dump, a query of one text, reads after each.
func writeEachWay(t *testing.T, e env, p Projection, evs []events.RecordedEvent, tables, dump string) map[string]string {
	t.Helper()
	ctx := context.Background()
	ways := map[string]struct {
		p   Projection
		pre *built
	}{
		"ApplyAll, inserted": {p, buildCopying(p, evs, math.MaxInt)},
		"ApplyAll, copied":   {p, buildCopying(p, evs, 1)},
		"Apply":              {oneByOne{p}, nil},
	}
	out := map[string]string{}
	for name, way := range ways {
		if _, err := e.pool.Exec(ctx, `TRUNCATE `+tables); err != nil {
			t.Fatal(err)
		}
		if err := writeBatch(ctx, e.pool, way.p, target{}, evs, way.pre, nil); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var written string
		if err := e.pool.QueryRow(ctx, dump).Scan(&written); err != nil {
			t.Fatal(err)
		}
		out[name] = written
	}
	return out
}

// sameEachWay fails unless every way of writeEachWay wrote what Apply did.
func sameEachWay(t *testing.T, written map[string]string) {
	t.Helper()
	for _, way := range []string{"ApplyAll, inserted", "ApplyAll, copied"} {
		if written[way] != written["Apply"] {
			t.Errorf("%s wrote\n%s\nApply wrote\n%s", way, written[way], written["Apply"])
		}
	}
}

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
	if w := applyAll(t, Invoices{}, evs, math.MaxInt); w.statements.Len() != 2 || len(w.copies) != 0 {
		t.Fatalf("ApplyAll of %d events queued %d statements and %d copies, want 2 (one INSERT, one UPDATE)",
			len(evs), w.statements.Len(), len(w.copies))
	}
	if w := applyAll(t, Invoices{}, evs, 1); w.statements.Len() != 1 || len(w.copies) != 1 {
		t.Fatalf("ApplyAll of %d events, copying, queued %d statements and %d copies, want one UPDATE and one copy",
			len(evs), w.statements.Len(), len(w.copies))
	}
	tables := writeEachWay(t, e, Invoices{}, evs, "invoices", `SELECT json_agg(i ORDER BY id)::text FROM invoices i`)
	if n := strings.Count(tables["Apply"], `"status":"issued"`) + strings.Count(tables["Apply"], `"status":"void"`); n != 3 {
		t.Fatalf("setup: %d issued or void rows, want 3: %s", n, tables["Apply"])
	}
	if n := strings.Count(tables["Apply"], `"currency":"CHF"`); n != 5 {
		t.Fatalf("setup: %d revised rows, want 5: %s", n, tables["Apply"])
	}
	sameEachWay(t, tables)
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
