package events

import "time"

// CreditNoteIssued records a credit note (EN 16931 type 381) against an
// issued invoice, appended to the invoice's stream: its number, reserved in
// the company's credit-note numbering stream (CreditNoteNumberAssigned),
// the invoice it corrects (BG-3: number and issue date), its own lines and
// amounts computed once on the write side, and frozen copies of the
// invoice's snapshots and document terms, so that the credit note renders
// from this event alone. Invoice is the invoice's settlement after it.
type CreditNoteIssued struct {
	CreditNoteID     string `json:"credit_note_id"`
	InvoiceID        string `json:"invoice_id"`
	CompanyID        string `json:"company_id"`
	AccountID        string `json:"account_id"`
	CustomerID       string `json:"customer_id"`
	InvoiceNumber    string `json:"invoice_number"`
	InvoiceIssueDate string `json:"invoice_issue_date"`
	// Number is the rendered number: the company's credit-note prefix and
	// Sequence zero-padded to six digits.
	Number   string `json:"number"`
	Sequence uint64 `json:"sequence"`
	// NumberingRevision is the revision of the CreditNoteNumberAssigned
	// event in the credit-note numbering stream that reserved Sequence.
	NumberingRevision uint64           `json:"numbering_revision"`
	IssueDate         string           `json:"issue_date"`
	Reason            string           `json:"reason"`
	ExternalReference string           `json:"external_reference,omitempty"`
	CustomerName      string           `json:"customer_name"`
	Customer          CustomerSnapshot `json:"customer"`
	Issuer            IssuerSnapshot   `json:"issuer"`
	Currency          string           `json:"currency"`
	Language          string           `json:"language"`
	Lines             []InvoiceLine    `json:"lines"`
	SubtotalMinor     int64            `json:"subtotal_minor"`
	TaxMinor          int64            `json:"tax_minor"`
	TotalMinor        int64            `json:"total_minor"`
	DocumentTerms
	TaxBreakdown []TaxBreakdown `json:"tax_breakdown"`
	IssuedAt     time.Time      `json:"issued_at"`
	Invoice      Settlement     `json:"invoice"`
}

// CreditNoteNumberAssigned reserves the next number of a company's
// credit-note sequence for one credit note, as InvoiceNumberAssigned does
// for invoices: it is completed by CreditNote, appended as revision
// InvoiceRevision+1 of the invoice's stream; if another event took that
// revision first, the reservation lapses and the next one reuses Sequence.
// The reservation holds the whole CreditNoteIssued so that whoever
// completes it appends the same event.
type CreditNoteNumberAssigned struct {
	CompanyID       string           `json:"company_id"`
	AccountID       string           `json:"account_id"`
	Sequence        uint64           `json:"sequence"`
	Number          string           `json:"number"`
	InvoiceID       string           `json:"invoice_id"`
	InvoiceStream   string           `json:"invoice_stream"`
	InvoiceRevision uint64           `json:"invoice_revision"`
	AssignedAt      time.Time        `json:"assigned_at"`
	CreditNote      CreditNoteIssued `json:"credit_note"`
}

// PaymentRecorded records a payment received for an issued invoice,
// appended to the invoice's stream. Invoice is the invoice's settlement
// after it.
type PaymentRecorded struct {
	PaymentID   string     `json:"payment_id"`
	InvoiceID   string     `json:"invoice_id"`
	CompanyID   string     `json:"company_id"`
	AccountID   string     `json:"account_id"`
	AmountMinor int64      `json:"amount_minor"`
	PaidOn      string     `json:"paid_on"`
	Method      string     `json:"method,omitempty"`
	Reference   string     `json:"reference,omitempty"`
	RecordedAt  time.Time  `json:"recorded_at"`
	Invoice     Settlement `json:"invoice"`
}

// PaymentReversed reverses a payment recorded by mistake: the payment
// stays in the invoice's history, marked reversed, and no longer counts.
type PaymentReversed struct {
	PaymentID  string     `json:"payment_id"`
	InvoiceID  string     `json:"invoice_id"`
	CompanyID  string     `json:"company_id"`
	AccountID  string     `json:"account_id"`
	Reason     string     `json:"reason"`
	ReversedAt time.Time  `json:"reversed_at"`
	Invoice    Settlement `json:"invoice"`
}

// Payment statuses of an invoice.
const (
	PaymentUnpaid        = "unpaid"
	PaymentPartiallyPaid = "partially_paid"
	PaymentPaid          = "paid"
)

// PaymentStatuses lists the payment statuses in the order the API
// documents them.
var PaymentStatuses = []string{PaymentUnpaid, PaymentPartiallyPaid, PaymentPaid}

// DefaultCreditNoteNumberPrefix is a company's credit-note number prefix
// when it names none, and in events from before the field existed.
const DefaultCreditNoteNumberPrefix = "CN-"

// Settlement is where an invoice stands with its customer: what credit
// notes took, what was paid, what is still due and what is owed back, and
// the payment status these make (Settle). The events that change it carry
// the result, computed once on the write side; projections copy it.
type Settlement struct {
	AmountCreditedMinor   int64  `json:"amount_credited_minor"`
	AmountPaidMinor       int64  `json:"amount_paid_minor"`
	AmountDueMinor        int64  `json:"amount_due_minor"`
	AmountRefundableMinor int64  `json:"amount_refundable_minor"`
	PaymentStatus         string `json:"payment_status"`
}

// Settle is the one rule of an invoice's settlement (docs/decisions.md):
//
//	due        = total − credited − paid, never below 0; 0 for a void invoice
//	refundable = credited + paid − total, never below 0
//	status     = paid when nothing is due and something was credited or paid,
//	             partially_paid when something was paid and something is due,
//	             unpaid otherwise (drafts and void invoices included)
//
// It depends on the status only through void, so that issuing an invoice
// leaves its settlement as its draft had it. A payment never exceeds what
// is due, so only a credit note after a payment makes an invoice
// refundable. The amounts are within 0..MaxAmountMinor, so the sums cannot
// overflow.
func Settle(status string, total, credited, paid int64) Settlement {
	s := Settlement{AmountCreditedMinor: credited, AmountPaidMinor: paid, PaymentStatus: PaymentUnpaid}
	if status != StatusVoid {
		s.AmountDueMinor = max(0, total-credited-paid)
	}
	s.AmountRefundableMinor = max(0, credited+paid-total)
	switch {
	case s.AmountDueMinor == 0 && credited+paid > 0:
		s.PaymentStatus = PaymentPaid
	case paid > 0 && s.AmountDueMinor > 0:
		s.PaymentStatus = PaymentPartiallyPaid
	}
	return s
}

// CreditNoteNumberingStreamName names the stream that holds a company's
// credit-note number sequence, apart from its invoices'.
func CreditNoteNumberingStreamName(accountID, companyID string) string {
	return KindNumbering + "-" + hashParts(accountID, "credit_notes.number", companyID)
}
