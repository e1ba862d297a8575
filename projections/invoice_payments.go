package projections

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// The settlement's events on the invoices projection: CreditNoteIssued,
// PaymentRecorded and PaymentReversed each carry the invoice's settlement
// after them, which the invoice's row copies (events.Settle is computed on
// the write side, once). A payment is a row of invoice_payments; its
// reversal marks that row.

// paymentsSQL inserts payments, one element of each array per payment, in
// position order (the order recorded).
const paymentsSQL = `
INSERT INTO invoice_payments (position_hi, position_lo, id, invoice_id, amount_minor, paid_on,
	method, reference, recorded_at)
SELECT position_hi, position_lo, id, invoice_id, amount_minor, paid_on::date, method, reference, recorded_at
FROM unnest($1::bigint[], $2::bigint[], $3::text[]::uuid[], $4::text[]::uuid[], $5::bigint[], $6::text[],
	$7::text[], $8::text[], $9::timestamptz[])
	AS p(position_hi, position_lo, id, invoice_id, amount_minor, paid_on, method, reference, recorded_at)
ORDER BY position_hi, position_lo
ON CONFLICT (id) DO NOTHING`

// reversalsSQL marks payments reversed, one element of each array per
// payment (each payment once).
const reversalsSQL = `
UPDATE invoice_payments AS p SET reversed_at = r.reversed_at, reversal_reason = r.reason
FROM unnest($1::text[]::uuid[], $2::timestamptz[], $3::text[]) AS r(id, reversed_at, reason)
WHERE p.id = r.id`

// paymentChanges are a batch's payments and reversals, as their columns.
type paymentChanges struct {
	hi, lo                []int64
	id, invoiceID, paidOn []string
	amount                []int64
	method, reference     []*string
	recordedAt            []time.Time
	reversed              []string
	reversedAt            []time.Time
	reason                []*string
	reversedIndex         map[string]int
}

// decodeSettlement decodes a CreditNoteIssued, PaymentRecorded or
// PaymentReversed into its invoice's id and what it sets on the invoice's
// row (the settlement after it, updated_at), and adds a payment's or a
// reversal's row change to payments.
func decodeSettlement(ev events.RecordedEvent, payments *paymentChanges) (string, func(*invoiceChange), error) {
	var (
		id      string
		settled events.Settlement
		at      time.Time
		err     error
	)
	switch ev.Type {
	case events.TypeCreditNoteIssued:
		var e events.CreditNoteIssued
		err = json.Unmarshal(ev.Data, &e)
		id, settled, at = e.InvoiceID, e.Invoice, e.IssuedAt
	case events.TypePaymentRecorded:
		var e events.PaymentRecorded
		err = json.Unmarshal(ev.Data, &e)
		id, settled, at = e.InvoiceID, e.Invoice, e.RecordedAt
		if err == nil {
			payments.record(ev, e)
		}
	case events.TypePaymentReversed:
		var e events.PaymentReversed
		err = json.Unmarshal(ev.Data, &e)
		id, settled, at = e.InvoiceID, e.Invoice, e.ReversedAt
		if err == nil {
			payments.reverse(e)
		}
	default:
		err = fmt.Errorf("not a settlement event type")
	}
	if err != nil {
		return "", nil, err
	}
	paid := ev.Type == events.TypePaymentRecorded
	return id, func(c *invoiceChange) { c.settled, c.updatedAt, c.paid = &settled, at, c.paid || paid }, nil
}

func (p *paymentChanges) record(ev events.RecordedEvent, e events.PaymentRecorded) {
	hi, lo := key(ev)
	p.hi, p.lo = append(p.hi, hi), append(p.lo, lo)
	p.id, p.invoiceID, p.paidOn = append(p.id, e.PaymentID), append(p.invoiceID, e.InvoiceID), append(p.paidOn, e.PaidOn)
	p.amount, p.recordedAt = append(p.amount, e.AmountMinor), append(p.recordedAt, e.RecordedAt)
	p.method, p.reference = append(p.method, nullable(e.Method)), append(p.reference, nullable(e.Reference))
}

// reverse adds a reversal; a payment reversed twice in a batch (which the
// write side refuses) keeps the last, as one event at a time would.
func (p *paymentChanges) reverse(e events.PaymentReversed) {
	if i, ok := p.reversedIndex[e.PaymentID]; ok {
		p.reversedAt[i], p.reason[i] = e.ReversedAt, nullable(e.Reason)
		return
	}
	if p.reversedIndex == nil {
		p.reversedIndex = map[string]int{}
	}
	p.reversedIndex[e.PaymentID] = len(p.reversed)
	p.reversed, p.reversedAt, p.reason = append(p.reversed, e.PaymentID), append(p.reversedAt, e.ReversedAt), append(p.reason, nullable(e.Reason))
}

// queue queues the INSERT of the payments, then the UPDATE of the
// reversals, each if there are any.
func (p *paymentChanges) queue(batch *pgx.Batch) {
	if len(p.id) > 0 {
		batch.Queue(paymentsSQL, p.hi, p.lo, p.id, p.invoiceID, p.amount, p.paidOn, p.method, p.reference, p.recordedAt)
	}
	if len(p.reversed) > 0 {
		batch.Queue(reversalsSQL, p.reversed, p.reversedAt, p.reason)
	}
}

// ptr is a pointer to a copy of v.
func ptr[T any](v T) *T { return &v }
