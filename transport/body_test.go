package transport

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/invoicing/invoicing/query"
)

// discardWriter is a ResponseWriter that keeps nothing, so that a benchmark
// measures the rendering and not a recorder's copy.
type discardWriter struct{ h http.Header }

func (d discardWriter) Header() http.Header         { return d.h }
func (d discardWriter) Write(p []byte) (int, error) { return len(p), nil }
func (d discardWriter) WriteHeader(int)             {}

// storedPage is the page of summaries the read model stores for items: each
// rendered as the API renders it (invoices.summary holds that rendering;
// TestTheStoredSummaryIsTheAPIsRendering).
func storedPage(items []query.InvoiceSummary, next string) query.Page[json.RawMessage] {
	page := query.Page[json.RawMessage]{NextCursor: next}
	for _, i := range items {
		page.Items = append(page.Items, invoiceSummaryFromQuery(i).appendJSON(nil))
	}
	return page
}

// asStored is a stored summary as encoding/json writes it.
func asStored(o json.RawMessage) json.RawMessage { return o }

// BenchmarkInvoiceListBody writes a page of 100 invoice summaries as
// listInvoices does, from the query's items to the written body.
func BenchmarkInvoiceListBody(b *testing.B) {
	var items []query.InvoiceSummary
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	due, number := "2026-03-31", "INV-2026-000123"
	for n := range 100 {
		issued := created.Add(time.Duration(n) * time.Minute)
		items = append(items, query.InvoiceSummary{
			ID: "0190a0c0-0000-7000-8000-000000000003", CompanyID: "0190a0c0-0000-7000-8000-000000000001",
			CustomerID: "0190a0c0-0000-7000-8000-000000000002", CustomerName: "Globex Corporation",
			Currency: "EUR", IssueDate: "2026-03-01", DueDate: &due, IssuedAt: &issued, Number: &number,
			Status: "issued", SubtotalMinor: 100000, TaxMinor: 19000, TotalMinor: 119000,
			AmountDueMinor: 119000, PaymentStatus: "unpaid", CreatedAt: created, UpdatedAt: issued,
			Version: 2, ExternalReference: "erp-1",
		})
	}
	page := storedPage(items, "AgAAAAAAAAAKAAAAAAAAAAFxyz")
	w := discardWriter{h: http.Header{}}
	var s server
	b.ReportAllocs()
	for b.Loop() {
		if err := s.writeInvoiceList(w, page); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkInvoiceBody renders an invoice as getInvoice does, from the
// query's invoice to the written body.
func BenchmarkInvoiceBody(b *testing.B) {
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	snapshot := json.RawMessage(`{"name":"Globex Corporation","address":{"line_1":"1 Main St","city":"Springfield","postal_code":"12345","country_code":"US"},"identifiers":[]}`)
	inv := query.Invoice{
		InvoiceSummary: query.InvoiceSummary{ID: "0190a0c0-0000-7000-8000-000000000003",
			CompanyID: "0190a0c0-0000-7000-8000-000000000001", CustomerID: "0190a0c0-0000-7000-8000-000000000002",
			CustomerName: "Globex Corporation", Currency: "EUR", IssueDate: "2026-03-01", Status: "draft",
			SubtotalMinor: 100000, TaxMinor: 19000, TotalMinor: 119000, AmountDueMinor: 119000,
			PaymentStatus: "unpaid", CreatedAt: created, UpdatedAt: created, Version: 1},
		Customer: snapshot, Issuer: snapshot, Language: "en",
		Lines: json.RawMessage(`[{"description":"Consulting","quantity":"10","unit_price_minor":10000,"tax_rate_bps":1900}]`),
		Document: json.RawMessage(`{"buyer_reference":"PO-7","delivery_date":"2026-02-28",` +
			`"delivery_address":{"line_1":"2 Dock Rd","city":"Springfield","postal_code":"12345","country_code":"US"},` +
			`"tax_breakdown":[{"tax_category":"S","tax_rate_bps":1900,"taxable_amount_minor":100000,"tax_amount_minor":19000}]}`),
	}
	w := discardWriter{h: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		out, err := invoiceFromQuery(inv)
		if err != nil {
			b.Fatal(err)
		}
		writeJSON(w, http.StatusOK, out)
	}
}

// A list written into a kept buffer is the list alone, whatever longer
// list the buffer held before, and its Content-Length is its own.
func TestAKeptBodyBufferHoldsOnlyItsList(t *testing.T) {
	var s server
	var items []query.InvoiceSummary
	for range 40 {
		items = append(items, query.InvoiceSummary{ID: "a-long-id", CustomerName: "a long customer name"})
	}
	long, short := storedPage(items, "next"), storedPage(items[:1], "")
	for _, page := range []query.Page[json.RawMessage]{long, short, long, short} {
		kept, fresh := httptest.NewRecorder(), httptest.NewRecorder()
		if err := s.writeInvoiceList(kept, page); err != nil {
			t.Fatal(err)
		}
		writeJSON(fresh, http.StatusOK, list(page, asStored))
		if kept.Body.String() != fresh.Body.String() {
			t.Fatalf("a list of %d from a kept buffer:\n%s\nwant\n%s", len(page.Items), kept.Body, fresh.Body)
		}
		if got, want := kept.Header().Get("Content-Length"), strconv.Itoa(kept.Body.Len()); got != want {
			t.Fatalf("Content-Length %s for a body of %s bytes", got, want)
		}
	}
}

// Lists written at once through one server's kept buffers are each their
// own list (run with -race: a buffer handed to two lists is a race).
func TestListsWrittenAtOnceKeepTheirOwnBodies(t *testing.T) {
	var s server
	errs := make(chan error, 8)
	for g := range cap(errs) {
		var items []query.InvoiceSummary
		for n := range 10 + 7*g {
			items = append(items, query.InvoiceSummary{ID: strconv.Itoa(g), Version: n})
		}
		page := storedPage(items, "")
		fresh := httptest.NewRecorder()
		writeJSON(fresh, http.StatusOK, list(page, asStored))
		go func() {
			var err error
			for range 50 {
				kept := httptest.NewRecorder()
				if err = s.writeInvoiceList(kept, page); err != nil {
					break
				}
				if kept.Body.String() != fresh.Body.String() {
					err = fmt.Errorf("list %d: a body of %d bytes, want %d", g, kept.Body.Len(), fresh.Body.Len())
					break
				}
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
