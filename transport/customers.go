package transport

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/query"
)

func (s *server) listCustomers(w http.ResponseWriter, r *http.Request) error {
	perr := &paramError{}
	companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	params, qerr := parseList(r.URL.Query(), "external_reference")
	perr.details = append(perr.details, qerr.details...)
	filter := query.CustomerFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if err := perr.orNil(); err != nil {
		return err
	}
	if err := s.companyExists(r, companyID); err != nil {
		return err
	}
	page, err := s.Queries.Customers(r.Context(), principal(r).AccountID, companyID, filter, params.page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, customerFromQuery))
	return nil
}
