package command

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/invoicing/invoicing/events"
)

var opIssueCreditNote = operation{name: "credit_notes.issue", kind: events.KindInvoice}

// IssueCreditNote is a validated credit-note request. Lines nil credits
// whatever is left of the invoice; IssueDate "" is today (UTC). Its JSON
// form is the request's fingerprint.
type IssueCreditNote struct {
	Reason            string      `json:"reason"`
	Lines             []LineInput `json:"lines,omitempty"`
	ExternalReference string      `json:"external_reference,omitempty"`
	IssueDate         string      `json:"issue_date,omitempty"`
}

// ParseIssueCreditNote decodes and checks a credit-note body (Parsed): its
// lines by the rules of an invoice's lines.
func ParseIssueCreditNote(raw []byte) (Parsed[IssueCreditNote], error) {
	return parseBody(raw, func(r *reader, body map[string]any) IssueCreditNote {
		o, ok := r.openObject("", body, "reason", lineFields, "external_reference", "issue_date")
		if !ok {
			return IssueCreditNote{}
		}
		in := IssueCreditNote{
			Reason:            o.reqStr("reason", text{min: 1, max: maxReason, multiline: true}),
			ExternalReference: o.str("external_reference", reference),
			IssueDate:         o.str("issue_date", text{min: 1, max: 10}),
		}
		parseDate(r, "issue_date", in.IssueDate)
		if items, ok := o.array(lineFields, 1, maxLines, false); ok {
			for i, item := range items {
				in.Lines = append(in.Lines, r.line(index(lineFields, i), item))
			}
			notSubjectAlone(r, in.Lines)
		}
		return in
	})
}

// IssueCreditNote credits an issued invoice of the caller's company: the
// credit note takes the next number of the company's credit-note sequence
// (reserved in its numbering stream, then completed in the invoice's
// stream, as an issue is) and may never take more than is left of the
// invoice, per VAT category and rate. Because every credit note is appended
// to the invoice's stream at its expected revision, two credit notes of one
// invoice are decided one after the other, whatever the concurrency.
func (h *Handler) IssueCreditNote(ctx context.Context, req Request, companyID, invoiceID string, body Parsed[IssueCreditNote]) (Result[events.CreditNoteIssued], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return Result[events.CreditNoteIssued]{}, err
	}
	company, err := h.cfg.Directory.Company(ctx, req.Actor.AccountID, companyID)
	if err != nil {
		return Result[events.CreditNoteIssued]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return Result[events.CreditNoteIssued]{}, err
	}
	if company.CreditNoteNumberPrefix == company.InvoiceNumberPrefix {
		// Only a company created before the prefix existed, with the
		// invoice prefix CN-, can be here: its credit notes would bear its
		// invoices' numbers.
		return Result[events.CreditNoteIssued]{}, stateOf("company_id",
			"the company's credit_note_number_prefix equals its invoice_number_prefix (%q); update the company with another credit_note_number_prefix first", company.InvoiceNumberPrefix)
	}
	lc, err := h.newInvoiceLifecycle(ctx, req, opIssueCreditNote, companyID, invoiceID, in)
	if err != nil {
		return Result[events.CreditNoteIssued]{}, err
	}
	lc.serial = events.CreditNoteNumberingStreamName(req.Actor.AccountID, company.ID)
	res, err := change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		cn, err := h.creditNote(inv, in)
		if err != nil {
			return events.EventData{}, err
		}
		return h.numberCreditNote(ctx, lc, company, inv, cn)
	})
	if err != nil {
		return Result[events.CreditNoteIssued]{}, err
	}
	// The fold ends at this request's event: its credit note is the last.
	notes := res.Value.CreditNotes
	return Result[events.CreditNoteIssued]{Value: notes[len(notes)-1], Replayed: res.Replayed}, nil
}

// creditNote is the credit note in crediting inv (its number still
// unassigned), or why inv cannot be credited so.
func (h *Handler) creditNote(inv events.Invoice, in IssueCreditNote) (events.CreditNoteIssued, error) {
	if inv.Status != events.StatusIssued {
		return events.CreditNoteIssued{}, stateOf("invoice_id", "the invoice is %s; only an issued invoice can be credited", inv.Status)
	}
	issueDate, err := creditNoteDate(inv, in.IssueDate, h.now().UTC().Format(events.DateLayout))
	if err != nil {
		return events.CreditNoteIssued{}, err
	}
	amounts, err := creditedAmounts(inv, in.Lines)
	if err != nil {
		return events.CreditNoteIssued{}, err
	}
	id, err := h.newID()
	if err != nil {
		return events.CreditNoteIssued{}, err
	}
	cn := events.CreditNoteIssued{CreditNoteID: id, InvoiceID: inv.InvoiceID, CompanyID: inv.CompanyID,
		AccountID: inv.AccountID, CustomerID: inv.CustomerID, InvoiceNumber: inv.Number, InvoiceIssueDate: inv.IssueDate,
		IssueDate: issueDate, Reason: in.Reason, ExternalReference: in.ExternalReference,
		CustomerName: inv.CustomerName, Customer: inv.Customer, Issuer: inv.Issuer, Currency: inv.Currency,
		Language: inv.Language, Lines: amounts.lines, SubtotalMinor: amounts.totals.Subtotal, TaxMinor: amounts.totals.Tax,
		TotalMinor: amounts.totals.Total, DocumentTerms: inv.DocumentTerms, TaxBreakdown: amounts.breakdown,
		IssuedAt: h.now()}
	cn.Invoice = settlementAfter(inv, func(next *events.Invoice) { next.CreditNotes = append(next.CreditNotes, cn) })
	return cn, nil
}

// creditNoteDate is the credit note's issue date: the requested one, or
// today; never before the invoice's.
func creditNoteDate(inv events.Invoice, requested, today string) (string, error) {
	date, msg := requested, "must not be before the invoice's issue_date (%s)"
	if date == "" {
		date, msg = today, "is required while today is before the invoice's issue_date (%s)"
	}
	if date < inv.IssueDate { // full-dates with 4-digit years sort as strings
		return "", &ValidationError{Violations: []Violation{{Path: "issue_date", Message: fmt.Sprintf(msg, inv.IssueDate)}}}
	}
	return date, nil
}

// settlementAfter is inv's settlement once change is applied to a copy.
func settlementAfter(inv events.Invoice, change func(*events.Invoice)) events.Settlement {
	next := inv
	next.CreditNotes, next.Payments = slices.Clone(inv.CreditNotes), slices.Clone(inv.Payments)
	change(&next)
	return next.Settlement()
}

// numberCreditNote reserves the company's next credit-note number for cn
// and returns the event that completes the reservation in inv's stream.
func (h *Handler) numberCreditNote(ctx context.Context, lc lifecycle[events.Invoice], company CompanyRecord, inv events.Invoice, cn events.CreditNoteIssued) (events.EventData, error) {
	n := numbering[creditNoteReservation]{stream: events.CreditNoteNumberingStreamName(lc.req.Actor.AccountID, inv.CompanyID),
		eventType: events.TypeCreditNoteNumberAssigned, decode: decodeAs[creditNoteReservation]}
	res, rev, err := n.reserve(ctx, h, inv, lc.metadata, func(seq, rev uint64) (creditNoteReservation, error) {
		cn.Sequence, cn.NumberingRevision = seq, rev
		cn.Number = events.InvoiceNumber(company.CreditNoteNumberPrefix, seq)
		return creditNoteReservation{CompanyID: inv.CompanyID, AccountID: inv.AccountID, Sequence: seq, Number: cn.Number,
			InvoiceID: inv.InvoiceID, InvoiceStream: lc.stream, InvoiceRevision: uint64(inv.Version - 1),
			AssignedAt: cn.IssuedAt, CreditNote: cn}, nil
	})
	if err != nil {
		return events.EventData{}, err
	}
	return res.completion(rev, lc.metadata)
}

// creditNoteReservation is a CreditNoteNumberAssigned as a reservation of
// the credit-note numbering, completed by the CreditNoteIssued it holds.
type creditNoteReservation events.CreditNoteNumberAssigned

func (r creditNoteReservation) slot() reservedSlot {
	return reservedSlot{sequence: r.Sequence, invoiceID: r.InvoiceID, invoiceStream: r.InvoiceStream, invoiceRevision: r.InvoiceRevision}
}

func (r creditNoteReservation) completion(_ uint64, md json.RawMessage) (events.EventData, error) {
	return newEvent(r.InvoiceStream, r.InvoiceRevision+1, events.TypeCreditNoteIssued, r.CreditNote, md)
}

func (r creditNoteReservation) completedBy(ev events.RecordedEvent, numberingRevision uint64) (bool, error) {
	return completes(ev, events.TypeCreditNoteIssued, func(e events.CreditNoteIssued) (uint64, uint64) {
		return e.Sequence, e.NumberingRevision
	}, r.Sequence, numberingRevision)
}
