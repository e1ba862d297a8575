package transport

import (
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/query"
)

var invoiceStatuses = map[string]bool{"draft": true, "issued": true, "void": true}

func (s *server) listInvoices(w http.ResponseWriter, r *http.Request) error {
	perr := &paramError{}
	companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
	params, qerr := parseList(r.URL.Query(), "customer_id", "external_reference", "status")
	perr.details = append(perr.details, qerr.details...)
	filter := query.InvoiceFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if v, ok := params.filters["customer_id"]; ok {
		filter.CustomerID = pathUUID(perr, "customer_id", v)
	}
	if v, ok := params.filters["status"]; ok {
		if !invoiceStatuses[v] {
			perr.add("status", "must be one of draft, issued, void")
		}
		filter.Status = v
	}
	if err := perr.orNil(); err != nil {
		return err
	}
	if err := s.companyExists(r, companyID); err != nil {
		return err
	}
	page, err := s.Queries.Invoices(r.Context(), principal(r).AccountID, companyID, filter, params.page)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, list(page, invoiceSummaryFromQuery))
	return nil
}
