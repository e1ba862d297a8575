package transport

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/einvoice"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// GET /v1/companies/{company_id}/invoices/{invoice_id}/einvoice?syntax=ubl|cii:
// the issued (or void) invoice as an EN 16931 e-invoice.

// errNotAcceptable: the request's Accept excludes what the resource is.
var errNotAcceptable = errors.New("the Accept header excludes the media type of this resource")

// documentIncompleteError lists the EN 16931 rules an invoice's data does
// not meet, so that no valid document can be made of it: 422
// document_incomplete, one detail per rule at the record field to fix.
type documentIncompleteError struct {
	problems []einvoice.Problem
}

func (e *documentIncompleteError) Error() string {
	rules := make([]string, len(e.problems))
	for i, p := range e.problems {
		rules[i] = p.Rule
	}
	return "document incomplete: " + strings.Join(rules, ", ")
}

func (e *documentIncompleteError) details() []detailJSON {
	out := make([]detailJSON, len(e.problems))
	for i, p := range e.problems {
		out[i] = detailJSON{Message: p.Message, Path: p.Path}
	}
	return out
}

// The syntaxes of an e-invoice, by the name the query parameter takes.
var einvoiceSyntaxes = map[string]func(einvoice.Document) ([]byte, error){
	"ubl": einvoice.RenderUBL,
	"cii": einvoice.RenderCII,
}

const xmlMediaType = "application/xml"

func (s *server) getEInvoice(w http.ResponseWriter, r *http.Request) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	return s.serveEInvoice(w, r, func() (einvoice.Document, error) { return s.invoiceDocument(r, companyID, invoiceID) })
}

// serveEInvoice answers a GET of the e-invoice of the document load reads
// (an invoice's, a credit note's): ?syntax=ubl (the default) or cii.
func (s *server) serveEInvoice(w http.ResponseWriter, r *http.Request, load func() (einvoice.Document, error)) error {
	syntax := r.URL.Query().Get("syntax")
	if syntax == "" {
		syntax = "ubl"
	}
	render, ok := einvoiceSyntaxes[syntax]
	if !ok {
		return &command.ValidationError{Violations: []command.Violation{{Path: "syntax", Message: "must be ubl or cii"}}}
	}
	if !acceptable(r.Header.Values("Accept"), xmlMediaType) {
		return errNotAcceptable
	}
	doc, err := load()
	if err != nil {
		return err
	}
	if doc.Status == einvoice.StatusDraft {
		return fmt.Errorf("%w: the invoice is a draft; it has no number and is no legal document until it is issued", command.ErrInvalidState)
	}
	if problems := einvoice.Check(doc); len(problems) > 0 {
		return &documentIncompleteError{problems: problems}
	}
	body, err := render(doc)
	if err != nil {
		return fmt.Errorf("render %s e-invoice %s: %w", syntax, doc.Number, err)
	}
	writeDocument(w, r, xmlMediaType, body)
	return nil
}

// invoiceDocument is the invoice's Document, from the read model's full
// invoice (its snapshots, never the current records).
func (s *server) invoiceDocument(r *http.Request, companyID, invoiceID string) (einvoice.Document, error) {
	inv, err := s.Queries.Invoice(r.Context(), principal(r).AccountID, companyID, invoiceID)
	if err != nil {
		return einvoice.Document{}, err
	}
	ev, err := eventInvoice(inv)
	if err != nil {
		return einvoice.Document{}, err
	}
	return einvoice.FromInvoice(ev)
}

// eventInvoice decodes the read model's full invoice into the events'
// shape that einvoice maps.
func eventInvoice(q query.Invoice) (events.Invoice, error) {
	inv := events.Invoice{Status: q.Status, Version: q.Version, UpdatedAt: q.UpdatedAt, IssuedAt: q.IssuedAt, VoidedAt: q.VoidedAt}
	d := &inv.InvoiceDrafted
	d.InvoiceID, d.CompanyID, d.CustomerID, d.CustomerName = q.ID, q.CompanyID, q.CustomerID, q.CustomerName
	d.Currency, d.Language, d.IssueDate, d.CreatedAt = q.Currency, q.Language, q.IssueDate, q.CreatedAt
	d.SubtotalMinor, d.TaxMinor, d.TotalMinor = q.SubtotalMinor, q.TaxMinor, q.TotalMinor
	d.ExternalReference, d.PurchaseOrderReference, d.Notes, d.Terms = q.ExternalReference, q.PurchaseOrderReference, q.Notes, q.Terms
	if q.DueDate != nil {
		d.DueDate = *q.DueDate
	}
	if q.Number != nil {
		inv.Number = *q.Number
	}
	if q.VoidReason != nil {
		inv.VoidReason = *q.VoidReason
	}
	var doc events.InvoiceDocumentFields
	err := errors.Join(json.Unmarshal(q.Customer, &d.Customer), json.Unmarshal(q.Issuer, &d.Issuer),
		json.Unmarshal(q.Lines, &d.Lines), json.Unmarshal(q.Document, &doc))
	if err != nil {
		return events.Invoice{}, fmt.Errorf("invoice %s: decode the read model's documents: %w", q.ID, err)
	}
	d.DocumentTerms, d.TaxBreakdown = doc.DocumentTerms, doc.TaxBreakdown
	inv.Payments = eventPayments(q)
	return inv, nil
}

// eventPayments are the read model's payments of q as the events record
// them, so that inv.Settlement() gives the paid amount (BT-113). The
// credit notes are not read here: inv.Settlement() of the result counts
// none (the read model's AmountCreditedMinor has what they took).
func eventPayments(q query.Invoice) []events.Payment {
	out := make([]events.Payment, len(q.Payments))
	for n, p := range q.Payments {
		out[n].PaymentRecorded = events.PaymentRecorded{PaymentID: p.ID, InvoiceID: q.ID, CompanyID: q.CompanyID,
			AmountMinor: p.AmountMinor, PaidOn: p.PaidOn, Method: p.Method, Reference: p.Reference, RecordedAt: p.RecordedAt}
		if p.ReversedAt != nil {
			out[n].Reversal = &events.PaymentReversed{PaymentID: p.ID, InvoiceID: q.ID, CompanyID: q.CompanyID,
				Reason: p.ReversalReason, ReversedAt: *p.ReversedAt}
		}
	}
	return out
}

// writeDocument answers a GET of a rendered document: 200 with its bytes
// and a strong ETag of them (rendering is deterministic), or 304 when
// If-None-Match names it.
func writeDocument(w http.ResponseWriter, r *http.Request, mediaType string, body []byte) {
	sum := sha256.Sum256(body)
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
	w.Header().Set("ETag", tag)
	if noneMatch(r.Header.Values("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", mediaType)
	w.Header().Set("Content-Length", fmt.Sprint(len(body)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
}
