package command

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/invoicing/invoicing/events"
)

var opReviseInvoice = operation{name: "invoices.revise", kind: events.KindInvoice}

// invoiceFields are the create-invoice request's top-level fields: what a
// revision may patch.
var invoiceFields = []string{"customer_id", "issue_date", "due_date", "currency", "language", "lines",
	"external_reference", "purchase_order_reference", "notes", "terms",
	"buyer_reference", "tax_exemptions", "delivery_date", "delivery_address", "billing_period"}

// invoiceReadOnly are the invoice's fields that only the service sets.
var invoiceReadOnly = []string{"id", "company_id", "version", "archived_at", "created_at", "updated_at",
	"status", "number", "issued_at", "voided_at", "void_reason", "subtotal_minor", "tax_minor", "total_minor",
	"customer", "issuer", "customer_name", "tax_breakdown"}

// ReviseInvoice is a draft revision: a JSON Merge Patch over the
// create-invoice request (lines replace the whole array).
type ReviseInvoice = Patch[CreateInvoice]

// ParseReviseInvoice decodes a revision and checks its keys (Parsed); what
// it does to the draft is checked against the draft when it is applied.
func ParseReviseInvoice(raw []byte) (Parsed[ReviseInvoice], error) {
	return parsePatch(raw, invoiceFields, invoiceReadOnly, readCreateInvoice)
}

// ReviseInvoice revises a draft: the patch is applied to the draft as its
// create request renders it, the result is validated by the create's rules
// and priced by the one money rule, and InvoiceRevised records the whole
// resulting content. The issuer snapshot stays as frozen at drafting; a
// new customer_id takes that customer's snapshot now. Only a draft can be
// revised: a revision racing an issue either lands before it, and the
// issue issues the revised draft, or finds it issued (ErrInvalidState).
// A patch that changes nothing appends nothing.
func (h *Handler) ReviseInvoice(ctx context.Context, req Request, companyID, invoiceID string, body Parsed[ReviseInvoice]) (Result[events.Invoice], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return Result[events.Invoice]{}, err
	}
	company, err := h.cfg.Directory.Company(ctx, req.Actor.AccountID, companyID)
	if err != nil {
		return Result[events.Invoice]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	patch, err := body.Valid()
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	lc, err := h.newInvoiceLifecycle(ctx, req, opReviseInvoice, companyID, invoiceID, patch)
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	return change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		if inv.Status != events.StatusDraft {
			return events.EventData{}, fmt.Errorf("%w: the invoice is %s; only a draft can be revised", ErrInvalidState, inv.Status)
		}
		revised, err := h.revise(ctx, req.Actor.AccountID, company, inv.InvoiceDrafted, patch)
		if err != nil || len(revised.Changed) == 0 {
			return events.EventData{}, err // nothing changes: no event
		}
		return newEvent(lc.stream, uint64(inv.Version), events.TypeInvoiceRevised, revised, lc.metadata)
	})
}

// revise is the InvoiceRevised that patch makes of the draft d, with the
// fields it changes (none: nothing to record).
func (h *Handler) revise(ctx context.Context, accountID string, company CompanyRecord, d events.InvoiceDrafted, patch ReviseInvoice) (events.InvoiceRevised, error) {
	current, err := asObject(draftRequest(d, false))
	if err != nil {
		return events.InvoiceRevised{}, err
	}
	in, err := patch.Apply(current)
	if err != nil {
		return events.InvoiceRevised{}, err
	}
	next := d
	if in.CustomerID != d.CustomerID {
		customer, err := h.draftCustomer(ctx, accountID, company.ID, in.CustomerID)
		if err != nil {
			return events.InvoiceRevised{}, err
		}
		next.CustomerID, next.CustomerName, next.Customer = customer.ID, customer.Name, customerSnapshot(customer)
	}
	if next, err = in.content(next, company, revisionTerms(d, company, patch)); err != nil {
		return events.InvoiceRevised{}, err
	}
	changed, err := revisedFields(d, next)
	if err != nil {
		return events.InvoiceRevised{}, err
	}
	return revisedEvent(next, h.now(), changed), nil
}

// draftCustomer is the customer a revision moves the draft to: one of the
// company's (else a violation at customer_id), not archived (else a
// StateError at customer_id).
func (h *Handler) draftCustomer(ctx context.Context, accountID, companyID, customerID string) (CustomerRecord, error) {
	customer, err := h.cfg.Directory.Customer(ctx, accountID, companyID, customerID)
	if errors.Is(err, events.ErrNotFound) {
		return CustomerRecord{}, &ValidationError{Violations: []Violation{{Path: customerPath, Message: "is not a customer of this company"}}}
	}
	if err != nil {
		return CustomerRecord{}, fmt.Errorf("customer %s: %w", customerID, err)
	}
	return customer, activeCustomer(customer, customerPath)
}

// revisionTerms are the payment days a revised draft without a due date
// gets its due date from: the terms its due date came from, so that it
// follows a changed issue_date; the company's terms now when the patch
// restores the default (due_date: null) or the due date was the client's.
func revisionTerms(d events.InvoiceDrafted, company CompanyRecord, patch ReviseInvoice) int {
	if _, restored := patch.patch["due_date"]; !restored && d.PaymentTermsDays != nil {
		return *d.PaymentTermsDays
	}
	return company.DefaultPaymentTermsDays
}

// draftRequest renders a draft as the create request that would make it.
// A due date from payment terms is left out (the request had none, and it
// follows the issue date) unless effective is set: then every field holds
// the value in force, as revisedFields compares them.
func draftRequest(d events.InvoiceDrafted, effective bool) CreateInvoice {
	in := CreateInvoice{
		CustomerID: d.CustomerID, IssueDate: d.IssueDate, DueDate: d.DueDate, Currency: d.Currency, Language: d.Language,
		ExternalReference: d.ExternalReference, PurchaseOrderReference: d.PurchaseOrderReference, Notes: d.Notes, Terms: d.Terms,
		DocumentTerms: d.DocumentTerms,
	}
	if d.PaymentTermsDays != nil && !effective {
		in.DueDate = ""
	}
	for _, l := range d.Lines {
		in.Lines = append(in.Lines, LineInput{Description: l.Description, Quantity: l.Quantity, Unit: l.Unit,
			UnitCode: l.UnitCode, UnitAmountMinor: l.UnitAmountMinor, TaxRateBps: l.TaxRateBps, TaxCategory: l.TaxCategory})
	}
	return in
}

// revisedFields lists, sorted, the request fields whose value in force
// differs between the drafts before and after; due_date also when only
// its origin changed (the client now sends the date terms gave, or the
// reverse), since whether it follows the issue date is part of it.
func revisedFields(before, after events.InvoiceDrafted) ([]string, error) {
	b, err := asObject(draftRequest(before, true))
	if err != nil {
		return nil, err
	}
	a, err := asObject(draftRequest(after, true))
	if err != nil {
		return nil, err
	}
	changed := changedFields(b, a)
	if (before.PaymentTermsDays == nil) != (after.PaymentTermsDays == nil) && !slices.Contains(changed, "due_date") {
		changed = append(changed, "due_date")
		slices.Sort(changed)
	}
	return changed, nil
}

// revisedEvent records the content of the revised draft d.
func revisedEvent(d events.InvoiceDrafted, at time.Time, changed []string) events.InvoiceRevised {
	return events.InvoiceRevised{
		InvoiceID: d.InvoiceID, CompanyID: d.CompanyID, AccountID: d.AccountID,
		CustomerID: d.CustomerID, CustomerName: d.CustomerName, Customer: d.Customer,
		Currency: d.Currency, Language: d.Language, IssueDate: d.IssueDate, DueDate: d.DueDate,
		PaymentTermsDays: d.PaymentTermsDays, Lines: d.Lines,
		SubtotalMinor: d.SubtotalMinor, TaxMinor: d.TaxMinor, TotalMinor: d.TotalMinor,
		ExternalReference: d.ExternalReference, PurchaseOrderReference: d.PurchaseOrderReference,
		Notes: d.Notes, Terms: d.Terms, DocumentTerms: d.DocumentTerms, TaxBreakdown: d.TaxBreakdown,
		RevisedAt: at, Changed: changed,
	}
}
