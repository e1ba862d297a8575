package command

import (
	"context"
	"errors"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

var opCreateInvoice = operation{name: "invoices.create", kind: events.KindInvoice}

// CreateInvoice drafts an invoice of the caller's company companyID to one
// of its customers, freezing issuer and customer snapshots and computing
// every amount once, here; the event records them and nothing recomputes.
func (h *Handler) CreateInvoice(ctx context.Context, req Request, companyID string, body map[string]any) (Result[events.InvoiceDrafted], error) {
	var out Result[events.InvoiceDrafted]
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return out, err
	}
	company, err := h.cfg.Directory.Company(ctx, req.Actor.AccountID, companyID)
	if err != nil {
		return out, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := ParseCreateInvoice(body)
	if err != nil {
		return out, err
	}
	customer, err := h.cfg.Directory.Customer(ctx, req.Actor.AccountID, companyID, in.CustomerID)
	if errors.Is(err, ErrNotFound) {
		return out, &ValidationError{Violations: []Violation{{Path: customerPath, Message: "is not a customer of this company"}}}
	}
	if err != nil {
		return out, fmt.Errorf("customer %s: %w", in.CustomerID, err)
	}
	draft, err := in.draft(company, customer)
	if err != nil {
		return out, err
	}
	fp, err := fingerprint(opCreateInvoice, companyID, in)
	if err != nil {
		return out, err
	}
	build := func() (string, events.InvoiceDrafted, error) {
		id, err := h.newID()
		if err != nil {
			return "", events.InvoiceDrafted{}, err
		}
		draft.InvoiceID, draft.AccountID, draft.CreatedAt = id, req.Actor.AccountID, h.now()
		return events.TypeInvoiceDrafted, draft, nil
	}
	return create(ctx, h, req, opCreateInvoice, companyID, fp, build)
}

// draft applies the company's defaults, takes the snapshots and computes the
// amounts; a line whose amounts leave 0..MaxAmountMinor is a violation
// naming that line.
func (in CreateInvoice) draft(company CompanyRecord, customer CustomerRecord) (events.InvoiceDrafted, error) {
	d := events.InvoiceDrafted{
		CompanyID:              company.ID,
		CustomerID:             customer.ID,
		CustomerName:           customer.Name,
		Customer:               customerSnapshot(customer),
		Issuer:                 issuerSnapshot(company),
		Currency:               or(in.Currency, company.DefaultCurrency),
		Language:               or(in.Language, company.DefaultLanguage),
		IssueDate:              in.IssueDate,
		DueDate:                in.DueDate,
		ExternalReference:      in.ExternalReference,
		PurchaseOrderReference: in.PurchaseOrderReference,
		Notes:                  in.Notes,
		Terms:                  in.Terms,
	}
	if d.DueDate == "" {
		due, err := dueDate(in.IssueDate, company.DefaultPaymentTermsDays)
		if err != nil {
			return events.InvoiceDrafted{}, err
		}
		d.DueDate = due
	}
	lines, totals, err := computeLines(in.Lines)
	if err != nil {
		return events.InvoiceDrafted{}, err
	}
	d.Lines, d.SubtotalMinor, d.TaxMinor, d.TotalMinor = lines, totals.Subtotal, totals.Tax, totals.Total
	return d, nil
}

// dueDate is issueDate plus the company's payment terms in calendar days.
// A result past events.MaxDate is a violation: the client must send a
// due_date itself.
func dueDate(issueDate string, terms int) (string, error) {
	d, err := events.ParseDate(issueDate)
	if err == nil {
		d, err = events.AddDays(d, terms)
	}
	if err != nil {
		return "", &ValidationError{Violations: []Violation{{Path: "due_date",
			Message: fmt.Sprintf("is required: issue_date plus the company's %d payment days is after %s", terms, events.MaxDate.Format(events.DateLayout))}}}
	}
	return d.Format(events.DateLayout), nil
}

func computeLines(inputs []LineInput) ([]events.InvoiceLine, events.Totals, error) {
	lines := make([]events.InvoiceLine, len(inputs))
	amounts := make([]events.LineAmounts, len(inputs))
	r := &reader{}
	for i, l := range inputs {
		q, err := events.ParseQuantity(l.Quantity)
		if err == nil {
			amounts[i], err = events.ComputeLine(q, l.UnitAmountMinor, l.TaxRateBps)
		}
		if err != nil {
			r.add(index(lineFields, i), "amounts leave the range 0..%d: %v", events.MaxAmountMinor, err)
			continue
		}
		lines[i] = events.InvoiceLine{
			Position: i + 1, Description: l.Description, Quantity: l.Quantity, Unit: l.Unit,
			UnitAmountMinor: l.UnitAmountMinor, TaxRateBps: l.TaxRateBps,
			NetAmountMinor: amounts[i].Net, TaxAmountMinor: amounts[i].Tax, TotalAmountMinor: amounts[i].Total,
		}
	}
	if err := r.err(); err != nil {
		return nil, events.Totals{}, err
	}
	totals, err := events.SumLines(amounts)
	var rangeErr *events.AmountRangeError
	if errors.As(err, &rangeErr) {
		r.add(index(lineFields, rangeErr.Index), "adding this line makes the invoice's %s exceed %d", rangeErr.Field, events.MaxAmountMinor)
		return nil, events.Totals{}, r.err()
	}
	return lines, totals, err
}

func customerSnapshot(c CustomerRecord) events.CustomerSnapshot {
	return events.CustomerSnapshot{
		ID: c.ID, Name: c.Name, Address: c.Address, Email: c.Email,
		Identifiers: nonNil(c.Identifiers), SchemaVersion: events.SnapshotSchemaVersion,
	}
}

func issuerSnapshot(c CompanyRecord) events.IssuerSnapshot {
	return events.IssuerSnapshot{
		ID: c.ID, LegalName: c.LegalName, TradingName: c.TradingName, Address: c.Address,
		Email: c.Email, Identifiers: nonNil(c.Identifiers), SchemaVersion: events.SnapshotSchemaVersion,
	}
}

func nonNil(ids []events.Identifier) []events.Identifier {
	if ids == nil {
		return []events.Identifier{}
	}
	return ids
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
