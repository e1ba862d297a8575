package transport

import (
	"context"
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// Customers of a company: POST and GET /v1/companies/{company_id}/customers,
// GET and PATCH /v1/companies/{company_id}/customers/{customer_id}, and
// POST .../archive and .../unarchive.

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
	companyID, customerID, err := customerParams(r)
	if err != nil {
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
	companyID := pathUUID(perr, "company_id", r.PathValue("company_id"))
	params := parseList(perr, r.URL.Query(), "archived", "external_reference")
	filter := query.CustomerFilter{ExternalReference: params.text(perr, "external_reference", 255),
		Archived: params.boolean(perr, "archived")}
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

func (s *server) updateCustomer(w http.ResponseWriter, r *http.Request) error {
	companyID, customerID, err := customerParams(r)
	if err != nil {
		return err
	}
	body, err := decodePatch(r, s.MaxBodyBytes, command.ParseUpdateCustomer)
	if err != nil {
		return err
	}
	changed, err := s.Commands.UpdateCustomer(r.Context(), commandRequest(r), companyID, customerID, body)
	return writeCustomer(w, changed, err)
}

func (s *server) archiveCustomer(w http.ResponseWriter, r *http.Request) error {
	return setCustomerArchived(s, w, r, s.Commands.ArchiveCustomer)
}

func (s *server) unarchiveCustomer(w http.ResponseWriter, r *http.Request) error {
	return setCustomerArchived(s, w, r, s.Commands.UnarchiveCustomer)
}

// setCustomerArchived runs an archive or unarchive, which may be sent
// without a body.
func setCustomerArchived(s *server, w http.ResponseWriter, r *http.Request,
	run func(context.Context, command.Request, string, string, command.Parsed[command.Archive]) (command.Result[events.Customer], error)) error {
	companyID, customerID, err := customerParams(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyOptional, command.ParseArchive)
	if err != nil {
		return err
	}
	changed, err := run(r.Context(), commandRequest(r), companyID, customerID, body)
	return writeCustomer(w, changed, err)
}

// writeCustomer answers a write to a customer: 200 with the customer as
// the write left it.
func writeCustomer(w http.ResponseWriter, changed command.Result[events.Customer], err error) error {
	if err != nil {
		return err
	}
	c := changed.Value
	writeChanged(w, etag(c.CustomerID, c.Version), changed.Replayed, customerFromState(c))
	return nil
}

// customerParams reads and checks {company_id} and {customer_id}.
func customerParams(r *http.Request) (companyID, customerID string, err error) {
	perr := &command.ValidationError{}
	companyID = pathUUID(perr, "company_id", r.PathValue("company_id"))
	customerID = pathUUID(perr, "customer_id", r.PathValue("customer_id"))
	return companyID, customerID, perr.OrNil()
}
