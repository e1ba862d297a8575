package projections

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Invoices projects InvoiceDrafted into the invoices table.
type Invoices struct{}

var invoicesSchema = mustSchema("invoices.sql")

// Name implements Projection.
func (Invoices) Name() string { return "invoices" }

// Version implements Projection.
func (Invoices) Version() int { return 1 }

// Schema implements Projection.
func (Invoices) Schema() string { return invoicesSchema }

// Tables implements Projection.
func (Invoices) Tables() []string { return []string{"invoices"} }

// Apply implements Projection.
func (Invoices) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	if ev.Type != events.TypeInvoiceDrafted {
		return nil
	}
	var d events.InvoiceDrafted
	var docs recordedDocuments
	if err := errors.Join(json.Unmarshal(ev.Data, &d), json.Unmarshal(ev.Data, &docs)); err != nil {
		return fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
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
		[]byte(docs.Customer), []byte(docs.Issuer), d.Currency, d.Language, d.IssueDate, nullable(d.DueDate),
		[]byte(docs.Lines), d.SubtotalMinor, d.TaxMinor, d.TotalMinor, nullable(d.ExternalReference),
		nullable(d.PurchaseOrderReference), nullable(d.Notes), nullable(d.Terms),
		d.CreatedAt, int64(ev.Revision)+1, hi, lo)
	return nil
}

// recordedDocuments are the snapshots and lines exactly as the event holds
// them: the read model copies them, so no field is lost to a Go struct that
// does not know it yet.
type recordedDocuments struct {
	Customer json.RawMessage `json:"customer"`
	Issuer   json.RawMessage `json:"issuer"`
	Lines    json.RawMessage `json:"lines"`
}
