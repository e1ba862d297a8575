package projections

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// publicEventRows dumps public_events in position order, every column.
func publicEventRows(t *testing.T, e env) []string {
	t.Helper()
	rows, err := e.pool.Query(context.Background(), `
		SELECT concat_ws(' ', position_hi, position_lo, id, account_id, company_id, resource_id, type, stream_name,
			revision, created_at, version)
		FROM public_events ORDER BY position_hi, position_lo`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var row string
		if err := rows.Scan(&row); err != nil {
			t.Fatal(err)
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPublicEventsIndexPublicEventsOnlyAndARebuildWritesTheSameRows(t *testing.T) {
	e := newEnv(t)
	company := goodCompany("acme")
	companyStream, _, _ := appendEvent(t, e.store, events.KindCompany, events.TypeCompanyCreated, company)
	appendNext(t, e, companyStream, 1, events.TypeCompanyArchived,
		map[string]any{"company_id": company.CompanyID, "account_id": "acme", "archived_at": "2026-11-26T10:00:00Z"})
	customerID := uuid.NewString()
	appendEvent(t, e.store, events.KindCustomer, events.TypeCustomerCreated,
		map[string]any{"customer_id": customerID, "company_id": company.CompanyID, "account_id": "acme"})
	// Bookkeeping: never public.
	appendEvent(t, e.store, events.KindNumbering, events.TypeInvoiceNumberAssigned,
		map[string]any{"company_id": company.CompanyID, "account_id": "acme", "sequence": 1})
	invoiceID, creditNoteID := uuid.NewString(), uuid.NewString()
	invoiceStream, _, _ := appendEvent(t, e.store, events.KindInvoice, events.TypeInvoiceDrafted,
		map[string]any{"invoice_id": invoiceID, "company_id": company.CompanyID, "account_id": "acme", "customer_id": customerID})
	appendNext(t, e, invoiceStream, 1, events.TypeCreditNoteIssued,
		map[string]any{"credit_note_id": creditNoteID, "invoice_id": invoiceID, "company_id": company.CompanyID, "account_id": "acme"})
	last := eventstoretestLast(t, e)
	runAll(t, e, last)

	before := publicEventRows(t, e)
	want := []struct{ typ, resource, stream, revision string }{
		{"company.created", company.CompanyID, companyStream, "0"},
		{"company.archived", company.CompanyID, companyStream, "1"},
		{"customer.created", customerID, "customer-", "0"},
		{"invoice.drafted", invoiceID, invoiceStream, "0"},
		{"credit_note.issued", creditNoteID, invoiceStream, "1"},
	}
	if len(before) != len(want) {
		t.Fatalf("rows:\n%s\nwant %d", strings.Join(before, "\n"), len(want))
	}
	for i, w := range want {
		part := " acme " + company.CompanyID + " " + w.resource + " " + w.typ + " " + w.stream
		if !strings.Contains(before[i], part) || !strings.Contains(before[i], " "+w.revision+" ") {
			t.Errorf("row %d: %s\nwant it to hold %q and revision %s", i, before[i], part, w.revision)
		}
	}

	r := &Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet}
	if err := r.Rebuild(context.Background(), PublicEvents{}); err != nil {
		t.Fatal(err)
	}
	if after := publicEventRows(t, e); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("after the rebuild:\n%s\nbefore:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}

	// ApplyAll (one INSERT or one copy for the batch) writes what Apply,
	// one event at a time, writes.
	evs, err := e.store.ReadAll(context.Background(), events.Position{}, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if w := applyAll(t, PublicEvents{}, evs, math.MaxInt); w.statements.Len() != 1 || len(w.copies) != 0 {
		t.Fatalf("ApplyAll of %d events queued %d statements and %d copies, want one INSERT", len(evs), w.statements.Len(), len(w.copies))
	}
	if w := applyAll(t, PublicEvents{}, evs, 1); w.statements.Len() != 0 || len(w.copies) != 1 {
		t.Fatalf("ApplyAll of %d events, copying, queued %d statements and %d copies, want one copy", len(evs), w.statements.Len(), len(w.copies))
	}
	const dump = `SELECT json_agg(p ORDER BY position_hi, position_lo)::text FROM public_events p`
	var runner string
	if err := e.pool.QueryRow(context.Background(), dump).Scan(&runner); err != nil {
		t.Fatal(err)
	}
	written := writeEachWay(t, e, PublicEvents{}, evs, "public_events", dump)
	sameEachWay(t, written)
	if written["Apply"] != runner {
		t.Errorf("Apply wrote:\n%s\nthe runner wrote:\n%s", written["Apply"], runner)
	}
}

// eventstoretestLast is the position of the store's last event.
func eventstoretestLast(t *testing.T, e env) events.Position {
	t.Helper()
	evs, err := e.store.ReadAll(context.Background(), events.Position{}, 1000)
	if err != nil || len(evs) == 0 {
		t.Fatalf("read all: %d events, %v", len(evs), err)
	}
	return evs[len(evs)-1].Position
}
