package command

import (
	"context"
	"encoding/json"
	"errors"
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

// maxNumberingAttempts bounds the races one issue may lose for its
// company's next number; every lost race is another issue's win.
const maxNumberingAttempts = 1000

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

// assignNumber reserves the company's next number for inv, retrying when
// another issue reserved first. The reservation records the dates the
// issue moves, so that whoever completes it (settle) issues the same
// invoice.
func (h *Handler) assignNumber(ctx context.Context, lc lifecycle[events.Invoice], company CompanyRecord, inv events.Invoice, dates movedDates) (events.InvoiceNumberAssigned, uint64, error) {
	stream := events.NumberingStreamName(lc.req.Actor.AccountID, inv.CompanyID)
	for attempt := 0; attempt < maxNumberingAttempts; attempt++ {
		seq, expected, err := h.nextNumber(ctx, stream, inv.InvoiceID)
		if err != nil {
			return events.InvoiceNumberAssigned{}, 0, err
		}
		rev := uint64(0)
		if !expected.IsNoStream() {
			rev = expected.Revision() + 1
		}
		asg := events.InvoiceNumberAssigned{CompanyID: inv.CompanyID, AccountID: lc.req.Actor.AccountID,
			Sequence: seq, Number: events.InvoiceNumber(company.InvoiceNumberPrefix, seq),
			InvoiceID: inv.InvoiceID, InvoiceStream: lc.stream, InvoiceRevision: uint64(inv.Version - 1), AssignedAt: h.now(),
			IssueDate: dates.issue, DueDate: dates.due}
		ev, err := newEvent(stream, rev, events.TypeInvoiceNumberAssigned, asg, lc.metadata)
		if err != nil {
			return events.InvoiceNumberAssigned{}, 0, err
		}
		_, err = h.cfg.Store.Append(ctx, stream, expected, ev)
		if errors.Is(err, events.ErrWrongExpectedRevision) {
			continue
		}
		if err != nil {
			return events.InvoiceNumberAssigned{}, 0, fmt.Errorf("reserve number %d: %w", seq, err)
		}
		return asg, rev, nil
	}
	return events.InvoiceNumberAssigned{}, 0, fmt.Errorf("numbering stream %s: no number reserved in %d attempts", stream, maxNumberingAttempts)
}

// nextNumber reads the numbering stream's last reservation, settles it, and
// returns the sequence number to reserve next with the revision to expect:
// one past a reservation that holds, the same number again after one that
// lapsed. errStale means the last reservation was for invoiceID itself and
// has just been completed: the caller must look at the invoice again.
func (h *Handler) nextNumber(ctx context.Context, stream, invoiceID string) (uint64, events.ExpectedRevision, error) {
	last, err := h.cfg.Store.ReadLast(ctx, stream)
	if errors.Is(err, events.ErrStreamNotFound) {
		return 1, events.NoStream(), nil
	}
	if err != nil {
		return 0, events.ExpectedRevision{}, fmt.Errorf("read numbering: %w", err)
	}
	var asg events.InvoiceNumberAssigned
	if err := json.Unmarshal(last.Data, &asg); err != nil {
		return 0, events.ExpectedRevision{}, fmt.Errorf("decode %s@%d: %w", stream, last.Revision, err)
	}
	holds, err := h.settle(ctx, last, asg)
	switch {
	case err != nil:
		return 0, events.ExpectedRevision{}, err
	case holds && asg.InvoiceID == invoiceID:
		return 0, events.ExpectedRevision{}, errStale
	case holds:
		return asg.Sequence + 1, events.AtRevision(last.Revision), nil
	}
	return asg.Sequence, events.AtRevision(last.Revision), nil
}

// settle reports whether a reservation holds: its invoice was issued with
// it. A reservation whose invoice has not moved since is pending (its
// request crashed, or is between its two appends): settle completes it with
// the very event that request would have appended, so both may race and
// one wins. One whose invoice moved on otherwise has lapsed.
func (h *Handler) settle(ctx context.Context, last events.RecordedEvent, asg events.InvoiceNumberAssigned) (bool, error) {
	for attempt := 0; attempt < 2; attempt++ {
		evs, err := h.cfg.Store.ReadStream(ctx, asg.InvoiceStream)
		if err != nil {
			return false, fmt.Errorf("read reserved invoice %s: %w", asg.InvoiceID, err)
		}
		next := asg.InvoiceRevision + 1
		if uint64(len(evs)) > next {
			return issuedWith(evs[next], asg.Sequence, last.Revision)
		}
		if uint64(len(evs)) < next {
			return false, fmt.Errorf("reservation %d names revision %d of %s, which has %d events", asg.Sequence, asg.InvoiceRevision, asg.InvoiceStream, len(evs))
		}
		ev, err := issuedEvent(asg, last.Revision, last.Metadata)
		if err != nil {
			return false, err
		}
		_, err = h.cfg.Store.Append(ctx, asg.InvoiceStream, events.AtRevision(asg.InvoiceRevision), ev)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, events.ErrWrongExpectedRevision) {
			return false, fmt.Errorf("complete reservation %d: %w", asg.Sequence, err)
		}
	}
	return false, fmt.Errorf("reservation %d of %s: the invoice kept changing", asg.Sequence, asg.InvoiceStream)
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

// issuedWith reports whether ev issued its invoice with the reservation of
// sequence made at numberingRevision.
func issuedWith(ev events.RecordedEvent, sequence, numberingRevision uint64) (bool, error) {
	if ev.Type != events.TypeInvoiceIssued {
		return false, nil
	}
	var issued events.InvoiceIssued
	if err := json.Unmarshal(ev.Data, &issued); err != nil {
		return false, fmt.Errorf("decode %s@%d: %w", ev.Stream, ev.Revision, err)
	}
	return issued.Sequence == sequence && issued.NumberingRevision == numberingRevision, nil
}
