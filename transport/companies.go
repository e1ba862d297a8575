package transport

import (
	"net/http"
	"regexp"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
)

// commandRequest carries the caller, the idempotency key and the trace
// context to a command.
func commandRequest(r *http.Request) command.Request {
	p := principal(r)
	req := command.Request{
		Actor:          command.Actor{AccountID: p.AccountID, Subject: p.Subject, ClientID: p.ClientID},
		RequestID:      requestID(r.Context()),
		IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	if tp := r.Header.Get("Traceparent"); traceParent.MatchString(tp) {
		req.TraceParent = tp
	}
	return req
}

// traceParent is a W3C trace context header (version 00); anything else is
// not recorded.
var traceParent = regexp.MustCompile(`^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$`)

// markReplayed tells the client that the answer is the stored result of an
// earlier request with the same idempotency key (as Stripe does).
func markReplayed(w http.ResponseWriter, replayed bool) {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
}

func (s *server) createCompany(w http.ResponseWriter, r *http.Request) error {
	body, err := readObject(r, s.MaxBodyBytes)
	if err != nil {
		return err
	}
	created, err := s.Commands.CreateCompany(r.Context(), commandRequest(r), body)
	if err != nil {
		return err
	}
	markReplayed(w, created.Replayed)
	writeJSON(w, http.StatusCreated, companyFromEvent(created.Value))
	return nil
}

func (s *server) getCompany(w http.ResponseWriter, r *http.Request) error {
	perr := &paramError{}
	id := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	if err := perr.orNil(); err != nil {
		return err
	}
	c, err := s.Queries.Company(r.Context(), principal(r).AccountID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, companyFromQuery(c))
	return nil
}

func (s *server) listCompanies(w http.ResponseWriter, r *http.Request) error {
	params, perr := parseList(r.URL.Query(), "external_reference")
	filter := query.CompanyFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if err := perr.orNil(); err != nil {
		return err
	}
	page, err := s.Queries.Companies(r.Context(), principal(r).AccountID, filter, params.page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, companyFromQuery))
	return nil
}
