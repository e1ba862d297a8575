package events

import "time"

// InvoiceDrafted records a new draft invoice with its frozen issuer and
// customer snapshots and its amounts, computed once on the write side.
// Projections copy these amounts; they never recompute them.
//
// PaymentTermsDays is the company's payment terms the due date was computed
// with (issue_date plus that many days), present only when the due date
// came from them; absent means the client sent the due date (in events
// from before the field existed too: docs/decisions.md). A due date from
// terms moves with the issue date (InvoiceRevised, InvoiceIssued).
type InvoiceDrafted struct {
	InvoiceID              string           `json:"invoice_id"`
	CompanyID              string           `json:"company_id"`
	AccountID              string           `json:"account_id"`
	CustomerID             string           `json:"customer_id"`
	CustomerName           string           `json:"customer_name"`
	Customer               CustomerSnapshot `json:"customer"`
	Issuer                 IssuerSnapshot   `json:"issuer"`
	Currency               string           `json:"currency"`
	Language               string           `json:"language"`
	IssueDate              string           `json:"issue_date"`
	DueDate                string           `json:"due_date"`
	PaymentTermsDays       *int             `json:"payment_terms_days,omitempty"`
	Lines                  []InvoiceLine    `json:"lines"`
	SubtotalMinor          int64            `json:"subtotal_minor"`
	TaxMinor               int64            `json:"tax_minor"`
	TotalMinor             int64            `json:"total_minor"`
	ExternalReference      string           `json:"external_reference,omitempty"`
	PurchaseOrderReference string           `json:"purchase_order_reference,omitempty"`
	Notes                  string           `json:"notes,omitempty"`
	Terms                  string           `json:"terms,omitempty"`
	DocumentTerms
	// TaxBreakdown is computed with the amounts (SumInvoice); events from
	// before it read as LineTaxBreakdown of their lines.
	TaxBreakdown []TaxBreakdown `json:"tax_breakdown"`
	CreatedAt    time.Time      `json:"created_at"`
}

// SnapshotSchemaVersion is the shape version of today's snapshots.
const SnapshotSchemaVersion = 1

// CustomerSnapshot is the customer as it was when the invoice was drafted.
type CustomerSnapshot struct {
	ID          string       `json:"id"`
	Name        string       `json:"name"`
	Address     Address      `json:"address"`
	Email       string       `json:"email,omitempty"`
	Identifiers []Identifier `json:"identifiers"`
	// ElectronicAddress is absent in snapshots from before it.
	ElectronicAddress *ElectronicAddress `json:"electronic_address,omitempty"`
	SchemaVersion     int                `json:"schema_version"`
}

// IssuerSnapshot is the issuing company as it was when the invoice was
// drafted.
type IssuerSnapshot struct {
	ID          string       `json:"id"`
	LegalName   string       `json:"legal_name"`
	TradingName string       `json:"trading_name,omitempty"`
	Address     Address      `json:"address"`
	Email       string       `json:"email,omitempty"`
	Identifiers []Identifier `json:"identifiers"`
	// BankAccount and ElectronicAddress are absent in snapshots from
	// before them.
	BankAccount       *BankAccount       `json:"bank_account,omitempty"`
	ElectronicAddress *ElectronicAddress `json:"electronic_address,omitempty"`
	SchemaVersion     int                `json:"schema_version"`
}

// InvoiceLine is one computed line of an invoice.
type InvoiceLine struct {
	Position         int    `json:"position"`
	Description      string `json:"description"`
	Quantity         string `json:"quantity"`
	Unit             string `json:"unit,omitempty"`
	UnitCode         string `json:"unit_code"`
	UnitAmountMinor  int64  `json:"unit_amount_minor"`
	TaxRateBps       int64  `json:"tax_rate_bps"`
	TaxCategory      string `json:"tax_category"`
	NetAmountMinor   int64  `json:"net_amount_minor"`
	TaxAmountMinor   int64  `json:"tax_amount_minor"`
	TotalAmountMinor int64  `json:"total_amount_minor"`
}
