package events

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

func recordedOf(t *testing.T, stream string, revision uint64, eventType string, payload any) RecordedEvent {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return RecordedEvent{Stream: stream, Revision: revision, Type: eventType, Data: data}
}

func TestFoldCompany(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(n int) time.Time { return created.Add(time.Duration(n) * time.Hour) }
	evs := []RecordedEvent{
		recordedOf(t, "company-x", 0, TypeCompanyCreated, CompanyCreated{CompanyID: "c1", AccountID: "a", LegalName: "Old",
			TradingName: "T", DefaultCurrency: "EUR", DefaultLanguage: "en", DefaultPaymentTermsDays: 30, CreatedAt: created}),
		recordedOf(t, "company-x", 1, TypeCompanyUpdated, CompanyUpdated{CompanyID: "c1", AccountID: "a", LegalName: "New",
			DefaultCurrency: "USD", DefaultLanguage: "de", DefaultPaymentTermsDays: 7, InvoiceNumberPrefix: "P-",
			Changed: []string{"default_currency"}, UpdatedAt: at(1)}),
		recordedOf(t, "company-x", 2, TypeCompanyArchived, CompanyArchived{CompanyID: "c1", AccountID: "a", ArchivedAt: at(2)}),
	}
	c, err := FoldCompany(evs)
	if err != nil {
		t.Fatal(err)
	}
	if c.LegalName != "New" || c.TradingName != "" || c.DefaultCurrency != "USD" || c.InvoiceNumberPrefix != "P-" ||
		c.CompanyID != "c1" || !c.CreatedAt.Equal(created) || c.Version != 3 || c.ArchivedAt == nil ||
		!c.ArchivedAt.Equal(at(2)) || !c.UpdatedAt.Equal(at(2)) {
		t.Fatalf("fold: %+v", c)
	}
	evs = append(evs, recordedOf(t, "company-x", 3, TypeCompanyUnarchived, CompanyUnarchived{CompanyID: "c1", UnarchivedAt: at(3)}))
	if c, err = FoldCompany(evs); err != nil || c.ArchivedAt != nil || !c.UpdatedAt.Equal(at(3)) || c.Version != 4 {
		t.Fatalf("after unarchiving: %+v, %v", c, err)
	}
	if _, err := FoldCompany(evs[1:]); !errors.Is(err, ErrNotACompanyStream) {
		t.Errorf("a stream without its creation: %v, want ErrNotACompanyStream", err)
	}
	if _, err := FoldCompany(nil); !errors.Is(err, ErrNotACompanyStream) {
		t.Errorf("no events: %v", err)
	}
	bad := append(evs[:1:1], recordedOf(t, "company-x", 1, TypeInvoiceIssued, InvoiceIssued{}))
	if _, err := FoldCompany(bad); err == nil {
		t.Error("an invoice event in a company stream folded")
	}
}

func TestFoldCustomer(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []RecordedEvent{
		recordedOf(t, "customer-x", 0, TypeCustomerCreated, CustomerCreated{CustomerID: "u1", CompanyID: "c1", Name: "Old",
			Email: "a@b.example", CreatedAt: created}),
		recordedOf(t, "customer-x", 1, TypeCustomerUpdated, CustomerUpdated{CustomerID: "u1", CompanyID: "c1", Name: "New",
			Identifiers: []Identifier{{Scheme: "vat", Value: "1"}}, Changed: []string{"email", "identifiers", "name"},
			UpdatedAt: created.Add(time.Hour)}),
		recordedOf(t, "customer-x", 2, TypeCustomerArchived, CustomerArchived{CustomerID: "u1", ArchivedAt: created.Add(2 * time.Hour)}),
		recordedOf(t, "customer-x", 3, TypeCustomerUnarchived, CustomerUnarchived{CustomerID: "u1", UnarchivedAt: created.Add(3 * time.Hour)}),
	}
	c, err := FoldCustomer(evs[:2])
	if err != nil || c.Name != "New" || c.Email != "" || len(c.Identifiers) != 1 || c.Version != 2 || c.ArchivedAt != nil {
		t.Fatalf("fold: %+v, %v", c, err)
	}
	if c, err = FoldCustomer(evs[:3]); err != nil || c.ArchivedAt == nil || c.Version != 3 {
		t.Fatalf("archived: %+v, %v", c, err)
	}
	if c, err = FoldCustomer(evs); err != nil || c.ArchivedAt != nil || c.Version != 4 || !c.UpdatedAt.Equal(created.Add(3*time.Hour)) {
		t.Fatalf("restored: %+v, %v", c, err)
	}
	if _, err := FoldCustomer(evs[1:]); !errors.Is(err, ErrNotACustomerStream) {
		t.Errorf("a stream without its creation: %v", err)
	}
}

// TestResumeIsTheFoldOfTheWholeStream resumes a fold at every split of a
// stream and checks it against the fold of the whole, that the fold it
// resumed from is left as it was, and that a gap or a fold of nothing is
// refused.
func TestResumeIsTheFoldOfTheWholeStream(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	evs := []RecordedEvent{
		recordedOf(t, "customer-x", 0, TypeCustomerCreated, CustomerCreated{CustomerID: "u1", CompanyID: "c1", Name: "Old",
			Identifiers: []Identifier{{Scheme: "vat", Value: "0"}}, CreatedAt: created}),
	}
	for rev := uint64(1); rev <= 6; rev++ {
		at := created.Add(time.Duration(rev) * time.Hour)
		switch rev % 3 {
		case 0:
			evs = append(evs, recordedOf(t, "customer-x", rev, TypeCustomerArchived, CustomerArchived{CustomerID: "u1", ArchivedAt: at}))
		case 1:
			evs = append(evs, recordedOf(t, "customer-x", rev, TypeCustomerUnarchived, CustomerUnarchived{CustomerID: "u1", UnarchivedAt: at}))
		default:
			evs = append(evs, recordedOf(t, "customer-x", rev, TypeCustomerUpdated, CustomerUpdated{CustomerID: "u1", CompanyID: "c1",
				Name: "N" + at.Format("15"), Identifiers: []Identifier{{Scheme: "vat", Value: at.Format("15")}}, UpdatedAt: at}))
		}
	}
	whole, err := FoldCustomer(evs)
	if err != nil {
		t.Fatal(err)
	}
	for split := 1; split <= len(evs); split++ {
		head, err := FoldCustomer(evs[:split])
		if err != nil {
			t.Fatal(err)
		}
		before := mustJSON(t, head)
		got, err := head.Resume(evs[split:])
		if err != nil {
			t.Fatalf("resume at %d: %v", split, err)
		}
		if g, w := mustJSON(t, got), mustJSON(t, whole); g != w {
			t.Errorf("resumed at %d:\n%s\nwant the whole fold:\n%s", split, g, w)
		}
		if after := mustJSON(t, head); after != before {
			t.Errorf("resuming at %d changed the fold it resumed from", split)
		}
	}
	head, err := FoldCustomer(evs[:2])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := head.Resume(evs[3:]); !errors.Is(err, ErrStreamGap) {
		t.Errorf("resume past a gap: %v, want ErrStreamGap", err)
	}
	if _, err := (Customer{}).Resume(evs[1:]); !errors.Is(err, ErrNotACustomerStream) {
		t.Errorf("resume of no fold: %v, want ErrNotACustomerStream", err)
	}
	company, err := FoldCompany([]RecordedEvent{recordedOf(t, "company-x", 0, TypeCompanyCreated, CompanyCreated{CompanyID: "c1", CreatedAt: created})})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := company.Resume([]RecordedEvent{recordedOf(t, "company-x", 2, TypeCompanyArchived, CompanyArchived{CompanyID: "c1"})}); !errors.Is(err, ErrStreamGap) {
		t.Errorf("company resumed past a gap: %v, want ErrStreamGap", err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
