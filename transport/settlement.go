package transport

import "net/http"

// Corrections and settlement of an issued invoice: POST
// .../invoices/{invoice_id}/credit_notes, .../payments and
// .../payments/{payment_id}/reverse, and the credit note's documents.

func (s *server) issueCreditNote(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}

func (s *server) recordPayment(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}

func (s *server) reversePayment(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}

func (s *server) getCreditNoteEInvoice(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}

func (s *server) getCreditNotePDF(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}
