package events

import (
	"fmt"
	"time"
)

// InvoiceIssued turns a draft into an issued invoice with the next number of
// its company's sequence. It is appended to the invoice's stream, after the
// number was assigned in the company's numbering stream.
//
// IssueDate and DueDate are present only when the issue changed them (the
// request named another issue_date; a due date from payment terms moved
// with it), copied from the reservation (InvoiceNumberAssigned) so that
// whoever completes it appends the same event. Absent: the draft's dates
// stand, as in events from before the fields existed.
type InvoiceIssued struct {
	InvoiceID string `json:"invoice_id"`
	CompanyID string `json:"company_id"`
	AccountID string `json:"account_id"`
	// Number is the rendered number: the company's prefix and Sequence
	// zero-padded to six digits.
	Number   string `json:"number"`
	Sequence uint64 `json:"sequence"`
	// NumberingRevision is the revision of the InvoiceNumberAssigned event
	// in the numbering stream that reserved Sequence for this invoice.
	NumberingRevision uint64    `json:"numbering_revision"`
	IssuedAt          time.Time `json:"issued_at"`
	IssueDate         string    `json:"issue_date,omitempty"`
	DueDate           string    `json:"due_date,omitempty"`
}

// InvoiceVoided cancels a draft or an issued invoice. An issued invoice keeps
// its number: the sequence stays unbroken.
type InvoiceVoided struct {
	InvoiceID string    `json:"invoice_id"`
	CompanyID string    `json:"company_id"`
	AccountID string    `json:"account_id"`
	Reason    string    `json:"reason"`
	VoidedAt  time.Time `json:"voided_at"`
}

// InvoiceNumberAssigned reserves the next number of a company's sequence for
// one invoice. The numbering stream holds one per issue attempt, appended at
// the stream's expected revision, so two writers can never take the same
// place. The reservation is completed by an InvoiceIssued at revision
// InvoiceRevision+1 of the invoice's stream; if that revision was taken by
// another event first (the draft was voided), the reservation lapses and the
// next assignment reuses Sequence: every issued number is used exactly once
// and the sequence has no gap. IssueDate and DueDate, when present, are the
// dates the completing InvoiceIssued sets (see there).
type InvoiceNumberAssigned struct {
	CompanyID       string    `json:"company_id"`
	AccountID       string    `json:"account_id"`
	Sequence        uint64    `json:"sequence"`
	Number          string    `json:"number"`
	InvoiceID       string    `json:"invoice_id"`
	InvoiceStream   string    `json:"invoice_stream"`
	InvoiceRevision uint64    `json:"invoice_revision"`
	AssignedAt      time.Time `json:"assigned_at"`
	IssueDate       string    `json:"issue_date,omitempty"`
	DueDate         string    `json:"due_date,omitempty"`
}

// Invoice statuses.
const (
	StatusDraft  = "draft"
	StatusIssued = "issued"
	StatusVoid   = "void"
)

// NumberingStreamName names the stream that holds a company's invoice
// number sequence.
func NumberingStreamName(accountID, companyID string) string {
	return KindNumbering + "-" + hashParts(accountID, "invoices.number", companyID)
}

// InvoiceNumber renders a sequence number with the company's prefix.
func InvoiceNumber(prefix string, sequence uint64) string {
	return fmt.Sprintf("%s%06d", prefix, sequence)
}
