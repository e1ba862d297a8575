package command

import (
	"context"
	"fmt"
	"time"

	"github.com/invoicing/invoicing/events"
)

var (
	opRecordPayment  = operation{name: "payments.record", kind: events.KindInvoice}
	opReversePayment = operation{name: "payments.reverse", kind: events.KindInvoice}
)

// RecordPayment is a validated payment. Its JSON form is the request's
// fingerprint.
type RecordPayment struct {
	AmountMinor int64  `json:"amount_minor"`
	PaidOn      string `json:"paid_on"`
	Method      string `json:"method,omitempty"`
	Reference   string `json:"reference,omitempty"`
}

// ParseRecordPayment decodes and checks a payment body (Parsed).
func ParseRecordPayment(raw []byte) (Parsed[RecordPayment], error) {
	return parseBody(raw, func(r *reader, body map[string]any) RecordPayment {
		o, ok := r.openObject("", body, "amount_minor", "paid_on", "method", "reference")
		if !ok {
			return RecordPayment{}
		}
		in := RecordPayment{
			PaidOn:    o.reqStr("paid_on", text{min: 1, max: 10}),
			Method:    o.str("method", text{min: 1, max: 64}),
			Reference: o.str("reference", reference),
		}
		in.AmountMinor, _ = o.integer("amount_minor", 1, events.MaxAmountMinor, true)
		parseDate(r, "paid_on", in.PaidOn)
		return in
	})
}

// RecordPayment records a payment received for an issued invoice of the
// caller's company. It never exceeds what is due (events.Settle): the
// check and the append are one decision on the invoice's stream, so
// concurrent payments cannot overpay it together.
func (h *Handler) RecordPayment(ctx context.Context, req Request, companyID, invoiceID string, body Parsed[RecordPayment]) (Result[events.Invoice], error) {
	in, lc, err := invoiceChange(ctx, h, req, opRecordPayment, companyID, invoiceID, body, func(in RecordPayment) any { return in })
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	return change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		if err := payable(inv, in, h.now()); err != nil {
			return events.EventData{}, err
		}
		id, err := h.newID()
		if err != nil {
			return events.EventData{}, err
		}
		p := events.PaymentRecorded{PaymentID: id, InvoiceID: inv.InvoiceID, CompanyID: inv.CompanyID,
			AccountID: inv.AccountID, AmountMinor: in.AmountMinor, PaidOn: in.PaidOn, Method: in.Method,
			Reference: in.Reference, RecordedAt: h.now()}
		p.Invoice = settlementAfter(inv, func(next *events.Invoice) {
			next.Payments = append(next.Payments, events.Payment{PaymentRecorded: p})
		})
		return newEvent(lc.stream, uint64(inv.Version), events.TypePaymentRecorded, p, lc.metadata)
	})
}

// payable reports why inv cannot take the payment in, if it cannot.
func payable(inv events.Invoice, in RecordPayment, now time.Time) error {
	if inv.Status != events.StatusIssued {
		return stateOf("invoice_id", "the invoice is %s; only an issued invoice takes payments", inv.Status)
	}
	// The latest time zone is UTC+14: a payment made today anywhere is
	// not after that zone's today.
	if latest := now.UTC().Add(14 * time.Hour).Format(events.DateLayout); in.PaidOn > latest {
		return &ValidationError{Violations: []Violation{{Path: "paid_on", Message: fmt.Sprintf("must not be in the future (after %s)", latest)}}}
	}
	due := inv.Settlement().AmountDueMinor
	if in.AmountMinor > due {
		return fmt.Errorf("the invoice may not be overpaid: %w", &StateError{Violations: []Violation{{Path: "amount_minor",
			Message: fmt.Sprintf("exceeds the amount due, %d", due)}}})
	}
	return nil
}

// ReversePayment is a validated reversal; Reason may be "".
type ReversePayment struct {
	Reason string `json:"reason,omitempty"`
}

// ParseReversePayment decodes and checks a reversal body (Parsed).
func ParseReversePayment(raw []byte) (Parsed[ReversePayment], error) {
	return parseBody(raw, func(r *reader, body map[string]any) ReversePayment {
		o, ok := r.openObject("", body, "reason")
		if !ok {
			return ReversePayment{}
		}
		return ReversePayment{Reason: o.str("reason", text{min: 1, max: maxReason, multiline: true})}
	})
}

// reversal is a reversal's meaning, its fingerprint: the payment is part
// of it, so one key cannot reverse two payments.
type reversal struct {
	PaymentID string `json:"payment_id"`
	ReversePayment
}

// ReversePayment reverses a payment recorded by mistake: it stays in the
// invoice's history, marked reversed, and no longer counts. An unknown
// payment is events.ErrNotFound.
func (h *Handler) ReversePayment(ctx context.Context, req Request, companyID, invoiceID, paymentID string, body Parsed[ReversePayment]) (Result[events.Invoice], error) {
	in, lc, err := invoiceChange(ctx, h, req, opReversePayment, companyID, invoiceID, body, func(in ReversePayment) any {
		return reversal{PaymentID: paymentID, ReversePayment: in}
	})
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	return change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		p := inv.Payment(paymentID)
		switch {
		case p == nil:
			return events.EventData{}, fmt.Errorf("payment %s of invoice %s: %w", paymentID, invoiceID, events.ErrNotFound)
		case p.Reversal != nil:
			return events.EventData{}, stateOf("payment_id", "the payment was reversed already")
		}
		e := events.PaymentReversed{PaymentID: paymentID, InvoiceID: inv.InvoiceID, CompanyID: inv.CompanyID,
			AccountID: inv.AccountID, Reason: in.Reason, ReversedAt: h.now()}
		e.Invoice = settlementAfter(inv, func(next *events.Invoice) { next.Payment(paymentID).Reversal = &e })
		return newEvent(lc.stream, uint64(inv.Version), events.TypePaymentReversed, e, lc.metadata)
	})
}

// invoiceChange starts a lifecycle operation on an invoice of the caller's
// company, in the order of a write's checks: the key (400), the company and
// the invoice (404), the body's violations (422). meaning is the request's
// fingerprinted meaning.
func invoiceChange[T any](ctx context.Context, h *Handler, req Request, op operation, companyID, invoiceID string, body Parsed[T], meaning func(T) any) (T, lifecycle[events.Invoice], error) {
	var in T
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return in, lifecycle[events.Invoice]{}, err
	}
	if _, err := h.cfg.Directory.CompanyStream(ctx, req.Actor.AccountID, companyID); err != nil {
		return in, lifecycle[events.Invoice]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return in, lifecycle[events.Invoice]{}, err
	}
	lc, err := h.newInvoiceLifecycle(ctx, req, op, companyID, invoiceID, meaning(in))
	return in, lc, err
}
