package projections

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgarray"
)

// A batch of events applied in two statements, whatever its length: every
// InvoiceDrafted of the batch in one multi-row INSERT (or one COPY, see
// draftedRows.write), then every change of the later events
// (InvoiceRevised, InvoiceIssued, InvoiceVoided, CreditNoteIssued,
// PaymentRecorded, PaymentReversed) in one multi-row UPDATE, folded per
// invoice in stream order; then the batch's payments in one multi-row
// INSERT and its reversals in one UPDATE (a payment's reversal follows its
// recording, so the INSERT runs first). PostgreSQL plans and executes each once
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
	ApplyAll(evs []events.RecordedEvent, w *bulkWrite) error
}

// draftedRowsSQL inserts invoice rows, one element of each of $1..$30 per
// invoice; applyDrafted uses it for a single row too. The settlement
// ($26..$30) is events.Settle's for a draft, computed in Go.
const draftedRowsSQL = `
INSERT INTO invoices (id, company_id, account_id, customer_id, stream_name, customer_name,
	customer, issuer, currency, language, issue_date, due_date, status, lines,
	subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
	notes, terms, created_at, updated_at, version, position_hi, position_lo, document,
	amount_credited_minor, amount_paid_minor, amount_due_minor, amount_refundable_minor, payment_status)
SELECT id::uuid, company_id::uuid, account_id, customer_id::uuid, stream_name, customer_name,
	customer, issuer, currency, language, issue_date::date, due_date::date, 'draft', lines,
	subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
	notes, terms, created_at, created_at, version, position_hi, position_lo, document,
	amount_credited_minor, amount_paid_minor, amount_due_minor, amount_refundable_minor, payment_status
FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
	$7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[], $13::text[],
	$14::bigint[], $15::bigint[], $16::bigint[], $17::text[], $18::text[],
	$19::text[], $20::text[], $21::timestamptz[], $22::int[], $23::bigint[], $24::bigint[], $25::text[],
	$26::bigint[], $27::bigint[], $28::bigint[], $29::bigint[], $30::text[])
	AS t(id, company_id, account_id, customer_id, stream_name, customer_name,
	customer, issuer, currency, language, issue_date, due_date, lines,
	subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
	notes, terms, created_at, version, position_hi, position_lo, document,
	amount_credited_minor, amount_paid_minor, amount_due_minor, amount_refundable_minor, payment_status)
ORDER BY position_hi, position_lo
ON CONFLICT (id) DO NOTHING`

// draftedRows are the columns of consecutive drafts, one slice per column.
// The text and bigint columns are pgarray's, which pgx encodes without
// regrowing its buffer: 2,000 drafts' documents are 4-5 MB.
type draftedRows struct {
	id, companyID, accountID, customerID, stream, customerName pgarray.Text
	customer, issuer, currency, language, issueDate            pgarray.Text
	dueDate                                                    []*string
	lines, document                                            pgarray.Text
	subtotal, tax, total                                       pgarray.Int64
	externalRef, poRef, notes, terms                           []*string
	createdAt                                                  []time.Time
	version                                                    []int32
	hi, lo                                                     pgarray.Int64
	settled                                                    settlementArrays
	render                                                     documentRenderer
}

// settlementArrays are the settlement's columns, one slice per column.
type settlementArrays struct {
	credited, paid, due, refundable pgarray.Int64
	status                          pgarray.Text
}

func (a *settlementArrays) add(s events.Settlement) {
	a.credited, a.paid = append(a.credited, s.AmountCreditedMinor), append(a.paid, s.AmountPaidMinor)
	a.due, a.refundable = append(a.due, s.AmountDueMinor), append(a.refundable, s.AmountRefundableMinor)
	a.status = append(a.status, s.PaymentStatus)
}

// ApplyAll implements batchApplier. The drafts are copied when there are
// w.copyMin of them or more (see draftedRows.write).
func (Invoices) ApplyAll(evs []events.RecordedEvent, w *bulkWrite) error {
	var (
		rows    draftedRows
		changes lifecycleChanges
	)
	for _, ev := range evs {
		var err error
		switch ev.Type {
		case events.TypeInvoiceDrafted:
			err = rows.add(ev)
		case events.TypeInvoiceRevised, events.TypeInvoiceIssued, events.TypeInvoiceVoided,
			events.TypeCreditNoteIssued, events.TypePaymentRecorded, events.TypePaymentReversed:
			err = changes.add(ev)
		}
		if err != nil {
			return err
		}
	}
	rows.write(w)
	changes.queue(w.statements)
	return nil
}

func (r *draftedRows) add(ev events.RecordedEvent) error {
	d, docs, err := decodeDrafted(ev, &r.render)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	r.id, r.companyID, r.accountID = append(r.id, d.InvoiceID), append(r.companyID, d.CompanyID), append(r.accountID, d.AccountID)
	r.customerID, r.stream, r.customerName = append(r.customerID, d.CustomerID), append(r.stream, ev.Stream), append(r.customerName, d.CustomerName)
	r.customer, r.issuer, r.lines = append(r.customer, docs.customer), append(r.issuer, docs.issuer), append(r.lines, docs.lines)
	r.document = append(r.document, docs.document)
	r.currency, r.language, r.issueDate = append(r.currency, d.Currency), append(r.language, d.Language), append(r.issueDate, d.IssueDate)
	r.dueDate = append(r.dueDate, nullable(d.DueDate))
	r.subtotal, r.tax, r.total = append(r.subtotal, d.SubtotalMinor), append(r.tax, d.TaxMinor), append(r.total, d.TotalMinor)
	r.externalRef, r.poRef = append(r.externalRef, nullable(d.ExternalReference)), append(r.poRef, nullable(d.PurchaseOrderReference))
	r.notes, r.terms = append(r.notes, nullable(d.Notes)), append(r.terms, nullable(d.Terms))
	r.createdAt, r.version = append(r.createdAt, d.CreatedAt), append(r.version, int32(ev.Revision)+1)
	r.hi, r.lo = append(r.hi, hi), append(r.lo, lo)
	r.settled.add(events.Settle(events.StatusDraft, d.TotalMinor, 0, 0))
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
		r.createdAt, r.version, r.hi, r.lo, r.document,
		r.settled.credited, r.settled.paid, r.settled.due, r.settled.refundable, r.settled.status)
}
