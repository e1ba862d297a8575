package command

import (
	"errors"
	"time"

	"github.com/invoicing/invoicing/events"
)

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
}

// LineInput is one requested line. Quantity keeps the client's spelling,
// which the response echoes.
type LineInput struct {
	Description     string `json:"description"`
	Quantity        string `json:"quantity"`
	Unit            string `json:"unit,omitempty"`
	UnitAmountMinor int64  `json:"unit_amount_minor"`
	TaxRateBps      int64  `json:"tax_rate_bps"`
}

// ParseCreateInvoice validates a decoded JSON body, reporting every
// violation in a *ValidationError. It checks shapes and ranges only; the
// customer's ownership and the amounts' bounds are checked on creation.
func ParseCreateInvoice(body map[string]any) (CreateInvoice, error) {
	r := &reader{}
	o, _ := r.openObject("", body, "customer_id", "issue_date", "due_date", "currency", "language",
		"lines", "external_reference", "purchase_order_reference", "notes", "terms")
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
	}
	in.checkFormats(r)
	if items, ok := o.array(lineFields, 1, maxLines, true); ok {
		for i, item := range items {
			in.Lines = append(in.Lines, r.line(index(lineFields, i), item))
		}
	}
	return in, r.err()
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
	o, ok := r.openObject(path, v, "description", "quantity", "unit", "unit_amount_minor", "tax_rate_bps")
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
	l.TaxRateBps, _ = o.integer("tax_rate_bps", 0, 10000, true)
	return l
}

func quantityMessage(err error) string {
	if errors.Is(err, events.ErrInvalidQuantity) {
		return events.ErrInvalidQuantity.Error()
	}
	return "must be a decimal string"
}
