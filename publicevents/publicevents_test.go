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
	bookkeeping := map[string]bool{events.TypeInvoiceNumberAssigned: true, events.TypeCreditNoteNumberAssigned: true}
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
