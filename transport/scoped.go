package transport

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/command"
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

// createUnder handles a create whose path names the owning company.
func createUnder[E, J any](s *server, create func(context.Context, command.Request, string, map[string]any) (command.Result[E], error), render func(E) J) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		companyID, err := companyPath(r)
		if err != nil {
			return err
		}
		body, err := readObject(r, s.MaxBodyBytes)
		if err != nil {
			return err
		}
		created, err := create(r.Context(), commandRequest(r), companyID, body)
		if err != nil {
			return err
		}
		markReplayed(w, created.Replayed)
		writeJSON(w, http.StatusCreated, render(created.Value))
		return nil
	}
}

// getUnder handles a get of a resource under a company; idParam names the
// resource's path parameter.
func getUnder[T, J any](idParam string, get func(ctx context.Context, accountID, companyID, id string) (T, error), render func(T) J) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		perr := &paramError{}
		companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
		id := pathUUID(perr, idParam, mux.Vars(r)[idParam])
		if err := perr.orNil(); err != nil {
			return err
		}
		found, err := get(r.Context(), principal(r).AccountID, companyID, id)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, render(found))
		return nil
	}
}
