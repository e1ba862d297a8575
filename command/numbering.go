package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

// maxNumberingAttempts bounds the races one request may lose for its
// company's next number; every lost race is another request's win.
const maxNumberingAttempts = 1000

// reservation is an event of a numbering stream: it reserves Sequence for
// the event that completes it, appended as revision InvoiceRevision+1 of
// the invoice's stream (InvoiceIssued for an invoice number, CreditNoteIssued
// for a credit-note number). The completing event depends on the
// reservation alone, so the request that reserved and any later one that
// finds the reservation pending append the same event, and one of them wins.
type reservation interface {
	// slot is the sequence number and the invoice revision it completes.
	slot() reservedSlot
	// completion is the completing event, for the reservation stored at
	// numberingRevision with metadata md.
	completion(numberingRevision uint64, md json.RawMessage) (events.EventData, error)
	// completedBy reports whether ev is that event.
	completedBy(ev events.RecordedEvent, numberingRevision uint64) (bool, error)
}

// reservedSlot is where a reservation's number goes.
type reservedSlot struct {
	sequence        uint64
	invoiceID       string
	invoiceStream   string
	invoiceRevision uint64
}

// numbering is one of a company's gapless sequences: its stream, and how
// its reservations are read and made.
type numbering[R reservation] struct {
	stream string
	// eventType is the reservations' event type.
	eventType string
	decode    func(data []byte) (R, error)
}

// reserve reserves the sequence's next number for the invoice inv, as the
// request decided on its first version events, with the reservation that
// make builds (at the numbering stream's revision rev), retrying when
// another request reserved first. It settles the last reservation first:
// see next.
func (n numbering[R]) reserve(ctx context.Context, h *Handler, inv events.Invoice, md json.RawMessage, make func(seq, rev uint64) (R, error)) (R, uint64, error) {
	var zero R
	for attempt := 0; attempt < maxNumberingAttempts; attempt++ {
		seq, expected, err := n.next(ctx, h, inv)
		if err != nil {
			return zero, 0, err
		}
		rev := uint64(0)
		if !expected.IsNoStream() {
			rev = expected.Revision() + 1
		}
		res, err := make(seq, rev)
		if err != nil {
			return zero, 0, err
		}
		ev, err := newEvent(n.stream, rev, n.eventType, res, md)
		if err != nil {
			return zero, 0, err
		}
		_, err = h.cfg.Store.Append(ctx, n.stream, expected, ev)
		if errors.Is(err, events.ErrWrongExpectedRevision) {
			continue
		}
		if err != nil {
			return zero, 0, fmt.Errorf("reserve number %d: %w", seq, err)
		}
		return res, rev, nil
	}
	return zero, 0, fmt.Errorf("numbering stream %s: no number reserved in %d attempts", n.stream, maxNumberingAttempts)
}

// next reads the numbering stream's last reservation, settles it, and
// returns the sequence number to reserve next with the revision to expect:
// one past a reservation that holds, the same number again after one that
// lapsed. errStale means the last reservation was for inv itself and is
// completed by an event past the ones the caller decided on (settle, or
// another request, has just appended it): the caller must look at the
// invoice again.
func (n numbering[R]) next(ctx context.Context, h *Handler, inv events.Invoice) (uint64, events.ExpectedRevision, error) {
	last, err := h.cfg.Store.ReadLast(ctx, n.stream)
	if errors.Is(err, events.ErrStreamNotFound) {
		return 1, events.NoStream(), nil
	}
	if err != nil {
		return 0, events.ExpectedRevision{}, fmt.Errorf("read numbering: %w", err)
	}
	res, err := n.decode(last.Data)
	if err != nil {
		return 0, events.ExpectedRevision{}, fmt.Errorf("decode %s@%d: %w", n.stream, last.Revision, err)
	}
	holds, err := settle(ctx, h, last, res)
	slot := res.slot()
	switch {
	case err != nil:
		return 0, events.ExpectedRevision{}, err
	case holds && slot.invoiceID == inv.InvoiceID && slot.invoiceRevision+1 >= uint64(inv.Version):
		return 0, events.ExpectedRevision{}, errStale
	case holds:
		return slot.sequence + 1, events.AtRevision(last.Revision), nil
	}
	return slot.sequence, events.AtRevision(last.Revision), nil
}

// settle reports whether a reservation holds: its invoice stream has the
// completing event. A reservation whose invoice has not moved since is
// pending (its request crashed, or is between its two appends): settle
// completes it with the very event that request would have appended, so
// both may race and one wins. One whose invoice moved on otherwise has
// lapsed.
func settle(ctx context.Context, h *Handler, last events.RecordedEvent, res reservation) (bool, error) {
	slot := res.slot()
	for attempt := 0; attempt < 2; attempt++ {
		evs, err := h.cfg.Store.ReadStream(ctx, slot.invoiceStream)
		if err != nil {
			return false, fmt.Errorf("read reserved invoice %s: %w", slot.invoiceID, err)
		}
		next := slot.invoiceRevision + 1
		if uint64(len(evs)) > next {
			return res.completedBy(evs[next], last.Revision)
		}
		if uint64(len(evs)) < next {
			return false, fmt.Errorf("reservation %d names revision %d of %s, which has %d events", slot.sequence, slot.invoiceRevision, slot.invoiceStream, len(evs))
		}
		ev, err := res.completion(last.Revision, last.Metadata)
		if err != nil {
			return false, err
		}
		_, err = h.cfg.Store.Append(ctx, slot.invoiceStream, events.AtRevision(slot.invoiceRevision), ev)
		if err == nil {
			return true, nil
		}
		if !errors.Is(err, events.ErrWrongExpectedRevision) {
			return false, fmt.Errorf("complete reservation %d: %w", slot.sequence, err)
		}
	}
	return false, fmt.Errorf("reservation %d of %s: the invoice kept changing", slot.sequence, slot.invoiceStream)
}

// completes decodes ev, if it has eventType, into T and reports whether
// T's sequence and numbering revision are the reservation's.
func completes[T any](ev events.RecordedEvent, eventType string, numbered func(T) (uint64, uint64), sequence, numberingRevision uint64) (bool, error) {
	if ev.Type != eventType {
		return false, nil
	}
	var e T
	if err := json.Unmarshal(ev.Data, &e); err != nil {
		return false, fmt.Errorf("decode %s@%d: %w", ev.Stream, ev.Revision, err)
	}
	seq, rev := numbered(e)
	return seq == sequence && rev == numberingRevision, nil
}

// decodeAs is a numbering's decode for reservations of type T.
func decodeAs[T any](data []byte) (T, error) {
	var r T
	err := json.Unmarshal(data, &r)
	return r, err
}
