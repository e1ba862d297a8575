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

// maxVoidReason is the longest void reason, in code points.
const maxVoidReason = 500

// ParseVoidInvoice decodes and validates a void body (Parsed).
func ParseVoidInvoice(raw []byte) (Parsed[VoidInvoice], error) {
	return parseBody(raw, func(r *reader, body map[string]any) VoidInvoice {
		o, _ := r.openObject("", body, "reason")
		return VoidInvoice{Reason: o.reqStr("reason", text{min: 1, max: maxVoidReason, multiline: true})}
	})
}

// VoidInvoice voids a draft or an issued invoice; an issued invoice keeps
// its number.
func (h *Handler) VoidInvoice(ctx context.Context, req Request, companyID, invoiceID string, body Parsed[VoidInvoice]) (Result[events.Invoice], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return Result[events.Invoice]{}, err
	}
	// The company's stream name, remembered once found, says whether the
	// company is the caller's; a void needs nothing else of it.
	if _, err := h.cfg.Directory.CompanyStream(ctx, req.Actor.AccountID, companyID); err != nil {
		return Result[events.Invoice]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	lc, err := h.newInvoiceLifecycle(ctx, req, opVoidInvoice, companyID, invoiceID, in)
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	return change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		if inv.Status == events.StatusVoid {
			return events.EventData{}, fmt.Errorf("%w: the invoice is already void", ErrInvalidState)
		}
		voided := events.InvoiceVoided{InvoiceID: inv.InvoiceID, CompanyID: inv.CompanyID, AccountID: inv.AccountID,
			Reason: in.Reason, VoidedAt: h.now()}
		return newEvent(lc.stream, uint64(inv.Version), events.TypeInvoiceVoided, voided, lc.metadata)
	})
}
