package events

import "time"

// InvoiceRevised records a revision of a draft: the whole draft content as
// the revision left it, so that a projection overwrites its row and a
// replay renders the invoice from the events alone. The amounts are
// computed once, on the write side, as for InvoiceDrafted. The issuer
// snapshot is not here: it stays as InvoiceDrafted froze it. The customer
// snapshot is the one taken when the draft got its customer (at drafting,
// or by the revision that changed customer_id).
type InvoiceRevised struct {
	InvoiceID              string           `json:"invoice_id"`
	CompanyID              string           `json:"company_id"`
	AccountID              string           `json:"account_id"`
	CustomerID             string           `json:"customer_id"`
	CustomerName           string           `json:"customer_name"`
	Customer               CustomerSnapshot `json:"customer"`
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
	TaxBreakdown []TaxBreakdown `json:"tax_breakdown"`
	RevisedAt    time.Time      `json:"revised_at"`
	// Changed lists, sorted, the create-request fields whose value the
	// revision changed (customer_id, issue_date, lines, ...; due_date also
	// when it followed a changed issue_date). It is for readers of the log;
	// the fold does not need it.
	Changed []string `json:"changed"`
}

// Revise returns the draft d with the content of r: what a revision
// replaces. Identities, the issuer snapshot and created_at stay.
func (d InvoiceDrafted) Revise(r InvoiceRevised) InvoiceDrafted {
	d.CustomerID, d.CustomerName, d.Customer = r.CustomerID, r.CustomerName, r.Customer
	d.Currency, d.Language = r.Currency, r.Language
	d.IssueDate, d.DueDate, d.PaymentTermsDays = r.IssueDate, r.DueDate, r.PaymentTermsDays
	d.Lines, d.SubtotalMinor, d.TaxMinor, d.TotalMinor = r.Lines, r.SubtotalMinor, r.TaxMinor, r.TotalMinor
	d.ExternalReference, d.PurchaseOrderReference = r.ExternalReference, r.PurchaseOrderReference
	d.Notes, d.Terms = r.Notes, r.Terms
	d.DocumentTerms, d.TaxBreakdown = r.DocumentTerms, r.TaxBreakdown
	return d
}
