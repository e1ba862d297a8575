package projections

import (
	"encoding/json"
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
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return fmt.Errorf("invoices: decode %s event %x: %w", ev.Type, ev.ID, err)
	}
	docs, err := marshalAll(d.Customer, d.Issuer, d.Lines)
	if err != nil {
		return fmt.Errorf("invoices: encode %s: %w", d.InvoiceID, err)
	}
	batch.Queue(`
		INSERT INTO invoices (id, company_id, account_id, customer_id, stream_name, customer_name,
			customer, issuer, currency, language, issue_date, due_date, status, lines,
			subtotal_minor, tax_minor, total_minor, external_reference, purchase_order_reference,
			notes, terms, created_at, updated_at, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'draft', $13,
			$14, $15, $16, $17, $18, $19, $20, $21, $21, $22)
		ON CONFLICT (id) DO NOTHING`,
		d.InvoiceID, d.CompanyID, d.AccountID, d.CustomerID, ev.Stream, d.CustomerName,
		docs[0], docs[1], d.Currency, d.Language, d.IssueDate, nullable(d.DueDate), docs[2],
		d.SubtotalMinor, d.TaxMinor, d.TotalMinor, nullable(d.ExternalReference),
		nullable(d.PurchaseOrderReference), nullable(d.Notes), nullable(d.Terms),
		d.CreatedAt, int64(ev.Revision)+1)
	return nil
}

func marshalAll(values ...any) ([][]byte, error) {
	out := make([][]byte, len(values))
	for i, v := range values {
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = b
	}
	return out, nil
}
