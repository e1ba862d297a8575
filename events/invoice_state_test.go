package events

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the payloads the tests encode")

var (
	drafted = time.Date(2026, 3, 1, 9, 30, 15, 123456000, time.UTC)
	revised = drafted.Add(time.Hour)
	issued  = drafted.Add(2 * time.Hour)
)

func intPtr(n int) *int { return &n }

// sampleDraft is a draft whose due date came from 30 days of terms.
func sampleDraft() InvoiceDrafted {
	return InvoiceDrafted{
		InvoiceID: "0190a0c0-0000-7000-8000-000000000003", CompanyID: "0190a0c0-0000-7000-8000-000000000001",
		AccountID: "acme", CustomerID: "0190a0c0-0000-7000-8000-000000000002", CustomerName: "Globex Corp",
		Customer: CustomerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000002", Name: "Globex Corp",
			Address:     Address{Line1: "1 Main St", City: "Springfield", PostalCode: "12345", CountryCode: "US"},
			Identifiers: []Identifier{}, SchemaVersion: SnapshotSchemaVersion},
		Issuer: IssuerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000001", LegalName: "Acme GmbH",
			Address:     Address{Line1: "Hauptstr. 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"},
			Identifiers: []Identifier{}, SchemaVersion: SnapshotSchemaVersion},
		Currency: "EUR", Language: "en", IssueDate: "2026-03-01", DueDate: "2026-03-31", PaymentTermsDays: intPtr(30),
		Lines: []InvoiceLine{{Position: 1, Description: "Consulting", Quantity: "1.5", UnitCode: "HUR", UnitAmountMinor: 10000,
			TaxRateBps: 1900, TaxCategory: "S", NetAmountMinor: 15000, TaxAmountMinor: 2850, TotalAmountMinor: 17850}},
		SubtotalMinor: 15000, TaxMinor: 2850, TotalMinor: 17850, ExternalReference: "erp-1", Notes: "Thanks",
		TaxBreakdown: []TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1900, TaxableAmountMinor: 15000, TaxAmountMinor: 2850}},
		CreatedAt:    drafted,
	}
}

// sampleRevision moves the draft to another customer, another issue date
// (the due date from terms follows) and other lines, and drops the
// reference and the notes.
func sampleRevision() InvoiceRevised {
	d := sampleDraft()
	return InvoiceRevised{
		InvoiceID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID,
		CustomerID: "0190a0c0-0000-7000-8000-000000000004", CustomerName: "Initech AG",
		Customer: CustomerSnapshot{ID: "0190a0c0-0000-7000-8000-000000000004", Name: "Initech AG",
			Address: Address{Line1: "Bahnhofstr. 2", City: "Zürich", PostalCode: "8001", CountryCode: "CH"},
			Email:   "ap@initech.example", Identifiers: []Identifier{{Scheme: "vat", Value: "CHE-123.456.789"}},
			SchemaVersion: SnapshotSchemaVersion},
		Currency: "EUR", Language: "de", IssueDate: "2026-03-10", DueDate: "2026-04-09", PaymentTermsDays: intPtr(30),
		Lines: []InvoiceLine{{Position: 1, Description: "Audit", Quantity: "2", Unit: "day", UnitCode: "DAY", UnitAmountMinor: 80000,
			TaxRateBps: 0, TaxCategory: "E", NetAmountMinor: 160000, TaxAmountMinor: 0, TotalAmountMinor: 160000}},
		SubtotalMinor: 160000, TaxMinor: 0, TotalMinor: 160000, PurchaseOrderReference: "PO-9",
		DocumentTerms: DocumentTerms{BuyerReference: "BR-7", TaxExemptions: []TaxExemption{{TaxCategory: "E", ReasonCode: "VATEX-EU-132"}},
			DeliveryDate: "2026-03-05", BillingPeriod: &Period{Start: "2026-02-01", End: "2026-02-28"}},
		TaxBreakdown: []TaxBreakdown{{TaxCategory: "E", TaxableAmountMinor: 160000}},
		RevisedAt:    revised,
		Changed:      []string{"customer_id", "due_date", "external_reference", "issue_date", "language", "lines", "notes", "purchase_order_reference"},
	}
}

func sampleIssue() InvoiceIssued {
	d := sampleDraft()
	return InvoiceIssued{InvoiceID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID,
		Number: "INV-000001", Sequence: 1, NumberingRevision: 0, IssuedAt: issued,
		IssueDate: "2026-03-20", DueDate: "2026-04-19"}
}

func recordedInvoiceEvent(t *testing.T, rev uint64, typ string, payload any) RecordedEvent {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return RecordedEvent{Stream: "invoice-x", Revision: rev, Type: typ, Data: data}
}

func TestFoldInvoiceAppliesRevisionsAndTheDatesOfAnIssue(t *testing.T) {
	d, r, iss := sampleDraft(), sampleRevision(), sampleIssue()
	plainIssue := iss
	plainIssue.IssueDate, plainIssue.DueDate = "", ""
	afterRevision := d
	afterRevision.CustomerID, afterRevision.CustomerName, afterRevision.Customer = r.CustomerID, r.CustomerName, r.Customer
	afterRevision.Language, afterRevision.IssueDate, afterRevision.DueDate = r.Language, r.IssueDate, r.DueDate
	afterRevision.Lines, afterRevision.SubtotalMinor, afterRevision.TaxMinor, afterRevision.TotalMinor = r.Lines, 160000, 0, 160000
	afterRevision.ExternalReference, afterRevision.Notes, afterRevision.PurchaseOrderReference = "", "", "PO-9"
	afterRevision.DocumentTerms, afterRevision.TaxBreakdown = r.DocumentTerms, r.TaxBreakdown
	movedByIssue := afterRevision
	movedByIssue.IssueDate, movedByIssue.DueDate = iss.IssueDate, iss.DueDate
	tests := []struct {
		name    string
		evs     []RecordedEvent
		want    InvoiceDrafted
		status  string
		updated time.Time
	}{
		{"a draft", []RecordedEvent{recordedInvoiceEvent(t, 0, TypeInvoiceDrafted, d)}, d, StatusDraft, drafted},
		{"a revised draft: the content is the revision's, the issuer and identities stay",
			[]RecordedEvent{recordedInvoiceEvent(t, 0, TypeInvoiceDrafted, d), recordedInvoiceEvent(t, 1, TypeInvoiceRevised, r)},
			afterRevision, StatusDraft, revised},
		{"issued with new dates: they replace the draft's",
			[]RecordedEvent{recordedInvoiceEvent(t, 0, TypeInvoiceDrafted, d), recordedInvoiceEvent(t, 1, TypeInvoiceRevised, r), recordedInvoiceEvent(t, 2, TypeInvoiceIssued, iss)},
			movedByIssue, StatusIssued, issued},
		{"issued without dates (and events from before them): the draft's stand",
			[]RecordedEvent{recordedInvoiceEvent(t, 0, TypeInvoiceDrafted, d), recordedInvoiceEvent(t, 1, TypeInvoiceRevised, r), recordedInvoiceEvent(t, 2, TypeInvoiceIssued, plainIssue)},
			afterRevision, StatusIssued, issued},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			inv, err := FoldInvoice(tt.evs)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(inv.InvoiceDrafted, tt.want) {
				t.Errorf("content:\n got %+v\nwant %+v", inv.InvoiceDrafted, tt.want)
			}
			if inv.Status != tt.status || !inv.UpdatedAt.Equal(tt.updated) || inv.Version != len(tt.evs) {
				t.Errorf("status %s, updated_at %v, version %d; want %s, %v, %d", inv.Status, inv.UpdatedAt, inv.Version, tt.status, tt.updated, len(tt.evs))
			}
		})
	}
}

// An InvoiceDrafted written before payment_terms_days existed decodes
// with the field absent: its due date counts as the client's.
func TestAnOldDraftHasNoPaymentTerms(t *testing.T) {
	old := `{"invoice_id":"i","company_id":"c","account_id":"a","customer_id":"u","customer_name":"n",` +
		`"customer":{},"issuer":{},"currency":"EUR","language":"en","issue_date":"2025-01-15","due_date":"2025-02-14",` +
		`"lines":[],"subtotal_minor":0,"tax_minor":0,"total_minor":0,"created_at":"2025-01-15T09:00:00Z"}`
	inv, err := FoldInvoice([]RecordedEvent{{Type: TypeInvoiceDrafted, Data: json.RawMessage(old)}})
	if err != nil {
		t.Fatal(err)
	}
	if inv.PaymentTermsDays != nil || inv.DueDate != "2025-02-14" {
		t.Fatalf("payment terms %v, due %s; want none, 2025-02-14", inv.PaymentTermsDays, inv.DueDate)
	}
}

// TestInvoicePayloadsMatchTheirGoldenFiles pins the JSON of the invoice
// events whose shape issue 21 extended: a stored event is never rewritten,
// so a change here is a change of the log's format, seen in review.
func TestInvoicePayloadsMatchTheirGoldenFiles(t *testing.T) {
	d := sampleDraft()
	clientDue := d
	clientDue.PaymentTermsDays = nil
	iss := sampleIssue()
	asg := InvoiceNumberAssigned{CompanyID: d.CompanyID, AccountID: d.AccountID, Sequence: 1, Number: "INV-000001",
		InvoiceID: d.InvoiceID, InvoiceStream: "invoice-x", InvoiceRevision: 1, AssignedAt: issued,
		IssueDate: iss.IssueDate, DueDate: iss.DueDate}
	matchGoldens(t, map[string]any{
		"invoice_drafted_due_from_terms":     d,
		"invoice_drafted_due_from_client":    clientDue,
		"invoice_revised":                    sampleRevision(),
		"invoice_issued_with_dates":          iss,
		"invoice_number_assigned_with_dates": asg,
	})
}

// matchGoldens holds each payload's indented JSON to testdata/<name>.golden
// (-update writes them).
func matchGoldens(t *testing.T, payloads map[string]any) {
	t.Helper()
	for name, payload := range payloads {
		t.Run(name, func(t *testing.T) {
			got, err := json.MarshalIndent(payload, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", name+".golden")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if string(got) != string(want) {
				t.Errorf("%s differs from %s (run with -update to accept it):\n%s", name, path, got)
			}
		})
	}
}
