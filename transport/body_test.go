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

// BenchmarkInvoiceListBody renders a page of 100 invoice summaries as
// listInvoices does, from the query's items to the written body.
func BenchmarkInvoiceListBody(b *testing.B) {
	page := query.Page[query.InvoiceSummary]{NextCursor: "AgAAAAAAAAAKAAAAAAAAAAFxyz"}
	created := time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	due, number := "2026-03-31", "INV-2026-000123"
	for n := range 100 {
		issued := created.Add(time.Duration(n) * time.Minute)
		page.Items = append(page.Items, query.InvoiceSummary{
			ID: "0190a0c0-0000-7000-8000-000000000003", CompanyID: "0190a0c0-0000-7000-8000-000000000001",
			CustomerID: "0190a0c0-0000-7000-8000-000000000002", CustomerName: "Globex Corporation",
			Currency: "EUR", IssueDate: "2026-03-01", DueDate: &due, IssuedAt: &issued, Number: &number,
			Status: "issued", SubtotalMinor: 100000, TaxMinor: 19000, TotalMinor: 119000,
			AmountDueMinor: 119000, PaymentStatus: "unpaid", CreatedAt: created, UpdatedAt: issued,
			Version: 2, ExternalReference: "erp-1",
		})
	}
	w := discardWriter{h: http.Header{}}
	var s server
	b.ReportAllocs()
	for b.Loop() {
		s.writeInvoiceList(w, page)
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
	long := query.Page[query.InvoiceSummary]{NextCursor: "next"}
	for range 40 {
		long.Items = append(long.Items, query.InvoiceSummary{ID: "a-long-id", CustomerName: "a long customer name"})
	}
	short := query.Page[query.InvoiceSummary]{Items: []query.InvoiceSummary{{ID: "short"}}}
	for _, page := range []query.Page[query.InvoiceSummary]{long, short, long, short} {
		kept, fresh := httptest.NewRecorder(), httptest.NewRecorder()
		s.writeInvoiceList(kept, page)
		writeJSON(fresh, http.StatusOK, list(page, invoiceSummaryFromQuery))
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
		page := query.Page[query.InvoiceSummary]{}
		for n := range 10 + 7*g {
			page.Items = append(page.Items, query.InvoiceSummary{ID: strconv.Itoa(g), Version: n})
		}
		fresh := httptest.NewRecorder()
		writeJSON(fresh, http.StatusOK, list(page, invoiceSummaryFromQuery))
		go func() {
			var err error
			for range 50 {
				kept := httptest.NewRecorder()
				s.writeInvoiceList(kept, page)
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
