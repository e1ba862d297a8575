package transport

import (
	"net/http"
	"slices"
	"strings"

	"github.com/gorilla/mux"
)

// routes is the whole HTTP surface; the OpenAPI document lists the same
// operations (checked by a test). Every GET answers HEAD as well: the same
// status and headers, no body (net/http drops it).
func (s *server) routes() *mux.Router {
	r := mux.NewRouter()
	r.NotFoundHandler = s.adapt(func(http.ResponseWriter, *http.Request) error { return errRouteNotFound })
	r.MethodNotAllowedHandler = s.adapt(s.methodNotAllowed)
	get := func(path string, h http.Handler) { r.Handle(path, h).Methods(http.MethodGet, http.MethodHead) }
	post := func(path string, h http.Handler) { r.Handle(path, h).Methods(http.MethodPost) }
	patch := func(path string, h http.Handler) { r.Handle(path, h).Methods(http.MethodPatch) }
	del := func(path string, h http.Handler) { r.Handle(path, h).Methods(http.MethodDelete) }

	get("/healthz", s.adapt(s.healthz))
	get("/readyz", s.adapt(s.readyz))
	get("/v1/openapi.yaml", s.adapt(s.openAPI))

	post("/v1/companies", s.write(s.createCompany))
	get("/v1/companies", s.read(s.listCompanies))
	get("/v1/companies/{company_id}", s.read(s.getCompany))
	patch("/v1/companies/{company_id}", s.write(s.updateCompany))
	post("/v1/companies/{company_id}/archive", s.write(s.archiveCompany))
	post("/v1/companies/{company_id}/unarchive", s.write(s.unarchiveCompany))
	post("/v1/companies/{company_id}/customers", s.write(s.createCustomer))
	get("/v1/companies/{company_id}/customers", s.read(s.listCustomers))
	get("/v1/companies/{company_id}/customers/{customer_id}", s.read(s.getCustomer))
	patch("/v1/companies/{company_id}/customers/{customer_id}", s.write(s.updateCustomer))
	post("/v1/companies/{company_id}/customers/{customer_id}/archive", s.write(s.archiveCustomer))
	post("/v1/companies/{company_id}/customers/{customer_id}/unarchive", s.write(s.unarchiveCustomer))
	post("/v1/companies/{company_id}/invoices", s.write(s.createInvoice))
	get("/v1/companies/{company_id}/invoices", s.read(s.listInvoices))
	get("/v1/companies/{company_id}/invoices/{invoice_id}", s.read(s.getInvoice))
	get("/v1/companies/{company_id}/invoices/{invoice_id}/einvoice", s.read(s.getEInvoice))
	get("/v1/companies/{company_id}/invoices/{invoice_id}/pdf", s.read(s.getInvoicePDF))
	r.Handle("/v1/companies/{company_id}/invoices/{invoice_id}", s.write(s.reviseInvoice)).Methods(http.MethodPatch)
	post("/v1/companies/{company_id}/invoices/{invoice_id}/issue", s.write(s.issueInvoice))
	post("/v1/companies/{company_id}/invoices/{invoice_id}/void", s.write(s.voidInvoice))
	post("/v1/companies/{company_id}/invoices/{invoice_id}/credit_notes", s.write(s.issueCreditNote))
	post("/v1/companies/{company_id}/invoices/{invoice_id}/payments", s.write(s.recordPayment))
	post("/v1/companies/{company_id}/invoices/{invoice_id}/payments/{payment_id}/reverse", s.write(s.reversePayment))
	get("/v1/companies/{company_id}/credit_notes", s.read(s.listCreditNotes))
	get("/v1/companies/{company_id}/credit_notes/{credit_note_id}", s.read(s.getCreditNote))
	get("/v1/companies/{company_id}/credit_notes/{credit_note_id}/einvoice", s.read(s.getCreditNoteEInvoice))
	get("/v1/companies/{company_id}/credit_notes/{credit_note_id}/pdf", s.read(s.getCreditNotePDF))
	get("/v1/webhook_endpoints/{webhook_endpoint_id}/deliveries", s.read(s.listWebhookDeliveries))
	post("/v1/webhook_endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/retry", s.write(s.retryWebhookDelivery))
	get("/v1/events", s.read(s.listEvents))
	get("/v1/events/{event_id}", s.read(s.getEvent))
	post("/v1/webhook_endpoints", s.write(s.createWebhookEndpoint))
	get("/v1/webhook_endpoints", s.read(s.listWebhookEndpoints))
	get("/v1/webhook_endpoints/{webhook_endpoint_id}", s.read(s.getWebhookEndpoint))
	patch("/v1/webhook_endpoints/{webhook_endpoint_id}", s.write(s.updateWebhookEndpoint))
	del("/v1/webhook_endpoints/{webhook_endpoint_id}", s.write(s.deleteWebhookEndpoint))
	post("/v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret", s.write(s.rotateWebhookSecret))
	return r
}

// methodNotAllowed answers a known path asked with a method it lacks: 405,
// with Allow listing the methods the path has (RFC 9110 §15.5.6).
func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) error {
	w.Header().Set("Allow", strings.Join(allowedMethods(s.router, r), ", "))
	return errMethodNotAllowed
}

// allowedMethods lists, sorted, the methods of every route whose path
// matches r's.
func allowedMethods(router *mux.Router, r *http.Request) []string {
	var allowed []string
	_ = router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, err := route.GetMethods()
		if err != nil || len(methods) == 0 {
			return nil
		}
		probe := r.WithContext(r.Context())
		probe.Method = methods[0]
		if route.Match(probe, &mux.RouteMatch{}) {
			allowed = append(allowed, methods...)
		}
		return nil
	})
	slices.Sort(allowed)
	return slices.Compact(allowed)
}

// Operations lists every routed operation as "METHOD /path/template", HEAD
// included, for the test that holds the router and the OpenAPI document to
// each other.
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
