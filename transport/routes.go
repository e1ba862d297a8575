// Package transport is the HTTP edge: routes, request parsing, auth
// middleware, the one error table and JSON rendering.
package transport

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
)

// Config holds the server's collaborators, built once by cmd.
type Config struct {
	Commands *command.Handler
	Queries  *query.Store
	Auth     Authenticator
	Logger   *slog.Logger
	// MaxBodyBytes is the 413 threshold (default 1 MiB).
	MaxBodyBytes int64
	// Ready reports whether the service can serve (database, event store,
	// projectors); nil means always ready.
	Ready func(ctx context.Context) error
	// QuarantinedEvents counts the events projections set aside because
	// they could not apply them; /readyz reports it. One such event does
	// not make the service unready: every other account is served.
	QuarantinedEvents func(ctx context.Context) (int64, error)
}

type server struct {
	Config
	logger *slog.Logger
}

// NewHandler returns the service's HTTP handler.
func NewHandler(cfg Config) http.Handler {
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	s := &server{Config: cfg, logger: cfg.Logger}
	return withRequestID(s.withAccessLog(s.routes()))
}

// routes is the whole HTTP surface; the OpenAPI document lists the same
// operations (checked by a test).
func (s *server) routes() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = s.adapt(func(http.ResponseWriter, *http.Request) error { return errRouteNotFound })
	r.MethodNotAllowedHandler = s.adapt(func(http.ResponseWriter, *http.Request) error { return errMethodNotAllowed })

	r.Handle("/healthz", s.adapt(s.healthz)).Methods(http.MethodGet)
	r.Handle("/readyz", s.adapt(s.readyz)).Methods(http.MethodGet)
	r.Handle("/v1/openapi.yaml", s.adapt(s.openAPI)).Methods(http.MethodGet)

	r.Handle("/v1/companies", s.write(s.createCompany)).Methods(http.MethodPost)
	r.Handle("/v1/companies", s.read(s.listCompanies)).Methods(http.MethodGet)
	r.Handle("/v1/companies/{company_id}", s.read(s.getCompany)).Methods(http.MethodGet)
	r.Handle("/v1/companies/{company_id}/customers", s.write(createUnder(s, s.Commands.CreateCustomer, customerFromEvent))).Methods(http.MethodPost)
	r.Handle("/v1/companies/{company_id}/customers", s.read(s.listCustomers)).Methods(http.MethodGet)
	r.Handle("/v1/companies/{company_id}/customers/{customer_id}", s.read(getUnder("customer_id", s.Queries.Customer, customerFromQuery))).Methods(http.MethodGet)
	r.Handle("/v1/companies/{company_id}/invoices", s.write(createUnder(s, s.Commands.CreateInvoice, invoiceFromEvent))).Methods(http.MethodPost)
	r.Handle("/v1/companies/{company_id}/invoices", s.read(s.listInvoices)).Methods(http.MethodGet)
	r.Handle("/v1/companies/{company_id}/invoices/{invoice_id}", s.read(getUnder("invoice_id", s.Queries.Invoice, invoiceFromQuery))).Methods(http.MethodGet)
	r.Handle("/v1/companies/{company_id}/invoices/{invoice_id}/issue", s.write(s.changeInvoice(s.Commands.IssueInvoice))).Methods(http.MethodPost)
	r.Handle("/v1/companies/{company_id}/invoices/{invoice_id}/void", s.write(s.changeInvoice(s.Commands.VoidInvoice))).Methods(http.MethodPost)
	return r
}

func (s *server) read(h handlerFunc) http.Handler  { return s.adapt(s.authenticated(canRead, h)) }
func (s *server) write(h handlerFunc) http.Handler { return s.adapt(s.authenticated(canWrite, h)) }

func (s *server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyJSON is the body of /readyz.
type readyJSON struct {
	Status            string `json:"status"`
	QuarantinedEvents *int64 `json:"quarantined_events,omitempty"`
}

func (s *server) readyz(w http.ResponseWriter, r *http.Request) error {
	if s.Ready != nil {
		if err := s.Ready(r.Context()); err != nil {
			s.logger.WarnContext(r.Context(), "not ready", "error", err)
			writeJSON(w, http.StatusServiceUnavailable, readyJSON{Status: "unavailable"})
			return nil
		}
	}
	body := readyJSON{Status: "ok"}
	if s.QuarantinedEvents != nil {
		n, err := s.QuarantinedEvents(r.Context())
		if err != nil {
			s.logger.WarnContext(r.Context(), "not ready: counting quarantined events", "error", err)
			writeJSON(w, http.StatusServiceUnavailable, readyJSON{Status: "unavailable"})
			return nil
		}
		body.QuarantinedEvents = &n
	}
	writeJSON(w, http.StatusOK, body)
	return nil
}

func (s *server) openAPI(w http.ResponseWriter, _ *http.Request) error {
	w.Header().Set("Content-Type", "application/yaml")
	_, err := w.Write(OpenAPIDocument())
	return err
}

// Operations lists every routed operation as "METHOD /path/template", for
// the test that holds the router and the OpenAPI document to each other.
func Operations() ([]string, error) {
	var ops []string
	err := (&server{}).routes().Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		path, err := route.GetPathTemplate()
		if err != nil {
			return nil // a subrouter's prefix, not an operation
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			ops = append(ops, m+" "+path)
		}
		return nil
	})
	return ops, err
}
