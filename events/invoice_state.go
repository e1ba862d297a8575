package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// ErrNotAnInvoiceStream means a stream does not start with InvoiceDrafted.
var ErrNotAnInvoiceStream = errors.New("events: not an invoice stream")

// Invoice is an invoice as its stream's events make it: the draft, then
// whatever lifecycle events followed. Both the write side (to decide) and a
// replayed response (to render) fold it from the events alone.
type Invoice struct {
	InvoiceDrafted
	Status     string
	Number     string // "" until issued
	IssuedAt   *time.Time
	VoidReason string // "" unless void
	VoidedAt   *time.Time
	UpdatedAt  time.Time
	// Version counts the stream's events: 1 for a draft, +1 per event.
	Version int
}

// FoldInvoice folds an invoice stream's events, in revision order.
func FoldInvoice(evs []RecordedEvent) (Invoice, error) {
	var inv Invoice
	for i, ev := range evs {
		if err := inv.apply(ev, i == 0); err != nil {
			return Invoice{}, fmt.Errorf("fold %s at revision %d: %w", ev.Stream, ev.Revision, err)
		}
	}
	if inv.Version == 0 {
		return Invoice{}, ErrNotAnInvoiceStream
	}
	return inv, nil
}

func (inv *Invoice) apply(ev RecordedEvent, first bool) error {
	if first != (ev.Type == TypeInvoiceDrafted) {
		return ErrNotAnInvoiceStream
	}
	var err error
	switch ev.Type {
	case TypeInvoiceDrafted:
		err = json.Unmarshal(ev.Data, &inv.InvoiceDrafted)
		inv.Status, inv.UpdatedAt = StatusDraft, inv.CreatedAt
	case TypeInvoiceIssued:
		var e InvoiceIssued
		err = json.Unmarshal(ev.Data, &e)
		inv.Status, inv.Number, inv.IssuedAt, inv.UpdatedAt = StatusIssued, e.Number, &e.IssuedAt, e.IssuedAt
		inv.IssueDate, inv.DueDate = or(e.IssueDate, inv.IssueDate), or(e.DueDate, inv.DueDate)
	case TypeInvoiceRevised:
		var e InvoiceRevised
		err = json.Unmarshal(ev.Data, &e)
		inv.InvoiceDrafted, inv.UpdatedAt = inv.InvoiceDrafted.Revise(e), e.RevisedAt
	case TypeInvoiceVoided:
		var e InvoiceVoided
		err = json.Unmarshal(ev.Data, &e)
		inv.Status, inv.VoidReason, inv.VoidedAt, inv.UpdatedAt = StatusVoid, e.Reason, &e.VoidedAt, e.VoidedAt
	default:
		return fmt.Errorf("unexpected event type %q", ev.Type)
	}
	inv.Version++
	return err
}

// or is v, or def when v is empty (an optional field the event left out).
func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
