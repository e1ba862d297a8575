package events

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// benchDraft is an InvoiceDrafted of n lines, as the bench creates them.
func benchDraft(tb testing.TB, n int) []byte {
	tb.Helper()
	d := InvoiceDrafted{
		InvoiceID: "0190a0c0-0000-7000-8000-000000000003", CompanyID: "0190a0c0-0000-7000-8000-000000000001",
		AccountID: "acme", CustomerID: "0190a0c0-0000-7000-8000-000000000002", CustomerName: "Globex Corp",
		Customer: CustomerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000002", Name: "Globex Corp",
			Address:     Address{Line1: "1 Main St", City: "Springfield", PostalCode: "12345", CountryCode: "US"},
			Identifiers: []Identifier{{Scheme: "vat", Value: "US123"}}, SchemaVersion: 1},
		Issuer: IssuerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000001", LegalName: "Acme GmbH",
			Address:     Address{Line1: "Hauptstr. 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"},
			Identifiers: []Identifier{{Scheme: "vat", Value: "DE123456789"}}, SchemaVersion: 1},
		Currency: "EUR", Language: "en", IssueDate: "2026-03-01", DueDate: "2026-03-31",
		ExternalReference: "erp-1", Notes: "Thanks", CreatedAt: time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC),
	}
	for i := range n {
		d.Lines = append(d.Lines, InvoiceLine{Position: i + 1, Description: fmt.Sprintf("Consulting %d", i),
			Quantity: "1.5", UnitCode: "HUR", UnitAmountMinor: 10000, TaxRateBps: 1900, TaxCategory: TaxStandard,
			NetAmountMinor: 15000, TaxAmountMinor: 2850, TotalAmountMinor: 17850})
	}
	d.TaxBreakdown = LineTaxBreakdown(d.Lines)
	b, err := json.Marshal(d)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkUnmarshalInvoiceDrafted decodes a five-line draft, as every
// projection of a create and every catch-up does.
func BenchmarkUnmarshalInvoiceDrafted(b *testing.B) {
	data := benchDraft(b, 5)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		var d InvoiceDrafted
		if err := d.UnmarshalJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
