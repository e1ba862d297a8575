package transport

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/query"
)

// companyPath reads and checks the {company_id} path parameter.
func companyPath(r *http.Request) (string, error) {
	perr := &paramError{}
	id := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	return id, perr.orNil()
}

// companyExists makes a list under another account's (or no) company a 404
// rather than an empty page.
func (s *server) companyExists(r *http.Request, companyID string) error {
	_, err := s.Queries.Company(r.Context(), principal(r).AccountID, companyID)
	return err
}

func (s *server) createCustomer(w http.ResponseWriter, r *http.Request) error {
	companyID, err := companyPath(r)
	if err != nil {
		return err
	}
	body, err := readObject(r, s.MaxBodyBytes)
	if err != nil {
		return err
	}
	created, err := s.Commands.CreateCustomer(r.Context(), commandRequest(r), companyID, body)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, customerFromEvent(created))
	return nil
}

func (s *server) getCustomer(w http.ResponseWriter, r *http.Request) error {
	perr := &paramError{}
	companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	id := pathUUID(perr, "customer_id", mux.Vars(r)["customer_id"])
	if err := perr.orNil(); err != nil {
		return err
	}
	c, err := s.Queries.Customer(r.Context(), principal(r).AccountID, companyID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, customerFromQuery(c))
	return nil
}

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
