package transport

import (
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
)

// Companies: POST /v1/companies, GET /v1/companies,
// GET /v1/companies/{company_id}.

func (s *server) createCompany(w http.ResponseWriter, r *http.Request) error {
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyRequired, command.ParseCreateCompany)
	if err != nil {
		return err
	}
	created, err := s.Commands.CreateCompany(r.Context(), commandRequest(r), body)
	if err != nil {
		return err
	}
	c := created.Value
	writeCreated(w, companyLocation(c.CompanyID), created.Replayed, companyFromEvent(c))
	return nil
}

func (s *server) getCompany(w http.ResponseWriter, r *http.Request) error {
	companyID, err := companyParam(r)
	if err != nil {
		return err
	}
	c, err := s.Queries.Company(r.Context(), principal(r).AccountID, companyID)
	if err != nil {
		return err
	}
	writeResource(w, r, etag(c.ID, c.Version), companyFromQuery(c))
	return nil
}

func (s *server) listCompanies(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	params := parseList(perr, r.URL.Query(), "external_reference")
	filter := query.CompanyFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if err := perr.OrNil(); err != nil {
		return err
	}
	page, err := s.Queries.Companies(r.Context(), principal(r).AccountID, filter, params.page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, companyFromQuery))
	return nil
}

// listedCompanyExists makes a list under another account's (or no) company
// a 404 rather than an empty page, and otherwise returns listErr, the list's
// own error. A page with items needs no check: the list's query selects by
// account and company, so its rows prove the company is the caller's. An
// empty page, or a list that failed (a cursor of another list, say), does
// not, and the 404 comes first, as when the company was checked before the
// list.
func (s *server) listedCompanyExists(r *http.Request, companyID string, items int, listErr error) error {
	if listErr == nil && items > 0 {
		return nil
	}
	if _, err := s.Queries.Company(r.Context(), principal(r).AccountID, companyID); err != nil {
		return err
	}
	return listErr
}
