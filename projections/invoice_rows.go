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

func applyDrafted(ev events.RecordedEvent, batch *pgx.Batch) error {
	d, customer, issuer, lines, err := decodeDrafted(ev)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	batch.Queue(`
		INSERT INTO invoices (id, company_id, account_id, customer_id, stream_name, customer_name,
			customer, issuer, currency, language, issue_date, due_date, status, lines,
			subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
			notes, terms, created_at, updated_at, version, position_hi, position_lo)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'draft', $13,
			$14, $15, $16, $17, $18, $19, $20, $21, $21, $22, $23, $24)
		ON CONFLICT (id) DO NOTHING`,
		d.InvoiceID, d.CompanyID, d.AccountID, d.CustomerID, ev.Stream, d.CustomerName,
		customer, issuer, d.Currency, d.Language, d.IssueDate, nullable(d.DueDate),
		lines, d.SubtotalMinor, d.TaxMinor, d.TotalMinor, nullable(d.ExternalReference),
		nullable(d.PurchaseOrderReference), nullable(d.Notes), nullable(d.Terms),
		d.CreatedAt, int64(ev.Revision)+1, hi, lo)
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
