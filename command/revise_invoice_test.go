package command

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// customerDirectory is a Directory of one company's customers, as they are now.
type customerDirectory struct {
	Directory
	byID map[string]CustomerRecord
}

func (d customerDirectory) Customer(_ context.Context, _, _, customerID string) (CustomerRecord, error) {
	c, ok := d.byID[customerID]
	if !ok {
		return CustomerRecord{}, events.ErrNotFound
	}
	return c, nil
}

const (
	globexID  = "0190a0c0-0000-7000-8000-000000000002"
	initechID = "0190a0c0-0000-7000-8000-000000000004"
	archiveID = "0190a0c0-0000-7000-8000-000000000005"
)

var revisedAt = time.Date(2026, 11, 26, 10, 0, 0, 0, time.UTC)

// The company and its customers as they are now: all renamed since the
// draft was made.
func reviseFixture(t *testing.T) (*Handler, CompanyRecord, events.InvoiceDrafted) {
	t.Helper()
	company := CompanyRecord{ID: "0190a0c0-0000-7000-8000-000000000001", LegalName: "Acme Renamed GmbH",
		Address:         events.Address{Line1: "Neue Str. 2", City: "Berlin", PostalCode: "10115", CountryCode: "DE"},
		DefaultCurrency: "CHF", DefaultLanguage: "de", DefaultPaymentTermsDays: 14}
	dir := customerDirectory{byID: map[string]CustomerRecord{
		globexID:  {ID: globexID, Name: "Globex Renamed", Address: company.Address},
		initechID: {ID: initechID, Name: "Initech AG", Address: company.Address, Email: "ap@initech.example"},
		archiveID: {ID: archiveID, Name: "Gone Ltd", Address: company.Address, Archived: true},
	}}
	h := NewHandler(Config{Directory: dir, Now: func() time.Time { return revisedAt }})
	in := CreateInvoice{CustomerID: globexID, IssueDate: "2025-01-15", Currency: "EUR", Language: "en", Notes: "n",
		Lines: []LineInput{{Description: "Consulting", Quantity: "1.5", UnitAmountMinor: 10000, TaxRateBps: 1900}}}
	then := company
	then.LegalName, then.DefaultPaymentTermsDays = "Acme GmbH", 30
	d, err := in.draft(then, CustomerRecord{ID: globexID, Name: "Globex Corp", Address: company.Address})
	if err != nil {
		t.Fatal(err)
	}
	return h, company, d
}

func parsedRevision(t *testing.T, patch string) ReviseInvoice {
	t.Helper()
	p, err := ParseReviseInvoice([]byte(patch))
	if err != nil {
		t.Fatal(err)
	}
	rev, err := p.Valid()
	if err != nil {
		t.Fatalf("%s: %v", patch, err)
	}
	return rev
}

func TestReviseKeepsSnapshotsFrozenAndFollowsTheTerms(t *testing.T) {
	h, company, d := reviseFixture(t)
	tests := []struct {
		name, patch string
		check       func(t *testing.T, r events.InvoiceRevised)
		changed     []string
	}{
		{"the same customer keeps its snapshot from drafting", `{"notes":"Thanks"}`, func(t *testing.T, r events.InvoiceRevised) {
			if r.CustomerName != "Globex Corp" || r.Customer.Name != "Globex Corp" || r.Notes != "Thanks" {
				t.Errorf("customer %s / %s, notes %q", r.CustomerName, r.Customer.Name, r.Notes)
			}
		}, []string{"notes"}},
		{"a new customer's snapshot is taken now", `{"customer_id":"` + initechID + `"}`, func(t *testing.T, r events.InvoiceRevised) {
			if r.CustomerID != initechID || r.CustomerName != "Initech AG" || r.Customer.Email != "ap@initech.example" {
				t.Errorf("customer %+v", r.Customer)
			}
		}, []string{"customer_id"}},
		{"a due date from terms follows the issue date, by the recorded 30 days", `{"issue_date":"2025-03-01"}`, func(t *testing.T, r events.InvoiceRevised) {
			if r.DueDate != "2025-03-31" || r.PaymentTermsDays == nil || *r.PaymentTermsDays != 30 {
				t.Errorf("due %s, terms %v", r.DueDate, r.PaymentTermsDays)
			}
		}, []string{"due_date", "issue_date"}},
		{"null restores the company's defaults now", `{"due_date":null,"currency":null,"language":null}`, func(t *testing.T, r events.InvoiceRevised) {
			if r.DueDate != "2025-01-29" || *r.PaymentTermsDays != 14 || r.Currency != "CHF" || r.Language != "de" {
				t.Errorf("due %s, terms %v, currency %s, language %s", r.DueDate, r.PaymentTermsDays, r.Currency, r.Language)
			}
		}, []string{"currency", "due_date", "language"}},
		{"the due date the terms gave, sent, no longer follows", `{"due_date":"2025-02-14"}`, func(t *testing.T, r events.InvoiceRevised) {
			if r.DueDate != "2025-02-14" || r.PaymentTermsDays != nil {
				t.Errorf("due %s, terms %v", r.DueDate, r.PaymentTermsDays)
			}
		}, []string{"due_date"}},
		{"lines are repriced by the money rule", `{"lines":[{"description":"Audit","quantity":"0.5","unit_amount_minor":3,"tax_rate_bps":1900}]}`, func(t *testing.T, r events.InvoiceRevised) {
			if l := r.Lines[0]; l.NetAmountMinor != 2 || l.TaxAmountMinor != 0 || r.TotalMinor != 2 {
				t.Errorf("lines %+v, total %d", r.Lines, r.TotalMinor)
			}
		}, []string{"lines"}},
		{"a patch that changes nothing", `{"issue_date":"2025-01-15","notes":"n","currency":"EUR"}`, nil, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := h.revise(context.Background(), "acme", company, d, parsedRevision(t, tt.patch))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(r.Changed, tt.changed) {
				t.Errorf("changed %q, want %q", r.Changed, tt.changed)
			}
			if tt.check != nil {
				tt.check(t, r)
			}
			if revised := d.Revise(r); !reflect.DeepEqual(revised.Issuer, d.Issuer) || revised.CreatedAt != d.CreatedAt {
				t.Errorf("the issuer snapshot or created_at moved: %+v", revised.Issuer)
			}
		})
	}
}

func TestReviseRefusesCustomersItCannotDraftFor(t *testing.T) {
	h, company, d := reviseFixture(t)
	for _, tt := range []struct {
		name, customer string
		want           any
	}{
		{"not a customer of the company", "0190a0c0-0000-7000-8000-0000000000ff", &ValidationError{}},
		{"archived", archiveID, &StateError{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := h.revise(context.Background(), "acme", company, d, parsedRevision(t, `{"customer_id":"`+tt.customer+`"}`))
			var verr *ValidationError
			var serr *StateError
			switch tt.want.(type) {
			case *ValidationError:
				if !errors.As(err, &verr) || verr.Violations[0].Path != "customer_id" {
					t.Fatalf("err = %v, want a violation at customer_id", err)
				}
			case *StateError:
				if !errors.As(err, &serr) || serr.Violations[0].Path != "customer_id" || !errors.Is(err, ErrInvalidState) {
					t.Fatalf("err = %v, want invalid state at customer_id", err)
				}
			}
		})
	}
}

func TestIssueDatesMoveADueDateFromTermsOnly(t *testing.T) {
	terms := 30
	fromTerms := events.Invoice{InvoiceDrafted: events.InvoiceDrafted{IssueDate: "2025-01-15", DueDate: "2025-02-14", PaymentTermsDays: &terms}}
	sent := events.Invoice{InvoiceDrafted: events.InvoiceDrafted{IssueDate: "2025-01-15", DueDate: "2025-02-01"}}
	for _, tt := range []struct {
		name string
		inv  events.Invoice
		date string
		want movedDates
		path string
	}{
		{"no date", fromTerms, "", movedDates{}, ""},
		{"the drafted date", fromTerms, "2025-01-15", movedDates{}, ""},
		{"terms: the due date moves", fromTerms, "2026-11-26", movedDates{issue: "2026-11-26", due: "2026-12-26"}, ""},
		{"terms: past 9999-12-31", fromTerms, "9999-12-15", movedDates{}, "issue_date"},
		{"sent: the due date stays", sent, "2025-02-01", movedDates{issue: "2025-02-01"}, ""},
		{"sent: after the due date", sent, "2025-02-02", movedDates{}, "issue_date"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := issueDates(tt.inv, tt.date)
			var verr *ValidationError
			if tt.path != "" {
				if !errors.As(err, &verr) || verr.Violations[0].Path != tt.path {
					t.Fatalf("err = %v, want a violation at %s", err, tt.path)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("issueDates = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}
