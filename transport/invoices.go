package transport

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// Invoices of a company: POST and GET /v1/companies/{company_id}/invoices,
// GET and PATCH (a draft's revision) /v1/companies/{company_id}/invoices/{invoice_id},
// and POST .../issue and .../void on one invoice.

func (s *server) createInvoice(w http.ResponseWriter, r *http.Request) error {
	companyID, err := companyParam(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyRequired, command.ParseCreateInvoice)
	if err != nil {
		return err
	}
	created, err := s.Commands.CreateInvoice(r.Context(), commandRequest(r), companyID, body)
	if err != nil {
		return err
	}
	inv := created.Value
	writeCreated(w, invoiceLocation(inv.CompanyID, inv.InvoiceID), created.Replayed, invoiceFromEvent(inv))
	return nil
}

func (s *server) getInvoice(w http.ResponseWriter, r *http.Request) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	if !acceptable(r.Header.Values("Accept"), "application/json") {
		return errNotAcceptable
	}
	inv, err := s.Queries.Invoice(r.Context(), principal(r).AccountID, companyID, invoiceID)
	if err != nil {
		return err
	}
	out, err := invoiceFromQuery(inv)
	if err != nil {
		return err
	}
	writeResource(w, r, etag(inv.ID, inv.Version), out)
	return nil
}

var invoiceStatuses = map[string]bool{events.StatusDraft: true, events.StatusIssued: true, events.StatusVoid: true}

func (s *server) listInvoices(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	companyID := pathUUID(perr, "company_id", r.PathValue("company_id"))
	params := parseList(perr, r.URL.Query(), "customer_id", "external_reference", "status", "payment_status")
	filter := query.InvoiceFilter{ExternalReference: params.text(perr, "external_reference", 255)}
	if v, ok := params.filters["customer_id"]; ok {
		filter.CustomerID = pathUUID(perr, "customer_id", v)
	}
	if v, ok := params.filters["status"]; ok {
		if !invoiceStatuses[v] {
			perr.Add("status", "must be one of draft, issued, void")
		}
		filter.Status = v
	}
	if v, ok := params.filters["payment_status"]; ok {
		if !slices.Contains(events.PaymentStatuses, v) {
			perr.Add("payment_status", "must be one of "+strings.Join(events.PaymentStatuses, ", "))
		}
		filter.PaymentStatus = v
	}
	if err := perr.OrNil(); err != nil {
		return err
	}
	page, err := s.Queries.Invoices(r.Context(), principal(r).AccountID, companyID, filter, params.page)
	if err := s.listedCompanyExists(r, companyID, len(page.Items), err); err != nil {
		return err
	}
	s.writeInvoiceList(w, page)
	return nil
}

func (s *server) writeInvoiceList(w http.ResponseWriter, page query.Page[query.InvoiceSummary]) {
	list := appendedList[query.InvoiceSummary, invoiceSummaryJSON]{page, invoiceSummaryFromQuery}
	s.bodies.put(writeJSONInto(w, http.StatusOK, list, s.bodies.get()))
}

func (s *server) issueInvoice(w http.ResponseWriter, r *http.Request) error {
	return changeInvoice(s, w, r, command.ParseIssueInvoice, s.Commands.IssueInvoice)
}

func (s *server) voidInvoice(w http.ResponseWriter, r *http.Request) error {
	return changeInvoice(s, w, r, command.ParseVoidInvoice, s.Commands.VoidInvoice)
}

// reviseInvoice revises a draft: PATCH with a JSON Merge Patch over the
// create-invoice fields; 200 with the invoice as the revision left it.
func (s *server) reviseInvoice(w http.ResponseWriter, r *http.Request) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	body, err := decodePatch(r, s.MaxBodyBytes, command.ParseReviseInvoice)
	if err != nil {
		return err
	}
	revised, err := s.Commands.ReviseInvoice(r.Context(), commandRequest(r), companyID, invoiceID, body)
	if err != nil {
		return err
	}
	inv := revised.Value
	writeChanged(w, etag(inv.InvoiceID, inv.Version), revised.Replayed, invoiceFromState(inv))
	return nil
}

// changeInvoice runs a lifecycle operation (issue, void), which may be sent
// without a body: 200 with the invoice as the operation left it.
func changeInvoice[T any](s *server, w http.ResponseWriter, r *http.Request,
	parse func([]byte) (command.Parsed[T], error),
	change func(context.Context, command.Request, string, string, command.Parsed[T]) (command.Result[events.Invoice], error)) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	body, err := decodeCommand(r, s.MaxBodyBytes, bodyOptional, parse)
	if err != nil {
		return err
	}
	changed, err := change(r.Context(), commandRequest(r), companyID, invoiceID, body)
	if err != nil {
		return err
	}
	inv := changed.Value
	writeChanged(w, etag(inv.InvoiceID, inv.Version), changed.Replayed, invoiceFromState(inv))
	return nil
}

// invoiceParams reads and checks {company_id} and {invoice_id}.
func invoiceParams(r *http.Request) (companyID, invoiceID string, err error) {
	perr := &command.ValidationError{}
	companyID = pathUUID(perr, "company_id", r.PathValue("company_id"))
	invoiceID = pathUUID(perr, "invoice_id", r.PathValue("invoice_id"))
	return companyID, invoiceID, perr.OrNil()
}
