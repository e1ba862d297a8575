package command

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/invoicing/invoicing/events"
)

var opCreateInvoice = operation{name: "invoices.create", kind: events.KindInvoice}

// Invoice request limits from the spec.
const (
	maxLines     = 100
	maxLongText  = 5000
	lineFields   = "lines"
	customerPath = "customer_id"
)

// CreateInvoice is a validated create-invoice request, before defaults and
// before amounts are computed. Its JSON form is the request's fingerprint.
type CreateInvoice struct {
	CustomerID             string      `json:"customer_id"`
	IssueDate              string      `json:"issue_date"`
	DueDate                string      `json:"due_date,omitempty"`
	Currency               string      `json:"currency,omitempty"`
	Language               string      `json:"language,omitempty"`
	Lines                  []LineInput `json:"lines"`
	ExternalReference      string      `json:"external_reference,omitempty"`
	PurchaseOrderReference string      `json:"purchase_order_reference,omitempty"`
	Notes                  string      `json:"notes,omitempty"`
	Terms                  string      `json:"terms,omitempty"`
	// The document fields of issue 22, all optional: absent, a request
	// fingerprints as before them.
	events.DocumentTerms
}

// LineInput is one requested line. Quantity keeps the client's spelling,
// which the response echoes.
type LineInput struct {
	Description     string `json:"description"`
	Quantity        string `json:"quantity"`
	Unit            string `json:"unit,omitempty"`
	UnitCode        string `json:"unit_code,omitempty"`
	UnitAmountMinor int64  `json:"unit_amount_minor"`
	TaxRateBps      int64  `json:"tax_rate_bps"`
	TaxCategory     string `json:"tax_category,omitempty"`
}

// ParseCreateInvoice decodes and validates a create-invoice body (Parsed).
// It checks shapes and ranges only; the customer's ownership and the
// amounts' bounds are checked on creation.
func ParseCreateInvoice(raw []byte) (Parsed[CreateInvoice], error) {
	return parseBody(raw, readCreateInvoice)
}

func readCreateInvoice(r *reader, body map[string]any) CreateInvoice {
	o, _ := r.openObject("", body, "customer_id", "issue_date", "due_date", "currency", "language",
		"lines", "external_reference", "purchase_order_reference", "notes", "terms",
		"buyer_reference", "tax_exemptions", "delivery_date", "delivery_address", "billing_period")
	in := CreateInvoice{
		CustomerID:             o.reqStr(customerPath, text{min: 1, max: 36}),
		IssueDate:              o.reqStr("issue_date", text{min: 1, max: 10}),
		DueDate:                o.str("due_date", text{min: 1, max: 10}),
		Currency:               o.str("currency", currency),
		Language:               o.str("language", language),
		ExternalReference:      o.str("external_reference", reference),
		PurchaseOrderReference: o.str("purchase_order_reference", reference),
		Notes:                  o.str("notes", text{max: maxLongText, multiline: true}),
		Terms:                  o.str("terms", text{max: maxLongText, multiline: true}),
		DocumentTerms:          o.documentTerms(),
	}
	in.checkFormats(r)
	if items, ok := o.array(lineFields, 1, maxLines, true); ok {
		for i, item := range items {
			in.Lines = append(in.Lines, r.line(index(lineFields, i), item))
		}
		notSubjectAlone(r, in.Lines)
	}
	return in
}

func (in *CreateInvoice) checkFormats(r *reader) {
	if in.CustomerID != "" {
		if id, ok := ParseUUID(in.CustomerID); !ok {
			r.add(customerPath, "must be a UUID")
		} else {
			in.CustomerID = id
		}
	}
	issue, issueOK := parseDate(r, "issue_date", in.IssueDate)
	due, dueOK := parseDate(r, "due_date", in.DueDate)
	if issueOK && dueOK && due.Before(issue) {
		r.add("due_date", "must not be before issue_date")
	}
}

// parseDate checks an ISO 8601 full-date within the service's date range;
// ok is false when absent or invalid.
func parseDate(r *reader, path, s string) (time.Time, bool) {
	if s == "" {
		return time.Time{}, false
	}
	d, err := events.ParseDate(s)
	if err != nil {
		r.add(path, "%v", err)
		return time.Time{}, false
	}
	return d, true
}

func (r *reader) line(path string, v any) LineInput {
	o, ok := r.openObject(path, v, "description", "quantity", "unit", "unit_amount_minor", "tax_rate_bps",
		"unit_code", "tax_category")
	if !ok {
		return LineInput{}
	}
	l := LineInput{
		Description: o.reqStr("description", text{min: 1, max: 500, multiline: true}),
		Unit:        o.str("unit", text{min: 1, max: 32}),
	}
	if q, ok := o.required("quantity"); ok {
		l.Quantity = r.checkText(join(path, "quantity"), q, text{min: 1})
		if l.Quantity != "" {
			if _, err := events.ParseQuantity(l.Quantity); err != nil {
				r.add(join(path, "quantity"), "%s", quantityMessage(err))
				l.Quantity = ""
			}
		}
	}
	l.UnitAmountMinor, _ = o.integer("unit_amount_minor", 0, events.MaxAmountMinor, true)
	var rateOK bool
	l.TaxRateBps, rateOK = o.integer("tax_rate_bps", 0, 10000, true)
	o.lineTax(&l, rateOK)
	return l
}

func quantityMessage(err error) string {
	if errors.Is(err, events.ErrInvalidQuantity) {
		return events.ErrInvalidQuantity.Error()
	}
	return "must be a decimal string"
}

// CreateInvoice drafts an invoice of the caller's company companyID to one
// of its customers, freezing issuer and customer snapshots and computing
// every amount once, here; the event records them and nothing recomputes.
func (h *Handler) CreateInvoice(ctx context.Context, req Request, companyID string, body Parsed[CreateInvoice]) (Result[events.InvoiceDrafted], error) {
	var out Result[events.InvoiceDrafted]
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return out, err
	}
	in, company, customer, err := h.invoiceParties(ctx, req.Actor.AccountID, companyID, body)
	if err != nil {
		return out, err
	}
	fp, err := fingerprint(opCreateInvoice, companyID, in)
	if err != nil {
		return out, err
	}
	if err := activeCompany(company); err != nil {
		return replayOr[events.InvoiceDrafted](ctx, h, req, opCreateInvoice, companyID, fp, err)
	}
	if customer == nil {
		return out, &ValidationError{Violations: []Violation{{Path: customerPath, Message: "is not a customer of this company"}}}
	}
	if err := activeCustomer(*customer, customerPath); err != nil {
		return replayOr[events.InvoiceDrafted](ctx, h, req, opCreateInvoice, companyID, fp, err)
	}
	draft, err := in.draft(company, *customer)
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

// invoiceParties reads the company and, for a valid body, its customer in
// the same round trip. A company the caller does not have is a 404 before
// the body's violations, as on every write, so an invalid body's company is
// read alone.
func (h *Handler) invoiceParties(ctx context.Context, accountID, companyID string, body Parsed[CreateInvoice]) (CreateInvoice, CompanyRecord, *CustomerRecord, error) {
	in, invalid := body.Valid()
	if invalid != nil {
		if _, err := h.cfg.Directory.Company(ctx, accountID, companyID); err != nil {
			return in, CompanyRecord{}, nil, fmt.Errorf("company %s: %w", companyID, err)
		}
		return in, CompanyRecord{}, nil, invalid
	}
	company, customer, err := h.cfg.Directory.CompanyAndCustomer(ctx, accountID, companyID, in.CustomerID)
	if err != nil {
		return in, CompanyRecord{}, nil, fmt.Errorf("company %s and customer %s: %w", companyID, in.CustomerID, err)
	}
	return in, company, customer, nil
}

// draft applies the company's defaults, takes the snapshots and computes the
// amounts; a line whose amounts leave 0..MaxAmountMinor is a violation
// naming that line.
func (in CreateInvoice) draft(company CompanyRecord, customer CustomerRecord) (events.InvoiceDrafted, error) {
	d := events.InvoiceDrafted{
		CompanyID:    company.ID,
		CustomerID:   customer.ID,
		CustomerName: customer.Name,
		Customer:     customerSnapshot(customer),
		Issuer:       issuerSnapshot(company),
	}
	return in.content(d, company, company.DefaultPaymentTermsDays)
}

// content sets on d what the request decides of a draft (everything but
// its identities and snapshots): the company's currency and language
// defaults, the due date (issue_date plus terms days when the request
// has none, which d then records as its PaymentTermsDays), the computed
// lines and totals, the references and texts. A create and a revision
// share it, so both apply one set of defaults and the one money rule.
func (in CreateInvoice) content(d events.InvoiceDrafted, company CompanyRecord, terms int) (events.InvoiceDrafted, error) {
	d.Currency, d.Language = or(in.Currency, company.DefaultCurrency), or(in.Language, company.DefaultLanguage)
	d.IssueDate, d.DueDate, d.PaymentTermsDays = in.IssueDate, in.DueDate, nil
	d.ExternalReference, d.PurchaseOrderReference = in.ExternalReference, in.PurchaseOrderReference
	d.Notes, d.Terms, d.DocumentTerms = in.Notes, in.Terms, in.DocumentTerms
	if d.DueDate == "" {
		due, err := dueDate(in.IssueDate, terms)
		if err != nil {
			return events.InvoiceDrafted{}, err
		}
		d.DueDate, d.PaymentTermsDays = due, &terms
	}
	lines, totals, breakdown, err := computeLines(in.Lines)
	if err != nil {
		return events.InvoiceDrafted{}, err
	}
	d.Lines, d.SubtotalMinor, d.TaxMinor, d.TotalMinor = lines, totals.Subtotal, totals.Tax, totals.Total
	d.TaxBreakdown = breakdown
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

// computeLines prices each line (events.ComputeLine) and the invoice
// (events.SumInvoice: its VAT breakdown and totals), with the defaults of
// unit_code and tax_category.
func computeLines(inputs []LineInput) ([]events.InvoiceLine, events.Totals, []events.TaxBreakdown, error) {
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
			UnitCode: or(l.UnitCode, events.DefaultUnitCode), UnitAmountMinor: l.UnitAmountMinor,
			TaxRateBps: l.TaxRateBps, TaxCategory: or(l.TaxCategory, events.DefaultTaxCategory(l.TaxRateBps)),
			NetAmountMinor: amounts[i].Net, TaxAmountMinor: amounts[i].Tax, TotalAmountMinor: amounts[i].Total,
		}
	}
	if err := r.err(); err != nil {
		return nil, events.Totals{}, nil, err
	}
	totals, breakdown, err := events.SumInvoice(lines)
	var rangeErr *events.AmountRangeError
	if errors.As(err, &rangeErr) {
		r.add(index(lineFields, rangeErr.Index), "adding this line makes the invoice's %s exceed %d", rangeErr.Field, events.MaxAmountMinor)
		return nil, events.Totals{}, nil, r.err()
	}
	return lines, totals, breakdown, err
}

func customerSnapshot(c CustomerRecord) events.CustomerSnapshot {
	return events.CustomerSnapshot{
		ID: c.ID, Name: c.Name, Address: c.Address, Email: c.Email,
		Identifiers: nonNil(c.Identifiers), ElectronicAddress: c.ElectronicAddress,
		SchemaVersion: events.SnapshotSchemaVersion,
	}
}

func issuerSnapshot(c CompanyRecord) events.IssuerSnapshot {
	return events.IssuerSnapshot{
		ID: c.ID, LegalName: c.LegalName, TradingName: c.TradingName, Address: c.Address,
		Email: c.Email, Identifiers: nonNil(c.Identifiers), BankAccount: c.BankAccount,
		ElectronicAddress: c.ElectronicAddress, SchemaVersion: events.SnapshotSchemaVersion,
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
