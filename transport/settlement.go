package transport

import (
	"context"
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/einvoice"
	"github.com/invoicing/invoicing/events"
)

// Corrections and settlement of an issued invoice: POST
// .../invoices/{invoice_id}/credit_notes, .../payments and
// .../payments/{payment_id}/reverse, and the credit note's documents.

// issueCreditNote credits an issued invoice: 201 with the credit note.
func (s *server) issueCreditNote(w http.ResponseWriter, r *http.Request) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyRequired, command.ParseIssueCreditNote)
	if err != nil {
		return err
	}
	issued, err := s.Commands.IssueCreditNote(r.Context(), commandRequest(r), companyID, invoiceID, body)
	if err != nil {
		return err
	}
	cn := issued.Value
	writeCreated(w, creditNoteLocation(cn.CompanyID, cn.CreditNoteID), issued.Replayed, creditNoteFromEvent(cn))
	return nil
}

// recordPayment records a payment of an issued invoice: 201 with the
// invoice as the payment left it (the payment is one of its payments).
func (s *server) recordPayment(w http.ResponseWriter, r *http.Request) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyRequired, command.ParseRecordPayment)
	if err != nil {
		return err
	}
	paid, err := s.Commands.RecordPayment(r.Context(), commandRequest(r), companyID, invoiceID, body)
	if err != nil {
		return err
	}
	inv := paid.Value
	w.Header().Set("ETag", etag(inv.InvoiceID, inv.Version))
	writeCreated(w, invoiceLocation(inv.CompanyID, inv.InvoiceID), paid.Replayed, invoiceFromState(inv))
	return nil
}

// reversePayment reverses a payment, which may be sent without a body:
// 200 with the invoice as the reversal left it.
func (s *server) reversePayment(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	paymentID := pathUUID(perr, "payment_id", r.PathValue("payment_id"))
	if err := perr.OrNil(); err != nil {
		return err
	}
	return changeInvoice(s, w, r, command.ParseReversePayment,
		func(ctx context.Context, req command.Request, companyID, invoiceID string, body command.Parsed[command.ReversePayment]) (command.Result[events.Invoice], error) {
			return s.Commands.ReversePayment(ctx, req, companyID, invoiceID, paymentID, body)
		})
}

// getCreditNoteEInvoice: GET .../credit_notes/{credit_note_id}/einvoice,
// the credit note as an EN 16931 e-invoice (type 381), as an invoice's.
func (s *server) getCreditNoteEInvoice(w http.ResponseWriter, r *http.Request) error {
	companyID, creditNoteID, err := creditNoteParams(r)
	if err != nil {
		return err
	}
	return s.serveEInvoice(w, r, func() (einvoice.Document, error) { return s.creditNoteDocument(r, companyID, creditNoteID) })
}

// getCreditNotePDF: GET .../credit_notes/{credit_note_id}/pdf, carrying
// its CII as an invoice's PDF does.
func (s *server) getCreditNotePDF(w http.ResponseWriter, r *http.Request) error {
	companyID, creditNoteID, err := creditNoteParams(r)
	if err != nil {
		return err
	}
	return s.servePDF(w, r, func() (einvoice.Document, error) { return s.creditNoteDocument(r, companyID, creditNoteID) })
}

// creditNoteDocument is the credit note's Document, from the read model's
// credit note (its frozen snapshots).
func (s *server) creditNoteDocument(r *http.Request, companyID, creditNoteID string) (einvoice.Document, error) {
	q, err := s.Queries.CreditNote(r.Context(), principal(r).AccountID, companyID, creditNoteID)
	if err != nil {
		return einvoice.Document{}, err
	}
	cn, err := eventCreditNote(q)
	if err != nil {
		return einvoice.Document{}, err
	}
	return einvoice.FromCreditNote(cn)
}
