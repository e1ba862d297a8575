package transport

import "net/http"

// Credit notes of a company: GET /v1/companies/{company_id}/credit_notes
// and GET .../credit_notes/{credit_note_id}.

func (s *server) listCreditNotes(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}

func (s *server) getCreditNote(w http.ResponseWriter, r *http.Request) error {
	return errRouteNotFound
}
