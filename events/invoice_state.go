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
	// CreditNotes and Payments are the issued invoice's corrections and
	// payments in the order they were recorded; a reversed payment stays,
	// marked.
	CreditNotes []CreditNoteIssued
	Payments    []Payment
}

// Payment is a recorded payment and, once reversed, its reversal.
type Payment struct {
	PaymentRecorded
	Reversal *PaymentReversed
}

// Settlement is where inv stands by Settle: Σ credit note totals, Σ
// payments not reversed.
func (inv Invoice) Settlement() Settlement {
	var credited, paid int64
	for _, cn := range inv.CreditNotes {
		credited += cn.TotalMinor
	}
	for _, p := range inv.Payments {
		if p.Reversal == nil {
			paid += p.AmountMinor
		}
	}
	return Settle(inv.Status, inv.TotalMinor, credited, paid)
}

// HasPayments reports whether inv has a payment that was not reversed.
func (inv Invoice) HasPayments() bool {
	for _, p := range inv.Payments {
		if p.Reversal == nil {
			return true
		}
	}
	return false
}

// CreditLeft is what credit notes may still take from inv, per category
// and rate in the order of its VAT breakdown: its breakdown less the
// breakdowns of its credit notes.
func (inv Invoice) CreditLeft() []TaxBreakdown {
	left := make([]TaxBreakdown, len(inv.TaxBreakdown))
	copy(left, inv.TaxBreakdown)
	for _, cn := range inv.CreditNotes {
		for _, b := range cn.TaxBreakdown {
			for i := range left {
				if left[i].TaxCategory == b.TaxCategory && left[i].TaxRateBps == b.TaxRateBps {
					left[i].TaxableAmountMinor -= b.TaxableAmountMinor
					left[i].TaxAmountMinor -= b.TaxAmountMinor
				}
			}
		}
	}
	return left
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
	case TypeCreditNoteIssued, TypePaymentRecorded, TypePaymentReversed:
		err = inv.applySettlement(ev)
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

// applySettlement folds a credit note, a payment or a reversal.
func (inv *Invoice) applySettlement(ev RecordedEvent) error {
	switch ev.Type {
	case TypeCreditNoteIssued:
		var e CreditNoteIssued
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return err
		}
		inv.CreditNotes, inv.UpdatedAt = append(inv.CreditNotes, e), e.IssuedAt
	case TypePaymentRecorded:
		var e PaymentRecorded
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return err
		}
		inv.Payments, inv.UpdatedAt = append(inv.Payments, Payment{PaymentRecorded: e}), e.RecordedAt
	case TypePaymentReversed:
		var e PaymentReversed
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			return err
		}
		p := inv.Payment(e.PaymentID)
		if p == nil {
			return fmt.Errorf("reversal of unknown payment %s", e.PaymentID)
		}
		p.Reversal, inv.UpdatedAt = &e, e.ReversedAt
	}
	return nil
}

// Payment returns inv's payment id, or nil.
func (inv *Invoice) Payment(id string) *Payment {
	for i := range inv.Payments {
		if inv.Payments[i].PaymentID == id {
			return &inv.Payments[i]
		}
	}
	return nil
}

// CreditNote returns inv's credit note id, or nil.
func (inv *Invoice) CreditNote(id string) *CreditNoteIssued {
	for i := range inv.CreditNotes {
		if inv.CreditNotes[i].CreditNoteID == id {
			return &inv.CreditNotes[i]
		}
	}
	return nil
}
