package projections

import (
	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// CreditNotes projects each CreditNoteIssued into a row of credit_notes. A
// credit note never changes, so its row is written once.
type CreditNotes struct{}

var creditNotesSchema = mustSchema("credit_notes.sql")

// Name implements Projection.
func (CreditNotes) Name() string { return "credit_notes" }

// Version implements Projection.
func (CreditNotes) Version() int { return 1 }

// Schema implements Projection.
func (CreditNotes) Schema() string { return creditNotesSchema }

// Tables implements Projection.
func (CreditNotes) Tables() []string { return []string{"credit_notes"} }

// Apply implements Projection.
func (CreditNotes) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	if ev.Type != events.TypeCreditNoteIssued {
		return nil
	}
	var c events.CreditNoteIssued
	if err := decode("credit_notes", ev, &c); err != nil {
		return err
	}
	docs, err := renderCreditNote(c)
	if err != nil {
		return err
	}
	hi, lo := key(ev)
	batch.Queue(`
		INSERT INTO credit_notes (position_hi, position_lo, id, company_id, account_id, invoice_id, customer_id,
			stream_name, invoice_number, invoice_issue_date, number, sequence, issue_date, reason,
			external_reference, customer_name, customer, issuer, currency, language, lines,
			subtotal_minor, tax_minor, total_minor, document, issued_at, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20,
			$21, $22, $23, $24, $25, $26, 1)
		ON CONFLICT (id) DO NOTHING`,
		hi, lo, c.CreditNoteID, c.CompanyID, c.AccountID, c.InvoiceID, c.CustomerID,
		ev.Stream, c.InvoiceNumber, c.InvoiceIssueDate, c.Number, int64(c.Sequence), c.IssueDate, c.Reason,
		nullable(c.ExternalReference), c.CustomerName, docs.customer, docs.issuer, c.Currency, c.Language,
		docs.lines, c.SubtotalMinor, c.TaxMinor, c.TotalMinor, docs.document, c.IssuedAt)
	return nil
}

// renderCreditNote renders a credit note's snapshots, lines and document
// fields as renderDocuments renders an invoice's, which the API shows the
// same way.
func renderCreditNote(c events.CreditNoteIssued) (renderedDocs, error) {
	return renderDocuments(events.InvoiceDrafted{Customer: c.Customer, Issuer: c.Issuer, Lines: c.Lines,
		DocumentTerms: c.DocumentTerms, TaxBreakdown: c.TaxBreakdown})
}
