package command

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

var opIssueInvoice = operation{name: "invoices.issue", kind: events.KindInvoice}

// IssueInvoice is an issue request: its body is empty, {}, or names the
// date the invoice is issued on ({"issue_date":"2026-11-26"}); without it
// the drafted issue date stands. Its JSON form is the request's
// fingerprint, {} without a date as before the field existed.
type IssueInvoice struct {
	IssueDate string `json:"issue_date,omitempty"`
}

// ParseIssueInvoice decodes and checks an issue body (Parsed).
func ParseIssueInvoice(raw []byte) (Parsed[IssueInvoice], error) {
	return parseBody(raw, func(r *reader, body map[string]any) IssueInvoice {
		o, ok := r.openObject("", body, "issue_date")
		if !ok {
			return IssueInvoice{}
		}
		in := IssueInvoice{IssueDate: o.str("issue_date", text{min: 1, max: 10})}
		parseDate(r, "issue_date", in.IssueDate)
		return in
	})
}

// IssueInvoice turns a draft into an issued invoice with the next number of
// its company's sequence: first the number is reserved in the company's
// numbering stream (InvoiceNumberAssigned, at the stream's expected
// revision), then InvoiceIssued is appended to the invoice's stream at its
// expected revision. A crash between the two leaves a reservation that the
// next issue of the company completes (or, if the draft changed meanwhile,
// reuses), so the sequence never has a gap nor a number without its invoice.
func (h *Handler) IssueInvoice(ctx context.Context, req Request, companyID, invoiceID string, body Parsed[IssueInvoice]) (Result[events.Invoice], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return Result[events.Invoice]{}, err
	}
	company, err := h.cfg.Directory.Company(ctx, req.Actor.AccountID, companyID)
	if err != nil {
		return Result[events.Invoice]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	lc, err := h.newInvoiceLifecycle(ctx, req, opIssueInvoice, companyID, invoiceID, in)
	if err != nil {
		return Result[events.Invoice]{}, err
	}
	lc.serial = events.NumberingStreamName(req.Actor.AccountID, company.ID)
	return change(ctx, h, lc, func(inv events.Invoice) (events.EventData, error) {
		if inv.Status != events.StatusDraft {
			return events.EventData{}, fmt.Errorf("%w: the invoice is %s; only a draft can be issued", ErrInvalidState, inv.Status)
		}
		dates, err := issueDates(inv, in.IssueDate)
		if err != nil {
			return events.EventData{}, err
		}
		asg, rev, err := h.assignNumber(ctx, lc, company, inv, dates)
		if err != nil {
			return events.EventData{}, err
		}
		return issuedEvent(asg, rev, lc.metadata)
	})
}

// movedDates are the dates an issue changes: "" for one that stays.
type movedDates struct {
	issue, due string
}

// issueDates is what issuing inv on issueDate ("": the drafted date)
// changes. A due date from payment terms moves with the issue date (the
// terms recorded at drafting or revision); one the client sent stays, and
// must not fall before the new issue date.
func issueDates(inv events.Invoice, issueDate string) (movedDates, error) {
	if issueDate == "" || issueDate == inv.IssueDate {
		return movedDates{}, nil
	}
	moved := movedDates{issue: issueDate}
	switch {
	case inv.PaymentTermsDays != nil:
		due, err := dueDate(issueDate, *inv.PaymentTermsDays)
		if err != nil {
			return movedDates{}, &ValidationError{Violations: []Violation{{Path: "issue_date", Message: fmt.Sprintf(
				"puts the due date (issue_date plus the invoice's %d payment days) after %s", *inv.PaymentTermsDays, events.MaxDate.Format(events.DateLayout))}}}
		}
		if due != inv.DueDate {
			moved.due = due
		}
	case inv.DueDate != "" && inv.DueDate < issueDate: // full-dates with 4-digit years sort as strings
		return movedDates{}, &ValidationError{Violations: []Violation{{Path: "issue_date",
			Message: fmt.Sprintf("must not be after the invoice's due_date (%s)", inv.DueDate)}}}
	}
	return moved, nil
}

// assignNumber reserves the company's next invoice number for inv. The
// reservation records the dates the issue moves, so that whoever completes
// it issues the same invoice.
func (h *Handler) assignNumber(ctx context.Context, lc lifecycle[events.Invoice], company CompanyRecord, inv events.Invoice, dates movedDates) (events.InvoiceNumberAssigned, uint64, error) {
	n := numbering[invoiceReservation]{stream: events.NumberingStreamName(lc.req.Actor.AccountID, inv.CompanyID),
		eventType: events.TypeInvoiceNumberAssigned, decode: decodeAs[invoiceReservation]}
	res, rev, err := n.reserve(ctx, h, inv, lc.metadata, func(seq, _ uint64) (invoiceReservation, error) {
		return invoiceReservation{CompanyID: inv.CompanyID, AccountID: lc.req.Actor.AccountID,
			Sequence: seq, Number: events.InvoiceNumber(company.InvoiceNumberPrefix, seq),
			InvoiceID: inv.InvoiceID, InvoiceStream: lc.stream, InvoiceRevision: uint64(inv.Version - 1), AssignedAt: h.now(),
			IssueDate: dates.issue, DueDate: dates.due}, nil
	})
	return events.InvoiceNumberAssigned(res), rev, err
}

// invoiceReservation is an InvoiceNumberAssigned as a reservation of the
// invoice numbering, completed by InvoiceIssued.
type invoiceReservation events.InvoiceNumberAssigned

func (r invoiceReservation) slot() reservedSlot {
	return reservedSlot{sequence: r.Sequence, invoiceID: r.InvoiceID, invoiceStream: r.InvoiceStream, invoiceRevision: r.InvoiceRevision}
}

func (r invoiceReservation) completion(numberingRevision uint64, md json.RawMessage) (events.EventData, error) {
	return issuedEvent(events.InvoiceNumberAssigned(r), numberingRevision, md)
}

func (r invoiceReservation) completedBy(ev events.RecordedEvent, numberingRevision uint64) (bool, error) {
	return completes(ev, events.TypeInvoiceIssued, func(e events.InvoiceIssued) (uint64, uint64) {
		return e.Sequence, e.NumberingRevision
	}, r.Sequence, numberingRevision)
}

// issuedEvent is the InvoiceIssued that completes a reservation made at
// numberingRevision; it depends on nothing else (the dates the issue moves
// are in the reservation too), so whoever completes the reservation
// appends the same event.
func issuedEvent(asg events.InvoiceNumberAssigned, numberingRevision uint64, md json.RawMessage) (events.EventData, error) {
	issued := events.InvoiceIssued{InvoiceID: asg.InvoiceID, CompanyID: asg.CompanyID, AccountID: asg.AccountID,
		Number: asg.Number, Sequence: asg.Sequence, NumberingRevision: numberingRevision, IssuedAt: asg.AssignedAt,
		IssueDate: asg.IssueDate, DueDate: asg.DueDate}
	return newEvent(asg.InvoiceStream, asg.InvoiceRevision+1, events.TypeInvoiceIssued, issued, md)
}
