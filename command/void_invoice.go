package command

import (
	"context"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

var opVoidInvoice = operation{name: "invoices.void", kind: events.KindInvoice}

// VoidInvoice is a validated void request.
type VoidInvoice struct {
	Reason string `json:"reason"`
}

// maxReason is the longest reason (of a void, a credit note, a payment's
// reversal), in code points.
const maxReason = 500

// ParseVoidInvoice decodes and validates a void body (Parsed).
func ParseVoidInvoice(raw []byte) (Parsed[VoidInvoice], error) {
	return parseBody(raw, func(r *reader, body map[string]any) VoidInvoice {
		o, _ := r.openObject("", body, "reason")
		return VoidInvoice{Reason: o.reqStr("reason", text{min: 1, max: maxReason, multiline: true})}
	})
}

// VoidInvoice voids a draft or an issued invoice; an issued invoice keeps
// its number. An invoice that was credited or has payments is corrected by
// a credit note instead: voiding it would unsay what its customer was sent
// and what it paid.
func (h *Handler) VoidInvoice(ctx context.Context, req Request, companyID, invoiceID string, body Parsed[VoidInvoice]) (Result[events.Invoice], error) {
	in, lc, err := invoiceChange(ctx, h, req, opVoidInvoice, companyID, invoiceID, body, func(in VoidInvoice) any { return in })
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	return change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		switch {
		case inv.Status == events.StatusVoid:
			return events.EventData{}, fmt.Errorf("%w: the invoice is already void", ErrInvalidState)
		case len(inv.CreditNotes) > 0:
			return events.EventData{}, stateOf("invoice_id", "the invoice has credit notes; credit what is left instead of voiding it")
		case inv.HasPayments():
			return events.EventData{}, stateOf("invoice_id", "the invoice has payments; credit it instead of voiding it")
		}
		voided := events.InvoiceVoided{InvoiceID: inv.InvoiceID, CompanyID: inv.CompanyID, AccountID: inv.AccountID,
			Reason: in.Reason, VoidedAt: h.now()}
		return newEvent(lc.stream, uint64(inv.Version), events.TypeInvoiceVoided, voided, lc.metadata)
	})
}
