package transport

import (
	"context"
	"net/http"

	"github.com/gorilla/mux"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
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

// changeInvoice handles a lifecycle operation on an invoice (issue, void):
// 200 with the invoice as the operation left it.
func (s *server) changeInvoice(change func(context.Context, command.Request, string, string, map[string]any) (command.Result[events.Invoice], error)) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		perr := &paramError{}
		companyID := pathUUID(perr, "company_id", mux.Vars(r)["company_id"])
		invoiceID := pathUUID(perr, "invoice_id", mux.Vars(r)["invoice_id"])
		if err := perr.orNil(); err != nil {
			return err
		}
		body, err := readOptionalObject(r, s.MaxBodyBytes)
		if err != nil {
			return err
		}
		changed, err := change(r.Context(), commandRequest(r), companyID, invoiceID, body)
		if err != nil {
			return err
		}
		markReplayed(w, changed.Replayed)
		writeJSON(w, http.StatusOK, invoiceFromState(changed.Value))
		return nil
	}
}
