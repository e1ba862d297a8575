package projections

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// lifecycleSQL applies the changes of an invoice's later events
// (InvoiceRevised, InvoiceIssued, InvoiceVoided, CreditNoteIssued,
// PaymentRecorded, PaymentReversed) to invoice rows, one element of each
// array per invoice (each invoice once). A NULL leaves its column as it is:
// an event sets only its own columns. A revision replaces the whole draft
// content (c.revised), optional columns included, which it may set to NULL;
// an issue may move issue_date and due_date. The settlement columns are the
// last settlement of the invoice's events (each carries or makes the whole
// settlement). updated_at and version are the last event's.
const lifecycleSQL = `
UPDATE invoices AS i SET status = coalesce(c.status, i.status),
	number = coalesce(c.number, i.number), issued_at = coalesce(c.issued_at, i.issued_at),
	void_reason = coalesce(c.void_reason, i.void_reason), voided_at = coalesce(c.voided_at, i.voided_at),
	issue_date = coalesce(c.issue_date::date, i.issue_date),
	due_date = CASE WHEN c.revised OR c.due_date IS NOT NULL THEN c.due_date::date ELSE i.due_date END,
	customer_id = CASE WHEN c.revised THEN c.customer_id ELSE i.customer_id END,
	customer_name = CASE WHEN c.revised THEN c.customer_name ELSE i.customer_name END,
	customer = CASE WHEN c.revised THEN c.customer ELSE i.customer END,
	currency = CASE WHEN c.revised THEN c.currency ELSE i.currency END,
	language = CASE WHEN c.revised THEN c.language ELSE i.language END,
	lines = CASE WHEN c.revised THEN c.lines ELSE i.lines END,
	subtotal_minor = CASE WHEN c.revised THEN c.subtotal_minor ELSE i.subtotal_minor END,
	tax_minor = CASE WHEN c.revised THEN c.tax_minor ELSE i.tax_minor END,
	total_minor = CASE WHEN c.revised THEN c.total_minor ELSE i.total_minor END,
	external_reference = CASE WHEN c.revised THEN c.external_reference ELSE i.external_reference END,
	purchase_order_reference = CASE WHEN c.revised THEN c.purchase_order_reference ELSE i.purchase_order_reference END,
	notes = CASE WHEN c.revised THEN c.notes ELSE i.notes END,
	terms = CASE WHEN c.revised THEN c.terms ELSE i.terms END,
	document = CASE WHEN c.revised THEN c.document ELSE i.document END,
	amount_credited_minor = coalesce(c.amount_credited_minor, i.amount_credited_minor),
	amount_paid_minor = coalesce(c.amount_paid_minor, i.amount_paid_minor),
	amount_due_minor = coalesce(c.amount_due_minor, i.amount_due_minor),
	amount_refundable_minor = coalesce(c.amount_refundable_minor, i.amount_refundable_minor),
	payment_status = coalesce(c.payment_status, i.payment_status),
	has_payments = i.has_payments OR c.paid,
	updated_at = c.updated_at, version = c.version
FROM unnest($1::text[]::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::timestamptz[],
	$7::timestamptz[], $8::int[], $9::text[], $10::text[], $11::bool[], $12::text[]::uuid[], $13::text[],
	$14::text[], $15::text[], $16::text[], $17::text[], $18::bigint[], $19::bigint[], $20::bigint[],
	$21::text[], $22::text[], $23::text[], $24::text[], $25::text[],
	$26::bigint[], $27::bigint[], $28::bigint[], $29::bigint[], $30::text[], $31::bool[])
	AS c(id, status, number, issued_at, void_reason, voided_at, updated_at, version, issue_date, due_date,
	revised, customer_id, customer_name, customer, currency, language, lines, subtotal_minor, tax_minor,
	total_minor, external_reference, purchase_order_reference, notes, terms, document,
	amount_credited_minor, amount_paid_minor, amount_due_minor, amount_refundable_minor, payment_status, paid)
WHERE i.id = c.id`

// invoiceChange is what an invoice's later events set on its row.
type invoiceChange struct {
	status             *string
	number, voidReason *string
	issuedAt, voidedAt *time.Time
	issueDate, dueDate *string
	updatedAt          time.Time
	version            int32
	// revised: a revision set the draft content below, which replaces the
	// row's whatever it holds (NULL included).
	revised bool
	content revisedContent
	// settled: the invoice's settlement after the last event that sets
	// one; nil leaves the row's.
	settled *events.Settlement
	// paid: a payment was recorded (has_payments from then on).
	paid bool
}

// revisedContent is a revision's draft content in the row's columns, the
// documents rendered as renderDocuments renders a draft's.
type revisedContent struct {
	customerID, customerName, customer, currency, language, lines string
	document                                                      string
	subtotal, tax, total                                          int64
	externalRef, poRef, notes, terms                              *string
}

// lifecycleChanges folds an invoice's later events into one change per
// invoice, in the order the invoices first appear.
type lifecycleChanges struct {
	ids      []string
	changes  []invoiceChange
	index    map[string]int
	payments paymentChanges
}

func (c *lifecycleChanges) add(ev events.RecordedEvent) error {
	id, apply, err := decodeLifecycle(ev, &c.payments)
	if err != nil {
		return err
	}
	i, ok := c.index[id]
	if !ok {
		if c.index == nil {
			c.index = map[string]int{}
		}
		i = len(c.ids)
		c.index[id] = i
		c.ids, c.changes = append(c.ids, id), append(c.changes, invoiceChange{})
	}
	apply(&c.changes[i])
	c.changes[i].version = int32(ev.Revision) + 1 // an invoice's version counts its stream's events
	return nil
}

// decodeLifecycle decodes an invoice's later event into its invoice's id
// and what it sets on the invoice's row; a payment's or a reversal's row
// change goes to payments.
func decodeLifecycle(ev events.RecordedEvent, payments *paymentChanges) (id string, apply func(*invoiceChange), err error) {
	switch ev.Type {
	case events.TypeInvoiceRevised:
		id, apply, err = decodeRevised(ev)
	case events.TypeCreditNoteIssued, events.TypePaymentRecorded, events.TypePaymentReversed:
		id, apply, err = decodeSettlement(ev, payments)
	case events.TypeInvoiceIssued:
		var e events.InvoiceIssued
		err = json.Unmarshal(ev.Data, &e)
		id, apply = e.InvoiceID, func(c *invoiceChange) {
			c.status, c.number, c.issuedAt, c.updatedAt = ptr(events.StatusIssued), &e.Number, &e.IssuedAt, e.IssuedAt
			if e.IssueDate != "" {
				c.issueDate = &e.IssueDate
			}
			if e.DueDate != "" {
				c.dueDate = &e.DueDate
			}
		}
	case events.TypeInvoiceVoided:
		var e events.InvoiceVoided
		err = json.Unmarshal(ev.Data, &e)
		id, apply = e.InvoiceID, func(c *invoiceChange) {
			c.status, c.voidReason, c.voidedAt, c.updatedAt = ptr(events.StatusVoid), &e.Reason, &e.VoidedAt, e.VoidedAt
			c.settled = ptr(events.Settle(events.StatusVoid, 0, 0, 0))
		}
	default:
		err = fmt.Errorf("not a lifecycle event type")
	}
	if err != nil {
		return "", nil, fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	return id, apply, nil
}

// decodeRevised decodes an InvoiceRevised and renders its documents.
func decodeRevised(ev events.RecordedEvent) (string, func(*invoiceChange), error) {
	var e events.InvoiceRevised
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return "", nil, err
	}
	d := events.InvoiceDrafted{}.Revise(e)
	docs, err := renderDocuments(d)
	if err != nil {
		return "", nil, err
	}
	content := revisedContent{customerID: d.CustomerID, customerName: d.CustomerName, customer: docs.customer,
		currency: d.Currency, language: d.Language, lines: docs.lines, document: docs.document,
		subtotal: d.SubtotalMinor, tax: d.TaxMinor, total: d.TotalMinor,
		externalRef: nullable(d.ExternalReference), poRef: nullable(d.PurchaseOrderReference),
		notes: nullable(d.Notes), terms: nullable(d.Terms)}
	return e.InvoiceID, func(c *invoiceChange) {
		c.status, c.updatedAt, c.revised, c.content = ptr(events.StatusDraft), e.RevisedAt, true, content
		c.issueDate, c.dueDate = &e.IssueDate, nullable(e.DueDate)
		c.settled = ptr(events.Settle(events.StatusDraft, d.TotalMinor, 0, 0))
	}, nil
}

// queue queues the UPDATE of the changed rows, if there are any.
func (c *lifecycleChanges) queue(batch *pgx.Batch) {
	if len(c.ids) == 0 {
		return
	}
	var a changeArrays
	for _, ch := range c.changes {
		a.add(ch)
	}
	batch.Queue(lifecycleSQL, c.ids, a.status, a.number, a.issuedAt, a.voidReason, a.voidedAt, a.updatedAt, a.version,
		a.issueDate, a.dueDate, a.revised, a.customerID, a.customerName, a.customer, a.currency, a.language,
		a.lines, a.subtotal, a.tax, a.total, a.externalRef, a.poRef, a.notes, a.terms, a.document,
		a.credited, a.paid, a.due, a.refundable, a.paymentStatus, a.hasPayments)
	c.payments.queue(batch)
}

// changeArrays are lifecycleSQL's parameters, one slice per column. A
// change that is no revision sends its content columns as NULL or zero,
// which the statement ignores.
type changeArrays struct {
	status, number, voidReason, issueDate, dueDate                []*string
	issuedAt, voidedAt                                            []*time.Time
	updatedAt                                                     []time.Time
	version                                                       []int32
	revised                                                       []bool
	customerID, customerName, customer, currency, language, lines []*string
	document                                                      []*string
	subtotal, tax, total                                          []int64
	externalRef, poRef, notes, terms                              []*string
	credited, paid, due, refundable                               []*int64
	paymentStatus                                                 []*string
	hasPayments                                                   []bool
}

func (a *changeArrays) add(ch invoiceChange) {
	a.status, a.number, a.voidReason = append(a.status, ch.status), append(a.number, ch.number), append(a.voidReason, ch.voidReason)
	a.issuedAt, a.voidedAt, a.updatedAt = append(a.issuedAt, ch.issuedAt), append(a.voidedAt, ch.voidedAt), append(a.updatedAt, ch.updatedAt)
	a.version, a.issueDate, a.dueDate = append(a.version, ch.version), append(a.issueDate, ch.issueDate), append(a.dueDate, ch.dueDate)
	a.revised = append(a.revised, ch.revised)
	k := ch.content
	text := func(s string) *string {
		if !ch.revised {
			return nil
		}
		return &s
	}
	a.customerID, a.customerName, a.customer = append(a.customerID, text(k.customerID)), append(a.customerName, text(k.customerName)), append(a.customer, text(k.customer))
	a.currency, a.language, a.lines = append(a.currency, text(k.currency)), append(a.language, text(k.language)), append(a.lines, text(k.lines))
	a.document = append(a.document, text(k.document))
	a.subtotal, a.tax, a.total = append(a.subtotal, k.subtotal), append(a.tax, k.tax), append(a.total, k.total)
	a.externalRef, a.poRef, a.notes, a.terms = append(a.externalRef, k.externalRef), append(a.poRef, k.poRef), append(a.notes, k.notes), append(a.terms, k.terms)
	a.addSettlement(ch.settled)
	a.hasPayments = append(a.hasPayments, ch.paid)
}

// addSettlement appends a settlement's columns, or NULLs for none.
func (a *changeArrays) addSettlement(s *events.Settlement) {
	if s == nil {
		a.credited, a.paid, a.due, a.refundable = append(a.credited, nil), append(a.paid, nil), append(a.due, nil), append(a.refundable, nil)
		a.paymentStatus = append(a.paymentStatus, nil)
		return
	}
	a.credited, a.paid = append(a.credited, &s.AmountCreditedMinor), append(a.paid, &s.AmountPaidMinor)
	a.due, a.refundable = append(a.due, &s.AmountDueMinor), append(a.refundable, &s.AmountRefundableMinor)
	a.paymentStatus = append(a.paymentStatus, &s.PaymentStatus)
}
