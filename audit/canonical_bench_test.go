package audit

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// invoiceEvent is an InvoiceDrafted of five lines as the service records
// it (≈ 2 KB), with its metadata: what the audit chain canonicalises for
// most events.
func invoiceEvent(tb testing.TB) events.RecordedEvent {
	tb.Helper()
	addr := events.Address{Line1: "Hauptstraße 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"}
	d := events.InvoiceDrafted{InvoiceID: "0193a1f2-7c3e-7def-8a11-2b3c4d5e6f70", CompanyID: "0193a1f2-7c3e-7def-8a11-2b3c4d5e6f71",
		AccountID: "acme", CustomerID: "0193a1f2-7c3e-7def-8a11-2b3c4d5e6f72", CustomerName: "Kunde GmbH",
		Customer: events.CustomerSnapshot{ID: "0193a1f2-7c3e-7def-8a11-2b3c4d5e6f72", Name: "Kunde GmbH", Address: addr,
			Identifiers: []events.Identifier{{Scheme: "vat", Value: "DE123456789"}}, SchemaVersion: events.SnapshotSchemaVersion},
		Issuer: events.IssuerSnapshot{ID: "0193a1f2-7c3e-7def-8a11-2b3c4d5e6f71", LegalName: "Acme \"Invoicing\" AG", Address: addr,
			Identifiers: []events.Identifier{}, SchemaVersion: events.SnapshotSchemaVersion},
		Currency: "EUR", Language: "de", IssueDate: "2025-01-15", DueDate: "2025-02-14",
		CreatedAt: time.Date(2025, 1, 15, 10, 0, 0, 123456000, time.UTC)}
	for i := range 5 {
		d.Lines = append(d.Lines, events.InvoiceLine{Position: i + 1, Description: fmt.Sprintf("Beratung, Tag %d\nvor Ort", i+1),
			Quantity: "1.5", Unit: "h", UnitAmountMinor: 10000, TaxRateBps: 1900, NetAmountMinor: 15000, TaxAmountMinor: 2850, TotalAmountMinor: 17850})
	}
	data, err := json.Marshal(d)
	if err != nil {
		tb.Fatal(err)
	}
	md, err := json.Marshal(events.Metadata{AccountID: "acme", Actor: events.Actor{Subject: "user-1"}, RequestID: "req-1",
		RequestFingerprint: "f00d", SchemaVersion: events.SchemaVersion})
	if err != nil {
		tb.Fatal(err)
	}
	return events.RecordedEvent{ID: events.EventID("invoice-x", 0), Stream: "invoice-x", Type: events.TypeInvoiceDrafted, Data: data, Metadata: md,
		RecordedAt: d.CreatedAt}
}

// BenchmarkCanonicalEvent is the audit chain's cost per event.
//
//	go test -run '^$' -bench CanonicalEvent -benchmem ./events/
func BenchmarkCanonicalEvent(b *testing.B) {
	ev := invoiceEvent(b)
	b.SetBytes(int64(len(ev.Data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CanonicalEvent(ev); err != nil {
			b.Fatal(err)
		}
	}
}
