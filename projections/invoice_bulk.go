package projections

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// A batch of events applied in two statements, whatever its length: every
// InvoiceDrafted of the batch in one multi-row INSERT, then every change of
// the lifecycle events (InvoiceIssued, InvoiceVoided) in one multi-row
// UPDATE, folded per invoice. PostgreSQL plans and executes each once
// instead of once per event. That is most of a catch-up or a rebuild, where
// batches hold thousands of events and every tenth invoice is issued.
//
// The order may change because only an invoice's own events touch its row:
// a change follows its draft in the stream, so the draft is either in an
// earlier batch (committed) or in this one's INSERT, which runs first. The
// rows are inserted in position order, as before.
//
// batchApplier is the optional interface; sendEvents uses it on the fast
// path. The careful path (quarantine.go) still applies one event at a time
// with Apply, which must have the same effect.
type batchApplier interface {
	ApplyAll(evs []events.RecordedEvent, batch *pgx.Batch) error
}

// draftedRowsSQL inserts invoice rows, one element of each of $1..$24 per
// invoice; applyDrafted uses it for a single row too.
const draftedRowsSQL = `
INSERT INTO invoices (id, company_id, account_id, customer_id, stream_name, customer_name,
	customer, issuer, currency, language, issue_date, due_date, status, lines,
	subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
	notes, terms, created_at, updated_at, version, position_hi, position_lo)
SELECT id::uuid, company_id::uuid, account_id, customer_id::uuid, stream_name, customer_name,
	customer::json, issuer::json, currency, language, issue_date::date, due_date::date, 'draft', lines::json,
	subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
	notes, terms, created_at, created_at, version, position_hi, position_lo
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
	$7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
	$14::bigint[], $15::bigint[], $16::bigint[], $17::text[], $18::text[],
	$19::text[], $20::text[], $21::timestamptz[], $22::int[], $23::bigint[], $24::bigint[])
	AS t(id, company_id, account_id, customer_id, stream_name, customer_name,
	customer, issuer, currency, language, issue_date, due_date, lines,
	subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
	notes, terms, created_at, version, position_hi, position_lo)
ORDER BY position_hi, position_lo
ON CONFLICT (id) DO NOTHING`

// draftedRows are the columns of consecutive drafts, one slice per column.
type draftedRows struct {
	id, companyID, accountID, customerID, stream, customerName []string
	customer, issuer, currency, language, issueDate            []string
	dueDate                                                    []*string
	lines                                                      []string
	subtotal, tax, total                                       []int64
	externalRef, poRef, notes, terms                           []*string
	createdAt                                                  []time.Time
	version                                                    []int32
	hi, lo                                                     []int64
}

// ApplyAll implements batchApplier.
func (Invoices) ApplyAll(evs []events.RecordedEvent, batch *pgx.Batch) error {
	var (
		rows    draftedRows
		changes lifecycleChanges
	)
	for _, ev := range evs {
		var err error
		switch ev.Type {
		case events.TypeInvoiceDrafted:
			err = rows.add(ev)
		case events.TypeInvoiceIssued, events.TypeInvoiceVoided:
			err = changes.add(ev)
		}
		if err != nil {
			return err
		}
	}
	rows.queue(batch)
	changes.queue(batch)
	return nil
}

func (r *draftedRows) add(ev events.RecordedEvent) error {
	d, customer, issuer, lines, err := decodeDrafted(ev)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	r.id, r.companyID, r.accountID = append(r.id, d.InvoiceID), append(r.companyID, d.CompanyID), append(r.accountID, d.AccountID)
	r.customerID, r.stream, r.customerName = append(r.customerID, d.CustomerID), append(r.stream, ev.Stream), append(r.customerName, d.CustomerName)
	r.customer, r.issuer, r.lines = append(r.customer, string(customer)), append(r.issuer, string(issuer)), append(r.lines, string(lines))
	r.currency, r.language, r.issueDate = append(r.currency, d.Currency), append(r.language, d.Language), append(r.issueDate, d.IssueDate)
	r.dueDate = append(r.dueDate, nullable(d.DueDate))
	r.subtotal, r.tax, r.total = append(r.subtotal, d.SubtotalMinor), append(r.tax, d.TaxMinor), append(r.total, d.TotalMinor)
	r.externalRef, r.poRef = append(r.externalRef, nullable(d.ExternalReference)), append(r.poRef, nullable(d.PurchaseOrderReference))
	r.notes, r.terms = append(r.notes, nullable(d.Notes)), append(r.terms, nullable(d.Terms))
	r.createdAt, r.version = append(r.createdAt, d.CreatedAt), append(r.version, int32(ev.Revision)+1)
	r.hi, r.lo = append(r.hi, hi), append(r.lo, lo)
	return nil
}

// queue queues the INSERT of the rows, if there are any.
func (r *draftedRows) queue(batch *pgx.Batch) {
	if len(r.id) == 0 {
		return
	}
	batch.Queue(draftedRowsSQL, r.id, r.companyID, r.accountID, r.customerID, r.stream, r.customerName,
		r.customer, r.issuer, r.currency, r.language, r.issueDate, r.dueDate, r.lines,
		r.subtotal, r.tax, r.total, r.externalRef, r.poRef, r.notes, r.terms,
		r.createdAt, r.version, r.hi, r.lo)
}

// lifecycleSQL applies the changes of lifecycle events to invoice rows, one
// element of each of $1..$8 per invoice (each invoice once). A NULL leaves
// its column as it is: an event sets only its own columns, and none of them
// ever to NULL. updated_at and version are the last event's.
const lifecycleSQL = `
UPDATE invoices AS i SET status = c.status,
	number = coalesce(c.number, i.number), issued_at = coalesce(c.issued_at, i.issued_at),
	void_reason = coalesce(c.void_reason, i.void_reason), voided_at = coalesce(c.voided_at, i.voided_at),
	updated_at = c.updated_at, version = c.version
FROM unnest($1::uuid[], $2::text[], $3::text[], $4::timestamptz[], $5::text[], $6::timestamptz[],
	$7::timestamptz[], $8::int[]) AS c(id, status, number, issued_at, void_reason, voided_at, updated_at, version)
WHERE i.id = c.id`

// invoiceChange is what an invoice's lifecycle events set on its row.
type invoiceChange struct {
	status             string
	number, voidReason *string
	issuedAt, voidedAt *time.Time
	updatedAt          time.Time
	version            int32
}

// lifecycleChanges folds lifecycle events into one change per invoice, in
// the order the invoices first appear.
type lifecycleChanges struct {
	ids     []string
	changes []invoiceChange
	index   map[string]int
}

func (c *lifecycleChanges) add(ev events.RecordedEvent) error {
	id, apply, err := decodeLifecycle(ev)
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

// decodeLifecycle decodes an InvoiceIssued or InvoiceVoided into its
// invoice's id and what it sets.
func decodeLifecycle(ev events.RecordedEvent) (id string, apply func(*invoiceChange), err error) {
	switch ev.Type {
	case events.TypeInvoiceIssued:
		var e events.InvoiceIssued
		err = json.Unmarshal(ev.Data, &e)
		id, apply = e.InvoiceID, func(c *invoiceChange) {
			c.status, c.number, c.issuedAt, c.updatedAt = events.StatusIssued, &e.Number, &e.IssuedAt, e.IssuedAt
		}
	case events.TypeInvoiceVoided:
		var e events.InvoiceVoided
		err = json.Unmarshal(ev.Data, &e)
		id, apply = e.InvoiceID, func(c *invoiceChange) {
			c.status, c.voidReason, c.voidedAt, c.updatedAt = events.StatusVoid, &e.Reason, &e.VoidedAt, e.VoidedAt
		}
	default:
		err = fmt.Errorf("not a lifecycle event type")
	}
	if err != nil {
		return "", nil, fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	return id, apply, nil
}

// queue queues the UPDATE of the changed rows, if there are any.
func (c *lifecycleChanges) queue(batch *pgx.Batch) {
	n := len(c.ids)
	if n == 0 {
		return
	}
	status, number, voidReason := make([]string, n), make([]*string, n), make([]*string, n)
	issuedAt, voidedAt, updatedAt := make([]*time.Time, n), make([]*time.Time, n), make([]time.Time, n)
	version := make([]int32, n)
	for i, ch := range c.changes {
		status[i], number[i], voidReason[i] = ch.status, ch.number, ch.voidReason
		issuedAt[i], voidedAt[i], updatedAt[i], version[i] = ch.issuedAt, ch.voidedAt, ch.updatedAt, ch.version
	}
	batch.Queue(lifecycleSQL, c.ids, status, number, issuedAt, voidReason, voidedAt, updatedAt, version)
}
