package query

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// creditNote projects a credit note of inv, issued now.
func (f *fixture) creditNote(inv events.InvoiceDrafted, ref string) events.CreditNoteIssued {
	f.t.Helper()
	f.n++
	c := events.CreditNoteIssued{
		CreditNoteID: uuid.NewString(), InvoiceID: inv.InvoiceID, CompanyID: inv.CompanyID, AccountID: inv.AccountID,
		CustomerID: inv.CustomerID, InvoiceNumber: "INV-000001", InvoiceIssueDate: inv.IssueDate,
		Number: fmt.Sprintf("CN-%06d", f.n), Sequence: uint64(f.n), IssueDate: "2026-02-01",
		Reason: "Zwei Stunden\ndoppelt <&>", ExternalReference: ref, CustomerName: inv.CustomerName,
		Customer: inv.Customer, Issuer: inv.Issuer, Currency: inv.Currency, Language: inv.Language, Lines: inv.Lines,
		SubtotalMinor: inv.SubtotalMinor, TaxMinor: inv.TaxMinor, TotalMinor: inv.TotalMinor,
		DocumentTerms: events.DocumentTerms{BuyerReference: "B-1"},
		TaxBreakdown:  []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1900, TaxableAmountMinor: 1502, TaxAmountMinor: 285}},
		IssuedAt:      f.now(),
	}
	f.apply(projections.CreditNotes{}, events.TypeCreditNoteIssued, c)
	return c
}

func (s *Store) creditNoteList(account, company string, f CreditNoteFilter) list {
	return func(p PageRequest) ([]string, string, error) {
		page, err := s.CreditNotes(context.Background(), account, company, f, p)
		return ids(page.Items, func(c CreditNoteSummary) string { return c.ID }), page.NextCursor, err
	}
}

// A credit-note list holds the company's credit notes of its filters once,
// in the order issued, page after page; never another company's or
// account's; and its cursor is its own.
func TestCreditNoteListsHoldExactlyTheirRowsOnceInOrder(t *testing.T) {
	f := newFixture(t)
	a, b := uuid.NewString(), uuid.NewString()
	x, y := uuid.NewString(), uuid.NewString()
	i1, i2 := f.invoice("acme", a, x, ""), f.invoice("acme", a, y, "")
	other := f.invoice("acme", b, x, "")
	foreign := f.invoice("evil", a, x, "") // another account, the same company id
	type cn struct{ id, invoice, customer, ref string }
	var all []cn
	add := func(inv events.InvoiceDrafted, ref string) {
		c := f.creditNote(inv, ref)
		all = append(all, cn{c.CreditNoteID, c.InvoiceID, c.CustomerID, ref})
	}
	for i := range 3 {
		add(i1, "")
		add(i2, map[bool]string{true: "erp-1"}[i == 1])
		add(other, "erp-1")
		add(foreign, "erp-1")
	}
	add(i1, "erp-1")
	want := func(keep func(cn) bool) []string {
		var out []string
		for _, c := range all {
			if c.invoice != other.InvoiceID && c.invoice != foreign.InvoiceID && keep(c) {
				out = append(out, c.id)
			}
		}
		return out
	}
	for name, tt := range map[string]struct {
		f    CreditNoteFilter
		keep func(cn) bool
	}{
		"the company's":      {CreditNoteFilter{}, func(cn) bool { return true }},
		"of an invoice":      {CreditNoteFilter{InvoiceID: i1.InvoiceID}, func(c cn) bool { return c.invoice == i1.InvoiceID }},
		"of a customer":      {CreditNoteFilter{CustomerID: y}, func(c cn) bool { return c.customer == y }},
		"by reference":       {CreditNoteFilter{ExternalReference: "erp-1"}, func(c cn) bool { return c.ref == "erp-1" }},
		"invoice, reference": {CreditNoteFilter{InvoiceID: i2.InvoiceID, ExternalReference: "erp-1"}, func(c cn) bool { return c.invoice == i2.InvoiceID && c.ref == "erp-1" }},
		"nothing":            {CreditNoteFilter{InvoiceID: i1.InvoiceID, CustomerID: y}, func(cn) bool { return false }},
	} {
		for _, limit := range []int{1, 2, MaxLimit} {
			if got, w := walk(t, f.store.creditNoteList("acme", a, tt.f), limit), want(tt.keep); !slices.Equal(got, w) {
				t.Errorf("%s, limit %d: %v, want %v", name, limit, got, w)
			}
		}
	}
	page, err := f.store.CreditNotes(context.Background(), "acme", a, CreditNoteFilter{}, PageRequest{Limit: 1})
	if err != nil || page.NextCursor == "" {
		t.Fatalf("first page: %v, %v", page, err)
	}
	_, err = f.store.CreditNotes(context.Background(), "acme", a, CreditNoteFilter{InvoiceID: i1.InvoiceID}, PageRequest{Limit: 1, After: page.NextCursor})
	if !errors.Is(err, ErrInvalidCursor) {
		t.Errorf("another filter's cursor: %v, want ErrInvalidCursor", err)
	}
}

// A credit note reads back every column, by get and in its list, decoded
// from the wire as pgx would scan it; and only in its account and company.
func TestGetAndListReadBackEveryColumnOfACreditNote(t *testing.T) {
	f := newFixture(t)
	inv := f.invoice("acme", uuid.NewString(), uuid.NewString(), "")
	c := f.creditNote(inv, "erp-9")
	ctx := context.Background()
	got, err := f.store.CreditNote(ctx, "acme", c.CompanyID, c.CreditNoteID)
	if err != nil {
		t.Fatal(err)
	}
	got.IssuedAt = got.IssuedAt.UTC()
	want := CreditNote{
		CreditNoteSummary: CreditNoteSummary{ID: c.CreditNoteID, CompanyID: c.CompanyID, InvoiceID: c.InvoiceID,
			InvoiceNumber: c.InvoiceNumber, CustomerID: c.CustomerID, CustomerName: c.CustomerName, Number: c.Number,
			IssueDate: c.IssueDate, Reason: c.Reason, ExternalReference: "erp-9", Currency: c.Currency,
			SubtotalMinor: c.SubtotalMinor, TaxMinor: c.TaxMinor, TotalMinor: c.TotalMinor, IssuedAt: c.IssuedAt},
		InvoiceIssueDate: c.InvoiceIssueDate, Language: c.Language, Sequence: int64(c.Sequence),
		Customer: rendered(t, c.Customer), Issuer: rendered(t, c.Issuer), Lines: rendered(t, asRead(t, inv).Lines),
		Document: rendered(t, events.InvoiceDocumentFields{DocumentTerms: c.DocumentTerms, TaxBreakdown: c.TaxBreakdown}),
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CreditNote:\n%+v\nwant\n%+v", got, want)
	}
	page, err := f.store.CreditNotes(ctx, "acme", c.CompanyID, CreditNoteFilter{}, PageRequest{Limit: 10})
	if err != nil || len(page.Items) != 1 {
		t.Fatalf("list: %v, %v", page, err)
	}
	page.Items[0].IssuedAt = page.Items[0].IssuedAt.UTC()
	if page.Items[0] != want.CreditNoteSummary {
		t.Fatalf("summary %+v, want %+v", page.Items[0], want.CreditNoteSummary)
	}
	for name, args := range map[string][3]string{
		"another account": {"evil", c.CompanyID, c.CreditNoteID}, "another company": {"acme", uuid.NewString(), c.CreditNoteID},
		"no uuid": {"acme", c.CompanyID, "cn-1"}, "unknown": {"acme", c.CompanyID, uuid.NewString()},
	} {
		if _, err := f.store.CreditNote(ctx, args[0], args[1], args[2]); !errors.Is(err, events.ErrNotFound) {
			t.Errorf("%s: %v, want ErrNotFound", name, err)
		}
	}
	decoded, scanned := readBothWays(t, f, creditNoteByID("acme", c.CompanyID, c.CreditNoteID), creditNoteWire, decodeCreditNote, creditNoteTargets)
	if len(decoded) != 1 || !reflect.DeepEqual(decoded, scanned) {
		t.Fatalf("decoded:\n%+v\nscanned:\n%+v", decoded, scanned)
	}
	list := creditNoteList("acme", c.CompanyID, CreditNoteFilter{}).page(rowKey{}, MaxLimit)
	ds, ss := readBothWays(t, f, list, creditNoteSummaryWire, decodeCreditNoteSummary, creditNoteSummaryTargets)
	if len(ds) != 1 || !reflect.DeepEqual(ds, ss) {
		t.Fatalf("decoded:\n%+v\nscanned:\n%+v", ds, ss)
	}
}

// The full invoice lists its payments in the order recorded, a reversed
// one marked; the summaries carry the settlement; and the payment_status
// filter lists an invoice by its current status only.
func TestInvoicePaymentsAndThePaymentStatusFilter(t *testing.T) {
	f := newFixture(t)
	company, customer := uuid.NewString(), uuid.NewString()
	paid, partly, unpaid := f.invoice("acme", company, customer, ""), f.invoice("acme", company, customer, ""), f.invoice("acme", company, customer, "")
	p1, p2, p3 := uuid.NewString(), uuid.NewString(), uuid.NewString()
	at := f.now()
	pay := func(inv events.InvoiceDrafted, id string, amount, paidSoFar int64, method string) {
		f.apply(projections.Invoices{}, events.TypePaymentRecorded, events.PaymentRecorded{PaymentID: id,
			InvoiceID: inv.InvoiceID, CompanyID: company, AccountID: "acme", AmountMinor: amount, PaidOn: "2026-01-20",
			Method: method, Reference: "RF-1", RecordedAt: at,
			Invoice: events.Settle(events.StatusIssued, inv.TotalMinor, 0, paidSoFar)})
	}
	pay(paid, p1, 100, 100, "card")
	pay(paid, p2, paid.TotalMinor, paid.TotalMinor+100, "")
	f.apply(projections.Invoices{}, events.TypePaymentReversed, events.PaymentReversed{PaymentID: p1,
		InvoiceID: paid.InvoiceID, CompanyID: company, AccountID: "acme", ReversedAt: at.Add(time.Minute),
		Invoice: events.Settle(events.StatusIssued, paid.TotalMinor, 0, paid.TotalMinor)})
	pay(partly, p3, 100, 100, "")
	ctx := context.Background()
	inv, err := f.store.Invoice(ctx, "acme", company, paid.InvoiceID)
	if err != nil {
		t.Fatal(err)
	}
	reversedAt := at.Add(time.Minute)
	for i := range inv.Payments {
		inUTC(&inv.Payments[i].RecordedAt, inv.Payments[i].ReversedAt)
	}
	want := []Payment{
		{ID: p1, AmountMinor: 100, PaidOn: "2026-01-20", Method: "card", Reference: "RF-1", RecordedAt: at, ReversedAt: &reversedAt},
		{ID: p2, AmountMinor: paid.TotalMinor, PaidOn: "2026-01-20", Reference: "RF-1", RecordedAt: at},
	}
	if !reflect.DeepEqual(inv.Payments, want) {
		t.Fatalf("payments %+v, want %+v", inv.Payments, want)
	}
	if s := events.Settle(events.StatusIssued, paid.TotalMinor, 0, paid.TotalMinor); inv.AmountPaidMinor != s.AmountPaidMinor ||
		inv.AmountDueMinor != 0 || inv.PaymentStatus != events.PaymentPaid {
		t.Fatalf("settlement %+v, want %+v", inv.InvoiceSummary, s)
	}
	for status, w := range map[string][]string{events.PaymentPaid: {paid.InvoiceID},
		events.PaymentPartiallyPaid: {partly.InvoiceID}, events.PaymentUnpaid: {unpaid.InvoiceID}} {
		if got := walk(t, f.store.invoiceList("acme", company, InvoiceFilter{PaymentStatus: status}), 1); !slices.Equal(got, w) {
			t.Errorf("payment_status %s: %v, want %v", status, got, w)
		}
	}
	if got := walk(t, f.store.invoiceList("acme", company, InvoiceFilter{Status: "draft", PaymentStatus: events.PaymentUnpaid}), 1); !slices.Equal(got, []string{unpaid.InvoiceID}) {
		t.Errorf("status and payment_status: %v", got)
	}
	// A list without the filter keeps the scope it had before the filter
	// existed: its cursors stay valid.
	if scope := invoiceList("a", "c", InvoiceFilter{Status: "draft"}).scope; scope != buildScope("invoices", "a", "c", "", "", "draft") {
		t.Errorf("the scope of a list without payment_status changed")
	}
	none, err := f.store.Invoice(ctx, "acme", company, unpaid.InvoiceID)
	if err != nil || none.Payments == nil || len(none.Payments) != 0 {
		t.Errorf("an invoice without payments: %+v, %v; want an empty list", none.Payments, err)
	}
}

func buildScope(parts ...string) string { return scope(parts...) }
