package command

import "github.com/invoicing/invoicing/events"

// DraftInvoice is the InvoiceDrafted that CreateInvoice records for the
// validated request in, to customer of company: the company's defaults
// applied, both snapshots taken, every amount computed. InvoiceID,
// AccountID and CreatedAt are left to the caller, as CreateInvoice sets
// them only when it appends.
//
// It is exported for the scale benchmark's event generator
// (internal/bench), which writes a million invoices straight into the
// store: through this function they are priced and snapshotted by the
// write side's code, not by a copy of it.
func DraftInvoice(in CreateInvoice, company CompanyRecord, customer CustomerRecord) (events.InvoiceDrafted, error) {
	return in.draft(company, customer)
}
