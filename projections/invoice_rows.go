package projections

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Invoices projects InvoiceDrafted into the invoices table, and the later
// events (InvoiceRevised, InvoiceIssued, InvoiceVoided, and the settlement's
// CreditNoteIssued, PaymentRecorded, PaymentReversed) onto its row; the
// payments into invoice_payments.
type Invoices struct{}

var invoicesSchema = mustSchema("invoices.sql")

// Name implements Projection.
func (Invoices) Name() string { return "invoices" }

// Version implements Projection.
func (Invoices) Version() int { return 9 }

// Schema implements Projection.
func (Invoices) Schema() string { return invoicesSchema }

// Tables implements Projection.
func (Invoices) Tables() []string { return []string{"invoices", "invoice_payments"} }

// Apply implements Projection.
func (Invoices) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	switch ev.Type {
	case events.TypeInvoiceDrafted:
		return applyDrafted(ev, batch)
	case events.TypeInvoiceRevised, events.TypeInvoiceIssued, events.TypeInvoiceVoided,
		events.TypeCreditNoteIssued, events.TypePaymentRecorded, events.TypePaymentReversed:
		return applyLifecycle(ev, batch)
	}
	return nil
}

// applyLifecycle changes one invoice row with ApplyAll's multi-row UPDATE
// (a single invoice), and a payment's row with its multi-row INSERT or
// UPDATE, so that one statement says what a change does.
func applyLifecycle(ev events.RecordedEvent, batch *pgx.Batch) error {
	var changes lifecycleChanges
	if err := changes.add(ev); err != nil {
		return err
	}
	changes.queue(batch)
	return nil
}

// decodeDrafted decodes an InvoiceDrafted and renders its documents as the
// read model stores them.
func decodeDrafted(ev events.RecordedEvent, r *documentRenderer) (d events.InvoiceDrafted, docs renderedDocs, err error) {
	// UnmarshalJSON itself, not json.Unmarshal: that would scan the whole
	// event once more before calling it.
	if err := d.UnmarshalJSON(ev.Data); err != nil {
		return d, docs, fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	if docs, err = r.render(d); err != nil {
		return d, docs, fmt.Errorf("invoices: render %s event %x: %w", ev.Type, ev.ID, err)
	}
	return d, docs, nil
}

// renderedDocs are an invoice's document columns as the API renders them.
type renderedDocs struct {
	customer, issuer, lines, document string
}

// applyDrafted inserts one invoice with ApplyAll's multi-row INSERT (a
// single row), so that one statement says what an invoice row holds.
func applyDrafted(ev events.RecordedEvent, batch *pgx.Batch) error {
	var rows draftedRows
	if err := rows.add(ev); err != nil {
		return err
	}
	rows.queue(batch)
	return nil
}

// renderDocuments renders the snapshots and lines once, here, exactly as
// the API shows them (absent identifiers as an empty list), so that reads
// pass the stored text through without decoding it.
func renderDocuments(d events.InvoiceDrafted) (renderedDocs, error) {
	var r documentRenderer
	return r.render(d)
}

// documentRenderer is renderDocuments for many drafts: the four documents
// go through one encoder into one buffer, kept from draft to draft, and
// become one string that the four columns slice. A catch-up renders a
// million drafts; a buffer and a string of each document were a tenth of
// its allocations. The zero value is ready.
type documentRenderer struct {
	buf bytes.Buffer
	enc *json.Encoder
}

func (r *documentRenderer) render(d events.InvoiceDrafted) (docs renderedDocs, err error) {
	d.Customer.Identifiers = nonNilIdentifiers(d.Customer.Identifiers)
	d.Issuer.Identifiers = nonNilIdentifiers(d.Issuer.Identifiers)
	if r.enc == nil {
		r.enc = apiEncoder(&r.buf)
	}
	r.buf.Reset()
	fields := [...]*string{&docs.customer, &docs.issuer, &docs.lines, &docs.document}
	var ends [len(fields)]int
	for i, v := range [len(fields)]any{d.Customer, d.Issuer, d.Lines, d.DocumentFields()} {
		if err := r.enc.Encode(v); err != nil {
			return renderedDocs{}, err
		}
		ends[i] = r.buf.Len()
	}
	all, start := r.buf.String(), 0
	for i, f := range fields {
		*f = all[start : ends[i]-1] // without Encode's newline
		start = ends[i]
	}
	return docs, nil
}
