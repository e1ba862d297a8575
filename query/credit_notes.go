package query

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// CreditNoteSummary is the list form of a credit note.
type CreditNoteSummary struct {
	ID, CompanyID, InvoiceID, InvoiceNumber, CustomerID, CustomerName string
	Number, IssueDate, Reason, ExternalReference, Currency            string
	SubtotalMinor, TaxMinor, TotalMinor                               int64
	IssuedAt                                                          time.Time
}

// CreditNote is the full form: the summary plus what the credit note
// copied from its invoice. Customer, Issuer, Lines and Document are JSON
// documents as the API renders them, stored so (see Invoice).
type CreditNote struct {
	CreditNoteSummary
	InvoiceIssueDate, Language string
	Sequence                   int64
	Customer, Issuer, Lines    json.RawMessage
	// Document is the JSON of events.InvoiceDocumentFields: the document
	// terms and the VAT breakdown.
	Document json.RawMessage
}

// CreditNoteFilter narrows a credit-note list; empty fields do not filter.
type CreditNoteFilter struct {
	InvoiceID, CustomerID, ExternalReference string
}

// creditNoteSummaryFields are the list form's columns, led by the row's
// key; as summaryFields for invoices, the one statement of the select
// list, the scan targets and the wire layout.
var creditNoteSummaryFields = []column[CreditNoteSummary]{
	{"position_hi", int8Binary, func(_ *CreditNoteSummary, k *rowKey) any { return &k.hi }},
	{"position_lo", int8Binary, func(_ *CreditNoteSummary, k *rowKey) any { return &k.lo }},
	{"id", uuidBinary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.ID }},
	{"company_id", uuidBinary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.CompanyID }},
	{"invoice_id", uuidBinary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.InvoiceID }},
	{"invoice_number", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.InvoiceNumber }},
	{"customer_id", uuidBinary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.CustomerID }},
	{"customer_name", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.CustomerName }},
	{"number", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.Number }},
	{"issue_date::text", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.IssueDate }},
	{"reason", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.Reason }},
	{"coalesce(external_reference, '')", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.ExternalReference }},
	{"currency", text, func(c *CreditNoteSummary, _ *rowKey) any { return &c.Currency }},
	{"subtotal_minor", int8Binary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.SubtotalMinor }},
	{"tax_minor", int8Binary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.TaxMinor }},
	{"total_minor", int8Binary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.TotalMinor }},
	{"issued_at", timestamptzBinary, func(c *CreditNoteSummary, _ *rowKey) any { return &c.IssuedAt }},
}

// creditNoteFields are the full form's columns: the summary's, then the
// rest.
var creditNoteFields = append(creditNoteFullForm(creditNoteSummaryFields),
	column[CreditNote]{"invoice_issue_date::text", text, func(c *CreditNote, _ *rowKey) any { return &c.InvoiceIssueDate }},
	column[CreditNote]{"language", text, func(c *CreditNote, _ *rowKey) any { return &c.Language }},
	column[CreditNote]{"sequence", int8Binary, func(c *CreditNote, _ *rowKey) any { return &c.Sequence }},
	column[CreditNote]{"customer", jsonText, func(c *CreditNote, _ *rowKey) any { return (*[]byte)(&c.Customer) }},
	column[CreditNote]{"issuer", jsonText, func(c *CreditNote, _ *rowKey) any { return (*[]byte)(&c.Issuer) }},
	column[CreditNote]{"lines", jsonText, func(c *CreditNote, _ *rowKey) any { return (*[]byte)(&c.Lines) }},
	column[CreditNote]{"document", jsonText, func(c *CreditNote, _ *rowKey) any { return (*[]byte)(&c.Document) }},
)

func creditNoteFullForm(cols []column[CreditNoteSummary]) []column[CreditNote] {
	out := make([]column[CreditNote], len(cols))
	for n, c := range cols {
		out[n] = column[CreditNote]{c.sql, c.wire, func(i *CreditNote, k *rowKey) any { return c.field(&i.CreditNoteSummary, k) }}
	}
	return out
}

// What a credit-note read needs, made from its columns.
var (
	creditNoteSummaryColumns, creditNoteColumns = selectList(creditNoteSummaryFields), selectList(creditNoteFields)
	creditNoteSummaryTargets, creditNoteTargets = scanTargets(creditNoteSummaryFields), scanTargets(creditNoteFields)
	creditNoteSummaryWire, creditNoteWire       = wireLayout(creditNoteSummaryFields), wireLayout(creditNoteFields)
	decodeCreditNoteSummary, decodeCreditNote   = wireDecoder(creditNoteSummaryFields), wireDecoder(creditNoteFields)
)

// CreditNote returns a credit note only when it belongs to both the
// account and the company; otherwise events.ErrNotFound.
func (s *Store) CreditNote(ctx context.Context, accountID, companyID, id string) (CreditNote, error) {
	if !validID(id) || !validID(companyID) {
		return CreditNote{}, events.ErrNotFound
	}
	return one(ctx, s.pool, scanCreditNotes, creditNoteByID(accountID, companyID, id))
}

var creditNoteLookup = newLookup(creditNoteColumns, "credit_notes", companyOwned)

func creditNoteByID(accountID, companyID, id string) statement {
	return creditNoteLookup.of(id, accountID, companyID)
}

// CreditNotes lists a company's credit notes in the order issued, summary
// form.
func (s *Store) CreditNotes(ctx context.Context, accountID, companyID string, f CreditNoteFilter, p PageRequest) (Page[CreditNoteSummary], error) {
	return page(ctx, s.pool, scanCreditNoteSummaries, creditNoteList(accountID, companyID, f), p)
}

// creditNoteList is served by credit_notes_by_reference, _by_invoice or
// _by_customer, by the first filter set in that order (a reference or an
// invoice names a credit note or a few, a customer more), else by
// credit_notes_by_company.
func creditNoteList(accountID, companyID string, f CreditNoteFilter) listing {
	return listing{
		table: "credit_notes",
		scope: scope("credit_notes", accountID, companyID, f.InvoiceID, f.CustomerID, f.ExternalReference),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.fix("company_id", companyID)
			q.filter("external_reference", f.ExternalReference)
			q.filter("invoice_id", f.InvoiceID)
			q.filter("customer_id", f.CustomerID)
			return q.statement(creditNoteSummaryColumns, "credit_notes", after, limit)
		},
	}
}

func scanCreditNoteSummaries(rows pgx.Rows, capacity int) ([]CreditNoteSummary, []rowKey, error) {
	return scanRows(rows, capacity, creditNoteSummaryWire, decodeCreditNoteSummary, creditNoteSummaryTargets)
}

func scanCreditNotes(rows pgx.Rows, capacity int) ([]CreditNote, []rowKey, error) {
	return scanRows(rows, capacity, creditNoteWire, decodeCreditNote, creditNoteTargets)
}
