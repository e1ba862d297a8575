package transport

import (
	"net/http"
	"path"
	"slices"
	"strings"
)

// route is one operation: a method, a path template in net/http.ServeMux's
// syntax ({name} matches one path segment) and its handler.
type route struct {
	method, path string
	handler      http.Handler
}

// routeTable is the whole HTTP surface; the OpenAPI document lists the same
// operations (checked by a test). Every GET answers HEAD as well: the same
// status and headers, no body (net/http drops it).
func (s *server) routeTable() []route {
	get := func(path string, h http.Handler) route { return route{http.MethodGet, path, h} }
	post := func(path string, h http.Handler) route { return route{http.MethodPost, path, h} }
	patch := func(path string, h http.Handler) route { return route{http.MethodPatch, path, h} }
	del := func(path string, h http.Handler) route { return route{http.MethodDelete, path, h} }
	return []route{
		get("/healthz", s.adapt(s.healthz)),
		get("/readyz", s.adapt(s.readyz)),
		get("/v1/openapi.yaml", s.adapt(s.openAPI)),

		post("/v1/companies", s.write(s.createCompany)),
		get("/v1/companies", s.read(s.listCompanies)),
		get("/v1/companies/{company_id}", s.read(s.getCompany)),
		patch("/v1/companies/{company_id}", s.write(s.updateCompany)),
		post("/v1/companies/{company_id}/archive", s.write(s.archiveCompany)),
		post("/v1/companies/{company_id}/unarchive", s.write(s.unarchiveCompany)),
		post("/v1/companies/{company_id}/customers", s.write(s.createCustomer)),
		get("/v1/companies/{company_id}/customers", s.read(s.listCustomers)),
		get("/v1/companies/{company_id}/customers/{customer_id}", s.read(s.getCustomer)),
		patch("/v1/companies/{company_id}/customers/{customer_id}", s.write(s.updateCustomer)),
		post("/v1/companies/{company_id}/customers/{customer_id}/archive", s.write(s.archiveCustomer)),
		post("/v1/companies/{company_id}/customers/{customer_id}/unarchive", s.write(s.unarchiveCustomer)),
		post("/v1/companies/{company_id}/invoices", s.write(s.createInvoice)),
		get("/v1/companies/{company_id}/invoices", s.read(s.listInvoices)),
		get("/v1/companies/{company_id}/invoices/{invoice_id}", s.read(s.getInvoice)),
		get("/v1/companies/{company_id}/invoices/{invoice_id}/einvoice", s.read(s.getEInvoice)),
		get("/v1/companies/{company_id}/invoices/{invoice_id}/pdf", s.read(s.getInvoicePDF)),
		patch("/v1/companies/{company_id}/invoices/{invoice_id}", s.write(s.reviseInvoice)),
		post("/v1/companies/{company_id}/invoices/{invoice_id}/issue", s.write(s.issueInvoice)),
		post("/v1/companies/{company_id}/invoices/{invoice_id}/void", s.write(s.voidInvoice)),
		post("/v1/companies/{company_id}/invoices/{invoice_id}/credit_notes", s.write(s.issueCreditNote)),
		post("/v1/companies/{company_id}/invoices/{invoice_id}/payments", s.write(s.recordPayment)),
		post("/v1/companies/{company_id}/invoices/{invoice_id}/payments/{payment_id}/reverse", s.write(s.reversePayment)),
		get("/v1/companies/{company_id}/credit_notes", s.read(s.listCreditNotes)),
		get("/v1/companies/{company_id}/credit_notes/{credit_note_id}", s.read(s.getCreditNote)),
		get("/v1/companies/{company_id}/credit_notes/{credit_note_id}/einvoice", s.read(s.getCreditNoteEInvoice)),
		get("/v1/companies/{company_id}/credit_notes/{credit_note_id}/pdf", s.read(s.getCreditNotePDF)),
		get("/v1/webhook_endpoints/{webhook_endpoint_id}/deliveries", s.read(s.listWebhookDeliveries)),
		post("/v1/webhook_endpoints/{webhook_endpoint_id}/deliveries/{delivery_id}/retry", s.write(s.retryWebhookDelivery)),
		get("/v1/events", s.read(s.listEvents)),
		get("/v1/events/{event_id}", s.read(s.getEvent)),
		post("/v1/webhook_endpoints", s.write(s.createWebhookEndpoint)),
		get("/v1/webhook_endpoints", s.read(s.listWebhookEndpoints)),
		get("/v1/webhook_endpoints/{webhook_endpoint_id}", s.read(s.getWebhookEndpoint)),
		patch("/v1/webhook_endpoints/{webhook_endpoint_id}", s.write(s.updateWebhookEndpoint)),
		del("/v1/webhook_endpoints/{webhook_endpoint_id}", s.write(s.deleteWebhookEndpoint)),
		post("/v1/webhook_endpoints/{webhook_endpoint_id}/rotate_secret", s.write(s.rotateWebhookSecret)),
	}
}

// routes registers the route table on a net/http.ServeMux ("GET /path"
// answers HEAD too), each handler wrapped in nameRoute. Two kinds of
// patterns answer what no operation does, in the error shape and without a
// route name (metrics: UnmatchedRoute): every path template without a
// method, less specific than the path's operations, so it catches only the
// other methods (405, with Allow); and "/", the least specific, for every
// other path (404). ServeMux's own 404 and 405 are plain text.
func (s *server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	allowed := map[string][]string{}
	var paths []string
	for _, rt := range s.routeTable() {
		mux.Handle(rt.method+" "+rt.path, nameRoute(rt.path, rt.handler))
		if _, ok := allowed[rt.path]; !ok {
			paths = append(paths, rt.path)
		}
		allowed[rt.path] = append(allowed[rt.path], methodsOf(rt)...)
	}
	for _, p := range paths {
		methods := allowed[p]
		slices.Sort(methods)
		mux.Handle(p, s.adapt(methodNotAllowed(strings.Join(slices.Compact(methods), ", "))))
	}
	mux.Handle("/", s.adapt(func(http.ResponseWriter, *http.Request) error { return errRouteNotFound }))
	return mux
}

// methodsOf is the methods a route answers: HEAD as well for a GET.
func methodsOf(rt route) []string {
	if rt.method == http.MethodGet {
		return []string{http.MethodGet, http.MethodHead}
	}
	return []string{rt.method}
}

// methodNotAllowed answers a known path asked with a method it lacks: 405,
// with Allow listing the methods the path has (RFC 9110 §15.5.6), sorted.
func methodNotAllowed(allow string) handlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) error {
		w.Header().Set("Allow", allow)
		return errMethodNotAllowed
	}
}

// cleanPaths redirects a request whose path is not in canonical form (an
// empty segment, "." or "..", percent-encoded or not) to the cleaned path,
// query kept: 301 without a body, whatever the method, before any routing.
// This is what gorilla/mux, the service's router until ServeMux, answered;
// ServeMux's own redirect is a 307 with an HTML body, and cleans the
// encoded path (so "%2E%2E" would reach a handler).
func cleanPaths(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := cleanPath(r.URL.Path); p != r.URL.Path {
			u := *r.URL
			u.Path, u.RawPath = p, ""
			w.Header().Set("Location", u.String())
			w.WriteHeader(http.StatusMovedPermanently)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// cleanPath is p in canonical form (path.Clean, rooted), keeping a
// trailing slash.
func cleanPath(p string) string {
	if p == "" {
		return "/"
	}
	if p[0] != '/' {
		p = "/" + p
	}
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}

// Operations lists every routed operation as "METHOD /path/template", HEAD
// included, for the test that holds the router and the OpenAPI document to
// each other.
func Operations() ([]string, error) {
	var ops []string
	for _, rt := range (&server{}).routeTable() {
		for _, m := range methodsOf(rt) {
			ops = append(ops, m+" "+rt.path)
		}
	}
	return ops, nil
}
