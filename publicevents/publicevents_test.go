package publicevents

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// TestEveryServiceEventIsPublicOrBookkeeping holds the catalogue to
// events.Types: a new internal event must be given a public name here or
// be named bookkeeping on purpose.
func TestEveryServiceEventIsPublicOrBookkeeping(t *testing.T) {
	bookkeeping := map[string]bool{events.TypeInvoiceNumberAssigned: true, events.TypeCreditNoteNumberAssigned: true,
		// Webhook endpoints are configuration, never delivered (issue 24).
		events.TypeWebhookEndpointCreated: true, events.TypeWebhookEndpointUpdated: true,
		events.TypeWebhookEndpointSecretRotated: true, events.TypeWebhookEndpointDeleted: true}
	for _, internal := range events.Types {
		name, ok := TypeOf(internal)
		if ok == bookkeeping[internal] {
			t.Errorf("%s: public %v, bookkeeping %v", internal, ok, bookkeeping[internal])
		}
		if ok && !IsType(name) {
			t.Errorf("%s: %s is not in Types", internal, name)
		}
	}
	if !slices.IsSorted(Types) || len(Types) != 15 {
		t.Errorf("Types = %v, want 15 sorted", Types)
	}
	if IsType("InvoiceIssued") || IsType("") {
		t.Error("an internal name or nothing is a public type")
	}
}

func TestSubjectOf(t *testing.T) {
	const acc, co, cu, inv, cn = "acme", "c0", "c1", "i1", "n1"
	cases := []struct {
		typ, data, resource, resourceID string
	}{
		{events.TypeCompanyUpdated, `{"account_id":"acme","company_id":"c0"}`, ResourceCompany, co},
		{events.TypeCustomerArchived, `{"account_id":"acme","company_id":"c0","customer_id":"c1"}`, ResourceCustomer, cu},
		{events.TypeInvoiceDrafted, `{"account_id":"acme","company_id":"c0","customer_id":"c1","invoice_id":"i1"}`, ResourceInvoice, inv},
		{events.TypePaymentReversed, `{"account_id":"acme","company_id":"c0","invoice_id":"i1","payment_id":"p"}`, ResourceInvoice, inv},
		{events.TypeCreditNoteIssued, `{"account_id":"acme","company_id":"c0","invoice_id":"i1","credit_note_id":"n1"}`, ResourceCreditNote, cn},
	}
	for _, c := range cases {
		s, ok, err := SubjectOf(events.RecordedEvent{Type: c.typ, Data: json.RawMessage(c.data)})
		if err != nil || !ok || s.AccountID != acc || s.CompanyID != co || s.Resource != c.resource || s.ResourceID != c.resourceID {
			t.Errorf("%s: %+v %v %v", c.typ, s, ok, err)
		}
	}
	if _, ok, err := SubjectOf(events.RecordedEvent{Type: events.TypeInvoiceNumberAssigned}); ok || err != nil {
		t.Errorf("a numbering event: %v %v", ok, err)
	}
	_, _, err := SubjectOf(events.RecordedEvent{Type: events.TypeInvoiceIssued, Data: json.RawMessage(`{"account_id":"acme"}`)})
	if err == nil || !strings.Contains(err.Error(), "names no") {
		t.Errorf("an event without ids: %v", err)
	}
}

// readIDs, which stops reading once it has the ids it needs, reads what
// json.Unmarshal of the whole payload reads: ids after large members,
// ids nested in other members (never taken), null ids, members in any
// order, and the events the write side writes.
func TestReadIDsReadsWhatUnmarshalReads(t *testing.T) {
	drafted, err := json.Marshal(events.InvoiceDrafted{InvoiceID: "i1", CompanyID: "c0", AccountID: "acme", CustomerID: "c1",
		Customer: events.CustomerSnapshot{Name: `Kunde "GmbH"`}, Lines: []events.InvoiceLine{{Description: "a", Quantity: "1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		data, resource string
	}{
		{string(drafted), ResourceInvoice},
		{`{"lines":[{"account_id":"x","company_id":"y"}],"customer":{"invoice_id":"z"},"account_id":"acme","company_id":"c0","invoice_id":"i1"}`, ResourceInvoice},
		{`{"note":"a \"company_id\": here","account_id":"acme","company_id":"c0","customer_id":"c1"}`, ResourceCustomer},
		{`{"company_id":"c0","account_id":"acme"}`, ResourceCompany},
		{`{"account_id":null,"company_id":"c0"}`, ResourceCompany},
		{`{"account_id":"acme","company_id":"c0","invoice_id":"i1","credit_note_id":"n1","lines":[1,2,{}]}`, ResourceCreditNote},
		{`{"account_id":"acme"}`, ResourceInvoice},
		{`{}`, ResourceCompany},
	} {
		var want ids
		if err := json.Unmarshal([]byte(c.data), &want); err != nil {
			t.Fatal(err)
		}
		got, err := readIDs([]byte(c.data), c.resource)
		if err != nil {
			t.Errorf("%s: %v", c.data, err)
			continue
		}
		if got.AccountID != want.AccountID || got.CompanyID != want.CompanyID || got.resourceID(c.resource) != want.resourceID(c.resource) {
			t.Errorf("%s: read %+v, json.Unmarshal reads %+v", c.data, got, want)
		}
	}
	for _, bad := range []string{``, `[]`, `"s"`, `{"account_id":1}`, `{"account_id":"a",`} {
		if _, err := readIDs([]byte(bad), ResourceCompany); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}

// The write side puts a payload's ids first, so readIDs reads them with
// jsonlead and allocates only their strings: decodeIDs, encoding/json's
// token reader, made 41 allocations for an InvoiceDrafted, and 22% then 7%
// of a catch-up's service CPU went there.
func TestReadIDsReadsTheWriteSidesIDsWithoutDecodingThePayload(t *testing.T) {
	ev := draftedEvent(t)
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := readIDs(ev.Data, ResourceInvoice); err != nil {
			t.Fatal(err)
		}
	}); allocs > 3 {
		t.Fatalf("readIDs of an InvoiceDrafted made %.0f allocations; want at most 3, its ids' strings", allocs)
	}
}

// draftedEvent is a generated InvoiceDrafted as the write side records it.
func draftedEvent(t testing.TB) events.RecordedEvent {
	lines := make([]events.InvoiceLine, 5)
	for i := range lines {
		lines[i] = events.InvoiceLine{Description: "Consulting, senior, per day", Quantity: "1.5", UnitAmountMinor: 125000, TaxRateBps: 1900}
	}
	data, err := json.Marshal(events.InvoiceDrafted{InvoiceID: "0190a3c4-0000-7000-8000-000000000001", CompanyID: "0190a3c4-0000-7000-8000-000000000002",
		AccountID: "acme", CustomerID: "0190a3c4-0000-7000-8000-000000000003", Lines: lines,
		Customer: events.CustomerSnapshot{Name: "Kunde GmbH", Address: events.Address{Line1: "Hauptstraße 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"}}})
	if err != nil {
		t.Fatal(err)
	}
	return events.RecordedEvent{Type: events.TypeInvoiceDrafted, Data: data}
}

// BenchmarkSubjectOf reads the subject of a generated InvoiceDrafted, as
// the public-events projection does for every invoice in a catch-up.
func BenchmarkSubjectOf(b *testing.B) {
	ev := draftedEvent(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := SubjectOf(ev); err != nil {
			b.Fatal(err)
		}
	}
}
