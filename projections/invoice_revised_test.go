package projections

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// revisionOf is a revision of d to another customer, with other lines and
// amounts and no optional field: whatever a revision can replace, it does.
func revisionOf(d events.InvoiceDrafted, at time.Time) events.InvoiceRevised {
	customerID := uuid.NewString()
	terms := 14
	return events.InvoiceRevised{
		InvoiceID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID, CustomerID: customerID,
		CustomerName: "Initech AG",
		Customer: events.CustomerSnapshot{ID: customerID, Name: "Initech AG", Address: testAddress,
			Identifiers: []events.Identifier{}, SchemaVersion: events.SnapshotSchemaVersion},
		Currency: "CHF", Language: "fr", IssueDate: "2026-04-01", DueDate: "2026-04-15", PaymentTermsDays: &terms,
		Lines: []events.InvoiceLine{{Position: 1, Description: "Audit", Quantity: "3", UnitCode: "C62", UnitAmountMinor: 5,
			TaxRateBps: 800, TaxCategory: "S", NetAmountMinor: 23, TaxAmountMinor: 29, TotalAmountMinor: 31}},
		SubtotalMinor: 37, TaxMinor: 41, TotalMinor: 43,
		TaxBreakdown: []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 800, TaxableAmountMinor: 47, TaxAmountMinor: 53}},
		RevisedAt:    at, Changed: []string{"currency", "customer_id", "issue_date", "language", "lines"},
	}
}

// An InvoiceRevised replaces the row's whole draft content, optional
// columns set to NULL included, and keeps the issuer; an InvoiceIssued
// with dates moves them. Version and updated_at are the last event's.
func TestInvoiceRevisedAndIssuedWithDatesOverwriteTheRow(t *testing.T) {
	e := newEnv(t)
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	revisedAt, issuedAt := created.Add(time.Hour), created.Add(2*time.Hour)
	d := draftedInvoice(created)
	stream, draftData, _ := appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, d)
	r := revisionOf(d, revisedAt)
	revData, _ := appendRevision(t, e, stream, 1, events.TypeInvoiceRevised, r)
	issued := events.InvoiceIssued{InvoiceID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID,
		Number: "INV-000001", Sequence: 1, IssuedAt: issuedAt, IssueDate: "2026-05-02", DueDate: "2026-05-16"}
	_, last := appendRevision(t, e, stream, 2, events.TypeInvoiceIssued, issued)
	runAll(t, e, last)

	want := invoiceRow{
		ID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID, CustomerID: r.CustomerID,
		Stream: stream, CustomerName: r.CustomerName, Customer: eventMember(t, revData, "customer"),
		Issuer: eventMember(t, draftData, "issuer"), Lines: eventMember(t, revData, "lines"), Currency: "CHF",
		Language: "fr", IssueDate: "2026-05-02", Status: "issued", DueDate: some("2026-05-16"),
		Number: some("INV-000001"), IssuedAt: &issuedAt,
		SubtotalMinor: 37, TaxMinor: 41, TotalMinor: 43,
		CreatedAt: created, UpdatedAt: issuedAt, Version: 3, Document: documentMembers(t, revData),
	}
	got := readInvoice(t, e.pool, d.InvoiceID)
	if got.IssuedAt != nil {
		got.IssuedAt = some(got.IssuedAt.UTC())
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("invoices row after a revision and an issue with dates:\nwant %+v\ngot  %+v", want, got)
	}
}

// appendRevision appends an event of typ at revision rev (> 0) of stream and
// returns its data as stored and its global position.
func appendRevision(t *testing.T, e env, stream string, rev uint64, typ string, payload any) ([]byte, events.Position) {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.store.Append(context.Background(), stream, events.AtRevision(rev-1), events.EventData{
		ID: events.EventID(stream, rev), Type: typ, Data: data, Metadata: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	return data, res.Position
}
