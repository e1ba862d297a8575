package transport

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
)

// Customers of a company: POST and GET /v1/companies/{company_id}/customers,
// GET /v1/companies/{company_id}/customers/{customer_id}.

func (s *server) createCustomer(w http.ResponseWriter, r *http.Request) error {
	companyID, err := companyParam(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyRequired, command.ParseCreateCustomer)
	if err != nil {
		return err
	}
	created, err := s.Commands.CreateCustomer(r.Context(), commandRequest(r), companyID, body)
	if err != nil {
		return err
	}
	c := created.Value
	writeCreated(w, customerLocation(c.CompanyID, c.CustomerID), created.Replayed, customerFromEvent(c))
	return nil
}

func (s *server) getCustomer(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	customerID := pathUUID(perr, "customer_id", mux.Vars(r)["customer_id"])
	if err := perr.OrNil(); err != nil {
		return err
	}
	c, err := s.Queries.Customer(r.Context(), principal(r).AccountID, companyID, customerID)
	if err != nil {
		return err
	}
	writeResource(w, r, etag(c.ID, c.Version), customerFromQuery(c))
	return nil
}

func (s *server) listCustomers(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	params := parseList(perr, r.URL.Query(), "external_reference")
	filter := query.CustomerFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if err := perr.OrNil(); err != nil {
		return err
	}
	page, err := s.Queries.Customers(r.Context(), principal(r).AccountID, companyID, filter, params.page)
	if err := s.listedCompanyExists(r, companyID, len(page.Items), err); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, customerFromQuery))
	return nil
}
