package transport

import (
	"context"
	"net/http"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// Companies: POST /v1/companies, GET /v1/companies,
// GET and PATCH /v1/companies/{company_id}, and POST .../archive and
// .../unarchive.

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
	params := parseList(perr, r.URL.Query(), "archived", "external_reference")
	filter := query.CompanyFilter{ExternalReference: params.text(perr, "external_reference", 255),
		Archived: params.boolean(perr, "archived")}
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

func (s *server) updateCompany(w http.ResponseWriter, r *http.Request) error {
	companyID, err := companyParam(r)
	if err != nil {
		return err
	}
	body, err := decodePatch(r, s.MaxBodyBytes, command.ParseUpdateCompany)
	if err != nil {
		return err
	}
	changed, err := s.Commands.UpdateCompany(r.Context(), commandRequest(r), companyID, body)
	return writeCompany(w, changed, err)
}

func (s *server) archiveCompany(w http.ResponseWriter, r *http.Request) error {
	return setCompanyArchived(s, w, r, s.Commands.ArchiveCompany)
}

func (s *server) unarchiveCompany(w http.ResponseWriter, r *http.Request) error {
	return setCompanyArchived(s, w, r, s.Commands.UnarchiveCompany)
}

// setCompanyArchived runs an archive or unarchive, which may be sent
// without a body.
func setCompanyArchived(s *server, w http.ResponseWriter, r *http.Request,
	run func(context.Context, command.Request, string, command.Parsed[command.Archive]) (command.Result[events.Company], error)) error {
	companyID, err := companyParam(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyOptional, command.ParseArchive)
	if err != nil {
		return err
	}
	changed, err := run(r.Context(), commandRequest(r), companyID, body)
	return writeCompany(w, changed, err)
}

// writeCompany answers a write to a company: 200 with the company as the
// write left it.
func writeCompany(w http.ResponseWriter, changed command.Result[events.Company], err error) error {
	if err != nil {
		return err
	}
	c := changed.Value
	writeChanged(w, etag(c.CompanyID, c.Version), changed.Replayed, companyFromState(c))
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
