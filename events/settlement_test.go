package events

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSettleIsTheOneRuleOfAnInvoicesSettlement(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		status                string
		total, credited, paid int64
		due, refundable       int64
		paymentStatus         string
	}{
		{"a draft is due in full", StatusDraft, 1000, 0, 0, 1000, 0, PaymentUnpaid},
		{"issued, nothing paid", StatusIssued, 1000, 0, 0, 1000, 0, PaymentUnpaid},
		{"partly paid", StatusIssued, 1000, 0, 400, 600, 0, PaymentPartiallyPaid},
		{"paid in full", StatusIssued, 1000, 0, 1000, 0, 0, PaymentPaid},
		{"credited in part, the rest paid", StatusIssued, 1000, 300, 700, 0, 0, PaymentPaid},
		{"credited in full, never paid: settled", StatusIssued, 1000, 1000, 0, 0, 0, PaymentPaid},
		{"credited in part, nothing paid", StatusIssued, 1000, 300, 0, 700, 0, PaymentUnpaid},
		{"paid, then credited: refundable", StatusIssued, 1000, 250, 1000, 0, 250, PaymentPaid},
		{"partly paid, then credited beyond the rest", StatusIssued, 1000, 800, 400, 0, 200, PaymentPaid},
		{"void owes nothing", StatusVoid, 1000, 0, 0, 0, 0, PaymentUnpaid},
		{"a zero invoice is not paid by itself", StatusIssued, 0, 0, 0, 0, 0, PaymentUnpaid},
		{"at the cap", StatusIssued, MaxAmountMinor, MaxAmountMinor, MaxAmountMinor, 0, MaxAmountMinor, PaymentPaid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := Settlement{AmountCreditedMinor: tc.credited, AmountPaidMinor: tc.paid, AmountDueMinor: tc.due,
				AmountRefundableMinor: tc.refundable, PaymentStatus: tc.paymentStatus}
			if got := Settle(tc.status, tc.total, tc.credited, tc.paid); got != want {
				t.Errorf("Settle(%s, %d, %d, %d) = %+v, want %+v", tc.status, tc.total, tc.credited, tc.paid, got, want)
			}
		})
	}
}

func TestAnInvoiceFoldsItsCreditNotesPaymentsAndReversals(t *testing.T) {
	breakdown := []TaxBreakdown{{TaxCategory: TaxStandard, TaxRateBps: 1900, TaxableAmountMinor: 1000, TaxAmountMinor: 190},
		{TaxCategory: TaxExempt, TaxableAmountMinor: 500}}
	drafted := InvoiceDrafted{InvoiceID: "i", SubtotalMinor: 1500, TaxMinor: 190, TotalMinor: 1690, TaxBreakdown: breakdown}
	cn := CreditNoteIssued{CreditNoteID: "c", TotalMinor: 238, TaxBreakdown: []TaxBreakdown{
		{TaxCategory: TaxStandard, TaxRateBps: 1900, TaxableAmountMinor: 200, TaxAmountMinor: 38}}}
	evs := []RecordedEvent{
		recorded(t, TypeInvoiceDrafted, drafted),
		recorded(t, TypeInvoiceIssued, InvoiceIssued{InvoiceID: "i", Number: "INV-1"}),
		recorded(t, TypePaymentRecorded, PaymentRecorded{PaymentID: "p1", AmountMinor: 1000}),
		recorded(t, TypeCreditNoteIssued, cn),
		recorded(t, TypePaymentRecorded, PaymentRecorded{PaymentID: "p2", AmountMinor: 452}),
		recorded(t, TypePaymentReversed, PaymentReversed{PaymentID: "p1", Reason: "bounced"}),
	}
	inv, err := FoldInvoice(evs)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := inv.Settlement(), Settle(StatusIssued, 1690, 238, 452); got != want {
		t.Errorf("settlement %+v, want %+v", got, want)
	}
	if !inv.HasPayments() || inv.Payment("p1").Reversal == nil || inv.Payment("p2").Reversal != nil || inv.CreditNote("c") == nil {
		t.Errorf("payments %+v, credit notes %+v", inv.Payments, inv.CreditNotes)
	}
	wantLeft := []TaxBreakdown{{TaxCategory: TaxStandard, TaxRateBps: 1900, TaxableAmountMinor: 800, TaxAmountMinor: 152},
		{TaxCategory: TaxExempt, TaxableAmountMinor: 500}}
	if got := inv.CreditLeft(); !reflect.DeepEqual(got, wantLeft) {
		t.Errorf("left %+v, want %+v", got, wantLeft)
	}
	if !reflect.DeepEqual(inv.TaxBreakdown, breakdown) {
		t.Errorf("CreditLeft changed the invoice's breakdown: %+v", inv.TaxBreakdown)
	}
	if _, err := FoldInvoice(append(evs[:2:2], recorded(t, TypePaymentReversed, PaymentReversed{PaymentID: "nope"}))); err == nil {
		t.Error("the reversal of an unknown payment folded")
	}
}

func recorded(t *testing.T, typ string, payload any) RecordedEvent {
	t.Helper()
	data, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	return RecordedEvent{Stream: "invoice-x", Type: typ, Data: data}
}
