package projections

import (
	"fmt"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// BenchmarkRenderDocuments renders a five-line draft's documents, as the
// invoices projection does for every draft of a catch-up.
func BenchmarkRenderDocuments(b *testing.B) {
	d := events.InvoiceDrafted{
		Customer: events.CustomerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000002", Name: "Globex Corp",
			Address:     events.Address{Line1: "1 Main St", City: "Springfield", PostalCode: "12345", CountryCode: "US"},
			Identifiers: []events.Identifier{{Scheme: "vat", Value: "US123"}}, SchemaVersion: 1},
		Issuer: events.IssuerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000001", LegalName: "Acme GmbH",
			Address: events.Address{Line1: "Hauptstr. 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"}, SchemaVersion: 1},
		Currency: "EUR", Language: "en", IssueDate: "2026-03-01", CreatedAt: time.Date(2026, 3, 1, 9, 30, 15, 0, time.UTC),
	}
	for i := range 5 {
		d.Lines = append(d.Lines, events.InvoiceLine{Position: i + 1, Description: fmt.Sprintf("Consulting %d", i),
			Quantity: "1.5", UnitCode: "HUR", UnitAmountMinor: 10000, TaxRateBps: 1900, TaxCategory: events.TaxStandard,
			NetAmountMinor: 15000, TaxAmountMinor: 2850, TotalAmountMinor: 17850})
	}
	d.TaxBreakdown = events.LineTaxBreakdown(d.Lines)
	var r documentRenderer
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.render(d); err != nil {
			b.Fatal(err)
		}
	}
}
