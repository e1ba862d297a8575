package transport

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// customerJSON is a customer; Address and Identifiers as in companyJSON.
type customerJSON struct {
	ID                string  `json:"id"`
	CompanyID         string  `json:"company_id"`
	Name              string  `json:"name"`
	Address           any     `json:"address"`
	Email             string  `json:"email,omitempty"`
	ExternalReference string  `json:"external_reference,omitempty"`
	Identifiers       any     `json:"identifiers"`
	ElectronicAddress any     `json:"electronic_address,omitempty"`
	ArchivedAt        *string `json:"archived_at"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
	Version           int     `json:"version"`
}

func customerFromEvent(e events.CustomerCreated) customerJSON {
	return customerJSON{
		ID: e.CustomerID, CompanyID: e.CompanyID, Name: e.Name, Address: e.Address, Email: e.Email,
		ExternalReference: e.ExternalReference, Identifiers: identifiers(e.Identifiers),
		ElectronicAddress: optional(e.ElectronicAddress),
		CreatedAt:         timestamp(e.CreatedAt), UpdatedAt: timestamp(e.CreatedAt), Version: 1,
	}
}

// customerFromState renders a customer as its stream's events make it:
// what a write to it (update, archive, unarchive) answers.
func customerFromState(c events.Customer) customerJSON {
	out := customerFromEvent(c.CustomerCreated)
	out.ArchivedAt, out.UpdatedAt, out.Version = nullableTimestamp(c.ArchivedAt), timestamp(c.UpdatedAt), c.Version
	return out
}

func customerFromQuery(c query.Customer) customerJSON {
	return customerJSON{
		ID: c.ID, CompanyID: c.CompanyID, Name: c.Name, Address: c.Address, Email: c.Email,
		ExternalReference: c.ExternalReference, Identifiers: c.Identifiers,
		ElectronicAddress: optionalRaw(c.ElectronicAddress),
		ArchivedAt:        nullableTimestamp(c.ArchivedAt), CreatedAt: timestamp(c.CreatedAt),
		UpdatedAt: timestamp(c.UpdatedAt), Version: c.Version,
	}
}

// invoiceSummaryJSON is the list form: exactly the spec's summary fields.
type invoiceSummaryJSON struct {
	ID            string   `json:"id"`
	CompanyID     string   `json:"company_id"`
	CustomerID    string   `json:"customer_id"`
	CustomerName  string   `json:"customer_name"`
	Currency      string   `json:"currency"`
	IssueDate     string   `json:"issue_date"`
	DueDate       *string  `json:"due_date"`
	IssuedAt      *apiTime `json:"issued_at"`
	Number        *string  `json:"number"`
	Status        string   `json:"status"`
	SubtotalMinor int64    `json:"subtotal_minor"`
	TaxMinor      int64    `json:"tax_minor"`
	TotalMinor    int64    `json:"total_minor"`
	// The settlement (events.Settlement).
	AmountCreditedMinor   int64    `json:"amount_credited_minor"`
	AmountPaidMinor       int64    `json:"amount_paid_minor"`
	AmountDueMinor        int64    `json:"amount_due_minor"`
	AmountRefundableMinor int64    `json:"amount_refundable_minor"`
	PaymentStatus         string   `json:"payment_status"`
	CreatedAt             apiTime  `json:"created_at"`
	UpdatedAt             apiTime  `json:"updated_at"`
	Version               int      `json:"version"`
	VoidReason            *string  `json:"void_reason"`
	VoidedAt              *apiTime `json:"voided_at"`
	ExternalReference     string   `json:"external_reference,omitempty"`
}

// invoiceJSON is the full form. Customer, Issuer and Lines hold the events'
// values (events.CustomerSnapshot, events.IssuerSnapshot,
// []events.InvoiceLine) when rendered from events, and the read model's
// json.RawMessage, already their rendering, which encoding/json copies as it
// is, when rendered from a query.
type invoiceJSON struct {
	invoiceSummaryJSON
	Customer               any    `json:"customer"`
	Issuer                 any    `json:"issuer"`
	Language               string `json:"language"`
	Lines                  any    `json:"lines"`
	PurchaseOrderReference string `json:"purchase_order_reference,omitempty"`
	Notes                  string `json:"notes,omitempty"`
	Terms                  string `json:"terms,omitempty"`
	// The document terms (all optional) and the VAT breakdown; or, read
	// from the read model, their rendering as a JSON object (documentJSON),
	// whose members appendJSON writes as they are (encoding/json would
	// not: an invoice read from a query is written by appendJSON only).
	events.InvoiceDocumentFields
	documentJSON json.RawMessage
	Payments     []paymentJSON `json:"payments"`
}

// paymentJSON is a payment of an invoice, marked once reversed.
type paymentJSON struct {
	ID             string  `json:"id"`
	AmountMinor    int64   `json:"amount_minor"`
	PaidOn         string  `json:"paid_on"`
	Method         string  `json:"method,omitempty"`
	Reference      string  `json:"reference,omitempty"`
	RecordedAt     string  `json:"recorded_at"`
	ReversedAt     *string `json:"reversed_at"`
	ReversalReason string  `json:"reversal_reason,omitempty"`
}

// withSettlement sets the summary's settlement members.
func (i *invoiceSummaryJSON) withSettlement(s events.Settlement) {
	i.AmountCreditedMinor, i.AmountPaidMinor, i.AmountDueMinor = s.AmountCreditedMinor, s.AmountPaidMinor, s.AmountDueMinor
	i.AmountRefundableMinor, i.PaymentStatus = s.AmountRefundableMinor, s.PaymentStatus
}

// paymentsFromState renders an invoice's payments as its events record
// them, in the order recorded.
func paymentsFromState(ps []events.Payment) []paymentJSON {
	out := make([]paymentJSON, len(ps))
	for n, p := range ps {
		out[n] = paymentJSON{ID: p.PaymentID, AmountMinor: p.AmountMinor, PaidOn: p.PaidOn, Method: p.Method,
			Reference: p.Reference, RecordedAt: timestamp(p.RecordedAt)}
		if p.Reversal != nil {
			out[n].ReversedAt, out[n].ReversalReason = nullableTimestamp(&p.Reversal.ReversedAt), p.Reversal.Reason
		}
	}
	return out
}

func paymentsFromQuery(ps []query.Payment) []paymentJSON {
	out := make([]paymentJSON, len(ps))
	for n, p := range ps {
		out[n] = paymentJSON{ID: p.ID, AmountMinor: p.AmountMinor, PaidOn: p.PaidOn, Method: p.Method,
			Reference: p.Reference, RecordedAt: timestamp(p.RecordedAt), ReversedAt: nullableTimestamp(p.ReversedAt),
			ReversalReason: p.ReversalReason}
	}
	return out
}

func optionalString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// invoiceFromEvent renders a draft as its event records it: version 1, no
// number, never issued or voided.
func invoiceFromEvent(e events.InvoiceDrafted) invoiceJSON {
	return invoiceFromState(events.Invoice{InvoiceDrafted: e, Status: events.StatusDraft, UpdatedAt: e.CreatedAt, Version: 1})
}

// invoiceFromState renders an invoice as its stream's events make it, so a
// lifecycle operation's answer (and its replay) needs no read model.
func invoiceFromState(inv events.Invoice) invoiceJSON {
	e := inv.InvoiceDrafted
	out := invoiceJSON{
		invoiceSummaryJSON: invoiceSummaryJSON{
			ID: e.InvoiceID, CompanyID: e.CompanyID, CustomerID: e.CustomerID, CustomerName: e.CustomerName,
			Currency: e.Currency, IssueDate: e.IssueDate, DueDate: optionalString(e.DueDate),
			IssuedAt: (*apiTime)(inv.IssuedAt), Number: optionalString(inv.Number), Status: inv.Status,
			SubtotalMinor: e.SubtotalMinor, TaxMinor: e.TaxMinor, TotalMinor: e.TotalMinor,
			CreatedAt: apiTime(e.CreatedAt), UpdatedAt: apiTime(inv.UpdatedAt), Version: inv.Version,
			VoidReason: optionalString(inv.VoidReason), VoidedAt: (*apiTime)(inv.VoidedAt),
			ExternalReference: e.ExternalReference,
		},
		Customer: snapshotCustomer(e.Customer), Issuer: snapshotIssuer(e.Issuer), Language: e.Language,
		Lines: e.Lines, PurchaseOrderReference: e.PurchaseOrderReference, Notes: e.Notes, Terms: e.Terms,
		InvoiceDocumentFields: e.DocumentFields(), Payments: paymentsFromState(inv.Payments),
	}
	out.withSettlement(inv.Settlement())
	return out
}

func invoiceSummaryFromQuery(i query.InvoiceSummary) invoiceSummaryJSON {
	out := invoiceSummaryJSON{
		ID: i.ID, CompanyID: i.CompanyID, CustomerID: i.CustomerID, CustomerName: i.CustomerName,
		Currency: i.Currency, IssueDate: i.IssueDate, DueDate: i.DueDate, IssuedAt: (*apiTime)(i.IssuedAt),
		Number: i.Number, Status: i.Status, SubtotalMinor: i.SubtotalMinor, TaxMinor: i.TaxMinor,
		TotalMinor: i.TotalMinor, CreatedAt: apiTime(i.CreatedAt), UpdatedAt: apiTime(i.UpdatedAt),
		Version: i.Version, VoidReason: i.VoidReason, VoidedAt: (*apiTime)(i.VoidedAt),
		ExternalReference: i.ExternalReference,
	}
	out.withSettlement(events.Settlement{AmountCreditedMinor: i.AmountCreditedMinor, AmountPaidMinor: i.AmountPaidMinor,
		AmountDueMinor: i.AmountDueMinor, AmountRefundableMinor: i.AmountRefundableMinor, PaymentStatus: i.PaymentStatus})
	return out
}

// invoiceFromQuery renders the read model's invoice. Its documents pass
// through as stored, the document fields too (documentJSON): the projection
// stored them as events.InvoiceDocumentFields renders, a tax breakdown
// always among them (InvoiceDrafted.DocumentFields). Decoding them on every
// get, only to write them again, was 6.5% of a get's service CPU.
func invoiceFromQuery(i query.Invoice) (invoiceJSON, error) {
	if !isObject(i.Document) {
		return invoiceJSON{}, fmt.Errorf("invoice %s: document fields: %w", i.ID, errNotAnObject)
	}
	return invoiceJSON{
		invoiceSummaryJSON: invoiceSummaryFromQuery(i.InvoiceSummary),
		Customer:           i.Customer, Issuer: i.Issuer, Language: i.Language,
		Lines: i.Lines, PurchaseOrderReference: i.PurchaseOrderReference, Notes: i.Notes, Terms: i.Terms,
		documentJSON: i.Document, Payments: paymentsFromQuery(i.Payments),
	}, nil
}

// errNotAnObject means a stored document is not the JSON object the
// projection writes.
var errNotAnObject = errors.New("not a JSON object")

// isObject reports whether doc is delimited as a JSON object is (the
// projection wrote it with encoding/json: no space around it).
func isObject(doc []byte) bool {
	return len(doc) >= 2 && doc[0] == '{' && doc[len(doc)-1] == '}'
}

func snapshotCustomer(s events.CustomerSnapshot) events.CustomerSnapshot {
	s.Identifiers = identifiers(s.Identifiers)
	return s
}

func snapshotIssuer(s events.IssuerSnapshot) events.IssuerSnapshot {
	s.Identifiers = identifiers(s.Identifiers)
	return s
}
