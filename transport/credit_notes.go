package transport

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// Credit notes of a company: GET /v1/companies/{company_id}/credit_notes
// and GET .../credit_notes/{credit_note_id}.

// creditNoteJSON is a credit note's full form. Customer, Issuer and Lines
// hold the event's values when rendered from the event, and the read
// model's rendering of them when rendered from a query (as invoiceJSON).
type creditNoteJSON struct {
	ID                string `json:"id"`
	CompanyID         string `json:"company_id"`
	InvoiceID         string `json:"invoice_id"`
	InvoiceNumber     string `json:"invoice_number"`
	InvoiceIssueDate  string `json:"invoice_issue_date"`
	CustomerID        string `json:"customer_id"`
	CustomerName      string `json:"customer_name"`
	Number            string `json:"number"`
	IssueDate         string `json:"issue_date"`
	Reason            string `json:"reason"`
	ExternalReference string `json:"external_reference,omitempty"`
	Currency          string `json:"currency"`
	Language          string `json:"language"`
	Customer          any    `json:"customer"`
	Issuer            any    `json:"issuer"`
	Lines             any    `json:"lines"`
	SubtotalMinor     int64  `json:"subtotal_minor"`
	TaxMinor          int64  `json:"tax_minor"`
	TotalMinor        int64  `json:"total_minor"`
	// The document terms copied from the invoice (all optional) and the
	// credit note's VAT breakdown.
	events.InvoiceDocumentFields
	IssuedAt string `json:"issued_at"`
}

// creditNoteSummaryJSON is the list form: exactly the spec's summary
// fields.
type creditNoteSummaryJSON struct {
	ID                string `json:"id"`
	CompanyID         string `json:"company_id"`
	InvoiceID         string `json:"invoice_id"`
	InvoiceNumber     string `json:"invoice_number"`
	CustomerID        string `json:"customer_id"`
	CustomerName      string `json:"customer_name"`
	Number            string `json:"number"`
	IssueDate         string `json:"issue_date"`
	Reason            string `json:"reason"`
	ExternalReference string `json:"external_reference,omitempty"`
	Currency          string `json:"currency"`
	SubtotalMinor     int64  `json:"subtotal_minor"`
	TaxMinor          int64  `json:"tax_minor"`
	TotalMinor        int64  `json:"total_minor"`
	IssuedAt          string `json:"issued_at"`
}

// creditNoteFromEvent renders a credit note as its event records it: what
// issuing one answers (and its replay), without the read model.
func creditNoteFromEvent(e events.CreditNoteIssued) creditNoteJSON {
	breakdown := e.TaxBreakdown
	if breakdown == nil {
		breakdown = []events.TaxBreakdown{}
	}
	return creditNoteJSON{
		ID: e.CreditNoteID, CompanyID: e.CompanyID, InvoiceID: e.InvoiceID, InvoiceNumber: e.InvoiceNumber,
		InvoiceIssueDate: e.InvoiceIssueDate, CustomerID: e.CustomerID, CustomerName: e.CustomerName,
		Number: e.Number, IssueDate: e.IssueDate, Reason: e.Reason, ExternalReference: e.ExternalReference,
		Currency: e.Currency, Language: e.Language, Customer: snapshotCustomer(e.Customer),
		Issuer: snapshotIssuer(e.Issuer), Lines: e.Lines,
		SubtotalMinor: e.SubtotalMinor, TaxMinor: e.TaxMinor, TotalMinor: e.TotalMinor,
		InvoiceDocumentFields: events.InvoiceDocumentFields{DocumentTerms: e.DocumentTerms, TaxBreakdown: breakdown},
		IssuedAt:              timestamp(e.IssuedAt),
	}
}

// creditNoteFromQuery renders the read model's credit note; its document
// fields are decoded (the other documents pass through as stored).
func creditNoteFromQuery(c query.CreditNote) (creditNoteJSON, error) {
	var doc events.InvoiceDocumentFields
	if err := json.Unmarshal(c.Document, &doc); err != nil {
		return creditNoteJSON{}, fmt.Errorf("credit note %s: document fields: %w", c.ID, err)
	}
	if doc.TaxBreakdown == nil {
		doc.TaxBreakdown = []events.TaxBreakdown{}
	}
	return creditNoteJSON{
		ID: c.ID, CompanyID: c.CompanyID, InvoiceID: c.InvoiceID, InvoiceNumber: c.InvoiceNumber,
		InvoiceIssueDate: c.InvoiceIssueDate, CustomerID: c.CustomerID, CustomerName: c.CustomerName,
		Number: c.Number, IssueDate: c.IssueDate, Reason: c.Reason, ExternalReference: c.ExternalReference,
		Currency: c.Currency, Language: c.Language, Customer: c.Customer, Issuer: c.Issuer, Lines: c.Lines,
		SubtotalMinor: c.SubtotalMinor, TaxMinor: c.TaxMinor, TotalMinor: c.TotalMinor,
		InvoiceDocumentFields: doc, IssuedAt: timestamp(c.IssuedAt),
	}, nil
}

func creditNoteSummaryFromQuery(c query.CreditNoteSummary) creditNoteSummaryJSON {
	return creditNoteSummaryJSON{
		ID: c.ID, CompanyID: c.CompanyID, InvoiceID: c.InvoiceID, InvoiceNumber: c.InvoiceNumber,
		CustomerID: c.CustomerID, CustomerName: c.CustomerName, Number: c.Number, IssueDate: c.IssueDate,
		Reason: c.Reason, ExternalReference: c.ExternalReference, Currency: c.Currency,
		SubtotalMinor: c.SubtotalMinor, TaxMinor: c.TaxMinor, TotalMinor: c.TotalMinor, IssuedAt: timestamp(c.IssuedAt),
	}
}

// eventCreditNote decodes the read model's credit note into the event's
// shape, which einvoice maps (as eventInvoice does for invoices). The read
// model keeps no account id and no settlement of the invoice: neither is
// on the document.
func eventCreditNote(c query.CreditNote) (events.CreditNoteIssued, error) {
	e := events.CreditNoteIssued{
		CreditNoteID: c.ID, InvoiceID: c.InvoiceID, CompanyID: c.CompanyID, CustomerID: c.CustomerID,
		InvoiceNumber: c.InvoiceNumber, InvoiceIssueDate: c.InvoiceIssueDate, Number: c.Number,
		Sequence: uint64(c.Sequence), IssueDate: c.IssueDate, Reason: c.Reason, ExternalReference: c.ExternalReference,
		CustomerName: c.CustomerName, Currency: c.Currency, Language: c.Language,
		SubtotalMinor: c.SubtotalMinor, TaxMinor: c.TaxMinor, TotalMinor: c.TotalMinor, IssuedAt: c.IssuedAt,
	}
	var doc events.InvoiceDocumentFields
	err := errors.Join(json.Unmarshal(c.Customer, &e.Customer), json.Unmarshal(c.Issuer, &e.Issuer),
		json.Unmarshal(c.Lines, &e.Lines), json.Unmarshal(c.Document, &doc))
	if err != nil {
		return events.CreditNoteIssued{}, fmt.Errorf("credit note %s: decode the read model's documents: %w", c.ID, err)
	}
	e.DocumentTerms, e.TaxBreakdown = doc.DocumentTerms, doc.TaxBreakdown
	return e, nil
}

func (s *server) listCreditNotes(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	companyID := pathUUID(perr, "company_id", r.PathValue("company_id"))
	params := parseList(perr, r.URL.Query(), "invoice_id", "customer_id", "external_reference")
	filter := query.CreditNoteFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if v, ok := params.filters["invoice_id"]; ok {
		filter.InvoiceID = pathUUID(perr, "invoice_id", v)
	}
	if v, ok := params.filters["customer_id"]; ok {
		filter.CustomerID = pathUUID(perr, "customer_id", v)
	}
	if err := perr.OrNil(); err != nil {
		return err
	}
	page, err := s.Queries.CreditNotes(r.Context(), principal(r).AccountID, companyID, filter, params.page)
	if err := s.listedCompanyExists(r, companyID, len(page.Items), err); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, creditNoteSummaryFromQuery))
	return nil
}

func (s *server) getCreditNote(w http.ResponseWriter, r *http.Request) error {
	companyID, creditNoteID, err := creditNoteParams(r)
	if err != nil {
		return err
	}
	if !acceptable(r.Header.Values("Accept"), "application/json") {
		return errNotAcceptable
	}
	cn, err := s.Queries.CreditNote(r.Context(), principal(r).AccountID, companyID, creditNoteID)
	if err != nil {
		return err
	}
	out, err := creditNoteFromQuery(cn)
	if err != nil {
		return err
	}
	// A credit note never changes: its one version is its event.
	writeResource(w, r, etag(cn.ID, 1), out)
	return nil
}

// creditNoteParams reads and checks {company_id} and {credit_note_id}.
func creditNoteParams(r *http.Request) (companyID, creditNoteID string, err error) {
	perr := &command.ValidationError{}
	companyID = pathUUID(perr, "company_id", r.PathValue("company_id"))
	creditNoteID = pathUUID(perr, "credit_note_id", r.PathValue("credit_note_id"))
	return companyID, creditNoteID, perr.OrNil()
}
