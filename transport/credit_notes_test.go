package transport

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

func sampleCreditNote() events.CreditNoteIssued {
	address := events.Address{Line1: "Str 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"}
	return events.CreditNoteIssued{
		CreditNoteID: "c1", InvoiceID: "i1", CompanyID: "co", AccountID: "acct", CustomerID: "cu",
		InvoiceNumber: "INV-000001", InvoiceIssueDate: "2026-01-02", Number: "CN-000001", Sequence: 1,
		IssueDate: "2026-02-01", Reason: "Doppelt <&>", ExternalReference: "erp-1", CustomerName: "Globex",
		Customer: events.CustomerSnapshot{ID: "cu", Name: "Globex", Address: address, Identifiers: []events.Identifier{}, SchemaVersion: 1},
		Issuer:   events.IssuerSnapshot{ID: "co", LegalName: "Acme", Address: address, Identifiers: []events.Identifier{}, SchemaVersion: 1},
		Currency: "EUR", Language: "de", Lines: []events.InvoiceLine{{Position: 1, Description: "Work", Quantity: "1",
			UnitCode: "C62", UnitAmountMinor: 100, TaxRateBps: 1900, TaxCategory: "S", NetAmountMinor: 100, TaxAmountMinor: 19, TotalAmountMinor: 119}},
		SubtotalMinor: 100, TaxMinor: 19, TotalMinor: 119,
		DocumentTerms: events.DocumentTerms{BuyerReference: "B-1", DeliveryDate: "2026-01-01"},
		TaxBreakdown:  []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1900, TaxableAmountMinor: 100, TaxAmountMinor: 19}},
		IssuedAt:      time.Date(2026, 2, 1, 9, 0, 0, 123000, time.UTC),
	}
}

// creditNoteAsRead is e as the read model holds it: its documents rendered
// as the projection renders them.
func creditNoteAsRead(t *testing.T, e events.CreditNoteIssued) query.CreditNote {
	doc := events.InvoiceDocumentFields{DocumentTerms: e.DocumentTerms, TaxBreakdown: e.TaxBreakdown}
	return query.CreditNote{
		CreditNoteSummary: query.CreditNoteSummary{ID: e.CreditNoteID, CompanyID: e.CompanyID, InvoiceID: e.InvoiceID,
			InvoiceNumber: e.InvoiceNumber, CustomerID: e.CustomerID, CustomerName: e.CustomerName, Number: e.Number,
			IssueDate: e.IssueDate, Reason: e.Reason, ExternalReference: e.ExternalReference, Currency: e.Currency,
			SubtotalMinor: e.SubtotalMinor, TaxMinor: e.TaxMinor, TotalMinor: e.TotalMinor, IssuedAt: e.IssuedAt},
		InvoiceIssueDate: e.InvoiceIssueDate, Language: e.Language, Sequence: int64(e.Sequence),
		Customer: encoded(t, e.Customer), Issuer: encoded(t, e.Issuer), Lines: encoded(t, e.Lines), Document: encoded(t, doc),
	}
}

// A credit note renders the same from its event (what issuing it answers)
// and from the read model (what a get answers), in the contract's member
// order; and the read model's decodes back into the event einvoice maps.
func TestACreditNoteRendersTheSameFromItsEventAndFromTheReadModel(t *testing.T) {
	e := sampleCreditNote()
	q := creditNoteAsRead(t, e)
	fromQuery, err := creditNoteFromQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	got, want := encoded(t, fromQuery), encoded(t, creditNoteFromEvent(e))
	if !bytes.Equal(got, want) {
		t.Fatalf("from the read model\n%s\nfrom the event\n%s", got, want)
	}
	order := []string{"id", "company_id", "invoice_id", "invoice_number", "invoice_issue_date", "customer_id",
		"customer_name", "number", "issue_date", "reason", "external_reference", "currency", "language", "customer",
		"issuer", "lines", "subtotal_minor", "tax_minor", "total_minor", "buyer_reference", "delivery_date",
		"tax_breakdown", "issued_at"}
	checkOrder(t, want, order)
	back, err := eventCreditNote(q)
	if err != nil {
		t.Fatal(err)
	}
	e.AccountID = "" // the read model keeps none; the document needs none
	if !reflect.DeepEqual(back, e) {
		t.Fatalf("eventCreditNote\n%+v\nwant\n%+v", back, e)
	}
	summary := encoded(t, creditNoteSummaryFromQuery(q.CreditNoteSummary))
	checkOrder(t, summary, []string{"id", "company_id", "invoice_id", "invoice_number", "customer_id", "customer_name",
		"number", "issue_date", "reason", "external_reference", "currency", "subtotal_minor", "tax_minor", "total_minor", "issued_at"})
}

// checkOrder checks that body's top-level members are exactly names, in
// that order.
func checkOrder(t *testing.T, body []byte, names []string) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	var got []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Fatalf("members %v, want %v", got, names)
	}
}

// An invoice with payments and a credit note renders the same settlement
// and payments from its events (a write's answer) and from the read model
// (a get's), the settlement members right after total_minor and the
// payments last; and eventInvoice gives einvoice the paid amount.
func TestAnInvoiceRendersItsSettlementAndPaymentsFromEventsAndFromTheReadModel(t *testing.T) {
	at := time.Date(2026, 2, 1, 9, 0, 0, 0, time.UTC)
	inv := events.Invoice{Status: events.StatusIssued, Version: 5, UpdatedAt: at}
	inv.TotalMinor, inv.CreatedAt = 1000, at
	inv.CreditNotes = []events.CreditNoteIssued{{TotalMinor: 100}}
	inv.Payments = []events.Payment{
		{PaymentRecorded: events.PaymentRecorded{PaymentID: "p1", AmountMinor: 300, PaidOn: "2026-01-20", Method: "card", RecordedAt: at},
			Reversal: &events.PaymentReversed{PaymentID: "p1", ReversedAt: at.Add(time.Hour)}},
		{PaymentRecorded: events.PaymentRecorded{PaymentID: "p2", AmountMinor: 400, PaidOn: "2026-01-21", Reference: "RF", RecordedAt: at}},
	}
	fromState := invoiceFromState(inv)
	s := inv.Settlement()
	if s.AmountCreditedMinor != 100 || s.AmountPaidMinor != 400 || s.AmountDueMinor != 500 || s.PaymentStatus != events.PaymentPartiallyPaid {
		t.Fatalf("setup: settlement %+v", s)
	}
	reversedAt := at.Add(time.Hour)
	q := query.Invoice{
		InvoiceSummary: query.InvoiceSummary{Status: events.StatusIssued, Version: 5, CreatedAt: at, UpdatedAt: at, TotalMinor: 1000,
			AmountCreditedMinor: 100, AmountPaidMinor: 400, AmountDueMinor: 500, PaymentStatus: events.PaymentPartiallyPaid},
		Payments: []query.Payment{
			{ID: "p1", AmountMinor: 300, PaidOn: "2026-01-20", Method: "card", RecordedAt: at, ReversedAt: &reversedAt},
			{ID: "p2", AmountMinor: 400, PaidOn: "2026-01-21", Reference: "RF", RecordedAt: at},
		},
	}
	for _, m := range []struct{ name, want string }{
		{"settlement", `"total_minor":1000,"amount_credited_minor":100,"amount_paid_minor":400,"amount_due_minor":500,"amount_refundable_minor":0,"payment_status":"partially_paid","created_at"`},
		{"payments", `"payments":[{"id":"p1","amount_minor":300,"paid_on":"2026-01-20","method":"card","recorded_at":"2026-02-01T09:00:00Z","reversed_at":"2026-02-01T10:00:00Z"},` +
			`{"id":"p2","amount_minor":400,"paid_on":"2026-01-21","reference":"RF","recorded_at":"2026-02-01T09:00:00Z","reversed_at":null}]}`},
	} {
		if body := fromState.appendJSON(nil); !bytes.Contains(body, []byte(m.want)) {
			t.Errorf("%s: %s lacks %s", m.name, body, m.want)
		}
	}
	if _, err := eventInvoice(q); err == nil {
		t.Fatal("eventInvoice decoded an invoice without documents")
	}
	q.Customer, q.Issuer, q.Lines, q.Document = json.RawMessage(`{}`), json.RawMessage(`{}`), json.RawMessage(`[]`), json.RawMessage(`{}`)
	ev, err := eventInvoice(q)
	if err != nil {
		t.Fatal(err)
	}
	if got := ev.Settlement().AmountPaidMinor; got != 400 || !reflect.DeepEqual(paymentsFromState(ev.Payments), paymentsFromState(inv.Payments)) {
		t.Fatalf("eventInvoice: paid %d, payments %+v", got, ev.Payments)
	}
	fromQuery, err := invoiceFromQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromQuery.Payments, fromState.Payments) || fromQuery.PaymentStatus != fromState.PaymentStatus ||
		fromQuery.AmountDueMinor != fromState.AmountDueMinor {
		t.Fatalf("from the read model %+v\nfrom the events %+v", fromQuery, fromState)
	}
}
