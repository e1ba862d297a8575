package projections

import (
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Invoices projects InvoiceDrafted into the invoices table, and the
// lifecycle events (InvoiceIssued, InvoiceVoided) onto its row.
type Invoices struct{}

var invoicesSchema = mustSchema("invoices.sql")

// Name implements Projection.
func (Invoices) Name() string { return "invoices" }

// Version implements Projection.
func (Invoices) Version() int { return 3 }

// Schema implements Projection.
func (Invoices) Schema() string { return invoicesSchema }

// Tables implements Projection.
func (Invoices) Tables() []string { return []string{"invoices"} }

// Apply implements Projection.
func (Invoices) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	switch ev.Type {
	case events.TypeInvoiceDrafted:
		return applyDrafted(ev, batch)
	case events.TypeInvoiceIssued:
		return applyIssued(ev, batch)
	case events.TypeInvoiceVoided:
		return applyVoided(ev, batch)
	}
	return nil
}

// The lifecycle updates set version to the event's revision + 1: an
// invoice's version counts the events of its stream.
const (
	issuedSQL = `UPDATE invoices SET status = 'issued', number = $2, issued_at = $3, updated_at = $3, version = $4 WHERE id = $1`
	voidedSQL = `UPDATE invoices SET status = 'void', void_reason = $2, voided_at = $3, updated_at = $3, version = $4 WHERE id = $1`
)

func applyIssued(ev events.RecordedEvent, batch *pgx.Batch) error {
	var e events.InvoiceIssued
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	batch.Queue(issuedSQL, e.InvoiceID, e.Number, e.IssuedAt, int64(ev.Revision)+1)
	return nil
}

func applyVoided(ev events.RecordedEvent, batch *pgx.Batch) error {
	var e events.InvoiceVoided
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	batch.Queue(voidedSQL, e.InvoiceID, e.Reason, e.VoidedAt, int64(ev.Revision)+1)
	return nil
}

// decodeDrafted decodes an InvoiceDrafted and renders its documents as the
// read model stores them.
func decodeDrafted(ev events.RecordedEvent) (d events.InvoiceDrafted, customer, issuer, lines []byte, err error) {
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return d, nil, nil, nil, fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	if customer, issuer, lines, err = renderDocuments(d); err != nil {
		return d, nil, nil, nil, fmt.Errorf("invoices: render %s event %x: %w", ev.Type, ev.ID, err)
	}
	return d, customer, issuer, lines, nil
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
func renderDocuments(d events.InvoiceDrafted) (customer, issuer, lines []byte, err error) {
	d.Customer.Identifiers = nonNilIdentifiers(d.Customer.Identifiers)
	d.Issuer.Identifiers = nonNilIdentifiers(d.Issuer.Identifiers)
	if customer, err = apiJSON(d.Customer); err != nil {
		return nil, nil, nil, err
	}
	if issuer, err = apiJSON(d.Issuer); err != nil {
		return nil, nil, nil, err
	}
	if lines, err = apiJSON(d.Lines); err != nil {
		return nil, nil, nil, err
	}
	return customer, issuer, lines, nil
}
