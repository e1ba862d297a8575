// Package publicevents names the events integrators see: GET /v1/events and
// webhook deliveries (docs/public-events.md). The public names are a
// contract of their own, versioned by Version and stable apart from the
// internal event types (events.Types), which may be renamed or split
// without integrators noticing. Numbering events are bookkeeping of the
// write side and have no public name.
package publicevents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/jsonlead"
)

// Version is the version of the public event shape and of the data each
// type carries; api_version of every public event.
const Version = "2026-11-26"

// The public event types.
const (
	CompanyCreated     = "company.created"
	CompanyUpdated     = "company.updated"
	CompanyArchived    = "company.archived"
	CompanyUnarchived  = "company.unarchived"
	CustomerCreated    = "customer.created"
	CustomerUpdated    = "customer.updated"
	CustomerArchived   = "customer.archived"
	CustomerUnarchived = "customer.unarchived"
	InvoiceDrafted     = "invoice.drafted"
	InvoiceRevised     = "invoice.revised"
	InvoiceIssued      = "invoice.issued"
	InvoiceVoided      = "invoice.voided"
	CreditNoteIssued   = "credit_note.issued"
	PaymentRecorded    = "invoice.payment_recorded"
	PaymentReversed    = "invoice.payment_reversed"
)

// Resource kinds: what a public event's data is.
const (
	ResourceCompany    = "company"
	ResourceCustomer   = "customer"
	ResourceInvoice    = "invoice"
	ResourceCreditNote = "credit_note"
)

// public maps each internal event type that has a public name to it and
// the kind of resource its data is: the one home of that mapping.
var public = map[string]struct{ name, resource string }{
	events.TypeCompanyCreated:     {CompanyCreated, ResourceCompany},
	events.TypeCompanyUpdated:     {CompanyUpdated, ResourceCompany},
	events.TypeCompanyArchived:    {CompanyArchived, ResourceCompany},
	events.TypeCompanyUnarchived:  {CompanyUnarchived, ResourceCompany},
	events.TypeCustomerCreated:    {CustomerCreated, ResourceCustomer},
	events.TypeCustomerUpdated:    {CustomerUpdated, ResourceCustomer},
	events.TypeCustomerArchived:   {CustomerArchived, ResourceCustomer},
	events.TypeCustomerUnarchived: {CustomerUnarchived, ResourceCustomer},
	events.TypeInvoiceDrafted:     {InvoiceDrafted, ResourceInvoice},
	events.TypeInvoiceRevised:     {InvoiceRevised, ResourceInvoice},
	events.TypeInvoiceIssued:      {InvoiceIssued, ResourceInvoice},
	events.TypeInvoiceVoided:      {InvoiceVoided, ResourceInvoice},
	events.TypeCreditNoteIssued:   {CreditNoteIssued, ResourceCreditNote},
	events.TypePaymentRecorded:    {PaymentRecorded, ResourceInvoice},
	events.TypePaymentReversed:    {PaymentReversed, ResourceInvoice},
}

// Types lists every public type, sorted.
var Types = sortedTypes()

func sortedTypes() []string {
	out := make([]string, 0, len(public))
	for _, p := range public {
		out = append(out, p.name)
	}
	sort.Strings(out)
	return out
}

// TypeOf returns the public type of an internal event type, and false for
// an event integrators never see.
func TypeOf(internalType string) (string, bool) {
	p, ok := public[internalType]
	return p.name, ok
}

// ResourceOf returns the kind of resource (ResourceCompany, ...) a public
// event of the internal type carries as its data, and false for an event
// that is not public.
func ResourceOf(internalType string) (string, bool) {
	p, ok := public[internalType]
	return p.resource, ok
}

// IsType reports whether t is one of Types.
func IsType(t string) bool {
	i := sort.SearchStrings(Types, t)
	return i < len(Types) && Types[i] == t
}

// Event is a public event as JSON renders it, its fields in the
// documented order. Data is the resource as its GET rendered it right
// after the event.
type Event struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	APIVersion string          `json:"api_version"`
	CreatedAt  string          `json:"created_at"`
	CompanyID  string          `json:"company_id"`
	ResourceID string          `json:"resource_id"`
	Data       json.RawMessage `json:"data"`
}

// Subject is what a public event is about: its public type, the account
// and company it belongs to, and the id of the resource its data is.
type Subject struct {
	Type, Resource                   string
	AccountID, CompanyID, ResourceID string
}

// ids are the identifying fields every public event's payload carries.
type ids struct {
	AccountID    string `json:"account_id"`
	CompanyID    string `json:"company_id"`
	CustomerID   string `json:"customer_id"`
	InvoiceID    string `json:"invoice_id"`
	CreditNoteID string `json:"credit_note_id"`
}

// field is the field of ids a top-level key names, nil for any other key.
func (v *ids) field(key string) *string {
	switch key {
	case "account_id":
		return &v.AccountID
	case "company_id":
		return &v.CompanyID
	case "customer_id":
		return &v.CustomerID
	case "invoice_id":
		return &v.InvoiceID
	case "credit_note_id":
		return &v.CreditNoteID
	}
	return nil
}

// complete reports whether v holds the account, the company and the id of
// the resource of kind resource.
func (v *ids) complete(resource string) bool {
	return v.AccountID != "" && v.CompanyID != "" && v.resourceID(resource) != ""
}

// resourceID is the id of the resource of kind resource.
func (v *ids) resourceID(resource string) string {
	switch resource {
	case ResourceCompany:
		return v.CompanyID
	case ResourceCustomer:
		return v.CustomerID
	case ResourceInvoice:
		return v.InvoiceID
	case ResourceCreditNote:
		return v.CreditNoteID
	}
	return ""
}

// readIDs reads the top-level ids of a payload up to the point where the
// account, the company and the resource's id are known. The write side
// puts them first, as plain strings, so jsonlead reads them without
// decoding the rest of an InvoiceDrafted's 2 KB; the public-events
// projection spent 7% of a catch-up's service CPU in decodeIDs, and 22%
// before that in json.Unmarshal, which scanned it all twice.
func readIDs(data []byte, resource string) (ids, error) {
	var v ids
	if jsonlead.Strings(data, func(key, value []byte) bool {
		if f := v.field(string(key)); f != nil {
			*f = string(value)
		}
		return !v.complete(resource)
	}) {
		return v, nil
	}
	return decodeIDs(data, resource)
}

// decodeIDs is readIDs for any payload, with encoding/json's token reader.
// The payload is valid JSON (the event store's json column holds nothing
// else); a member that is not an id is skipped whole, so ids nested deeper
// never count.
func decodeIDs(data []byte, resource string) (ids, error) {
	var v ids
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return v, fmt.Errorf("not a JSON object (%v)", err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return v, err
		}
		key, _ := tok.(string) // an object's member names are strings
		if f := v.field(key); f != nil {
			err = dec.Decode(f)
		} else {
			err = dec.Decode(&json.RawMessage{})
		}
		if err != nil {
			return v, fmt.Errorf("%s: %w", key, err)
		}
		if v.complete(resource) {
			return v, nil
		}
	}
	return v, nil
}

// SubjectOf reads ev's subject from its payload; ok is false for an event
// that is not public. The resource is the company, customer or invoice
// whose stream ev is in, and for credit_note.issued the credit note.
func SubjectOf(ev events.RecordedEvent) (s Subject, ok bool, err error) {
	p, ok := public[ev.Type]
	if !ok {
		return Subject{}, false, nil
	}
	v, err := readIDs(ev.Data, p.resource)
	if err != nil {
		return Subject{}, true, fmt.Errorf("publicevents: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	s = Subject{Type: p.name, Resource: p.resource, AccountID: v.AccountID, CompanyID: v.CompanyID, ResourceID: v.resourceID(p.resource)}
	if s.AccountID == "" || s.CompanyID == "" || s.ResourceID == "" {
		return Subject{}, true, fmt.Errorf("publicevents: %s event %x names no account, company or %s", ev.Type, ev.ID, p.resource)
	}
	return s, true, nil
}
