package events

import (
	"testing"
	"time"
)

// sampleCreditNote credits part of sampleRevision's issued invoice (its E
// line at 0%): its number, the invoice it corrects, frozen snapshots and
// terms, and the invoice's settlement after it.
func sampleCreditNote() CreditNoteIssued {
	r := sampleRevision()
	d := sampleDraft()
	return CreditNoteIssued{CreditNoteID: "0190a0c0-0000-7000-8000-000000000005", InvoiceID: r.InvoiceID, CompanyID: r.CompanyID,
		AccountID: r.AccountID, CustomerID: r.CustomerID, InvoiceNumber: "INV-000001", InvoiceIssueDate: "2026-03-20",
		Number: "CN-000001", Sequence: 1, NumberingRevision: 0, IssueDate: "2026-03-25", Reason: "Returned\nin part",
		ExternalReference: "rma-1", CustomerName: r.CustomerName, Customer: r.Customer, Issuer: d.Issuer,
		Currency: r.Currency, Language: r.Language,
		Lines: []InvoiceLine{{Position: 1, Description: "Audit", Quantity: "0.5", Unit: "day", UnitCode: "DAY", UnitAmountMinor: 80000,
			TaxRateBps: 0, TaxCategory: "E", NetAmountMinor: 40000, TaxAmountMinor: 0, TotalAmountMinor: 40000}},
		SubtotalMinor: 40000, TaxMinor: 0, TotalMinor: 40000, DocumentTerms: r.DocumentTerms,
		TaxBreakdown: []TaxBreakdown{{TaxCategory: "E", TaxRateBps: 0, TaxableAmountMinor: 40000, TaxAmountMinor: 0}},
		IssuedAt:     issued.Add(time.Hour),
		Invoice:      Settle(StatusIssued, r.TotalMinor, 40000, 0)}
}

// TestSettlementPayloadsMatchTheirGoldenFiles pins the JSON of issue 23's
// events (credit notes, their numbering, payments, reversals with and
// without a reason): a stored event is never rewritten, so a change here
// is a change of the log's format, seen in review.
func TestSettlementPayloadsMatchTheirGoldenFiles(t *testing.T) {
	cn := sampleCreditNote()
	paid := PaymentRecorded{PaymentID: "0190a0c0-0000-7000-8000-000000000006", InvoiceID: cn.InvoiceID, CompanyID: cn.CompanyID,
		AccountID: cn.AccountID, AmountMinor: 100000, PaidOn: "2026-03-28", Method: "bank_transfer", Reference: "SEPA-4711",
		RecordedAt: issued.Add(2 * time.Hour), Invoice: Settle(StatusIssued, 160000, 40000, 100000)}
	bare := paid
	bare.PaymentID, bare.Method, bare.Reference, bare.AmountMinor = "0190a0c0-0000-7000-8000-000000000007", "", "", 20000
	bare.Invoice = Settle(StatusIssued, 160000, 40000, 120000)
	reversed := PaymentReversed{PaymentID: paid.PaymentID, InvoiceID: cn.InvoiceID, CompanyID: cn.CompanyID, AccountID: cn.AccountID,
		Reason: "Bounced", ReversedAt: issued.Add(3 * time.Hour), Invoice: Settle(StatusIssued, 160000, 40000, 20000)}
	reasonless := reversed
	reasonless.PaymentID, reasonless.Reason = bare.PaymentID, ""
	reasonless.Invoice = Settle(StatusIssued, 160000, 40000, 0)
	matchGoldens(t, map[string]any{
		"credit_note_issued": cn,
		"credit_note_number_assigned": CreditNoteNumberAssigned{CompanyID: cn.CompanyID, AccountID: cn.AccountID, Sequence: 1,
			Number: cn.Number, InvoiceID: cn.InvoiceID, InvoiceStream: "invoice-x", InvoiceRevision: 2, AssignedAt: cn.IssuedAt, CreditNote: cn},
		"payment_recorded":                  paid,
		"payment_recorded_without_details":  bare,
		"payment_reversed":                  reversed,
		"payment_reversed_without_a_reason": reasonless,
	})
}
