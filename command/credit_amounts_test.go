package command

import (
	"errors"
	"reflect"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// issuedInvoice is an invoice of 100.00 at 5% (tax 5.00) and 10.00 exempt.
func issuedInvoice(t *testing.T, credited ...events.CreditNoteIssued) events.Invoice {
	t.Helper()
	lines, totals, breakdown, err := computeLines([]LineInput{
		{Description: "a", Quantity: "1", UnitAmountMinor: 10000, TaxRateBps: 500},
		{Description: "b", Quantity: "1", UnitAmountMinor: 1000, TaxCategory: events.TaxExempt},
	})
	if err != nil {
		t.Fatal(err)
	}
	return events.Invoice{InvoiceDrafted: events.InvoiceDrafted{Lines: lines, SubtotalMinor: totals.Subtotal, TaxMinor: totals.Tax,
		TotalMinor: totals.Total, TaxBreakdown: breakdown}, Status: events.StatusIssued, Number: "INV-000007", CreditNotes: credited}
}

func creditNoteOf(amounts creditAmounts) events.CreditNoteIssued {
	return events.CreditNoteIssued{Lines: amounts.lines, SubtotalMinor: amounts.totals.Subtotal, TaxMinor: amounts.totals.Tax,
		TotalMinor: amounts.totals.Total, TaxBreakdown: amounts.breakdown}
}

func TestACreditNoteWithoutLinesCreditsExactlyWhatIsLeft(t *testing.T) {
	inv := issuedInvoice(t)
	whole, err := creditedAmounts(inv, nil)
	if err != nil || !reflect.DeepEqual(whole.lines, inv.Lines) || whole.totals.Total != inv.TotalMinor {
		t.Fatalf("an invoice not yet credited is credited line for line: %+v, %v", whole, err)
	}
	// 33.33 at 5% is 1.6665, rounded 1.67: what is left of the group is
	// 66.67 net and 3.33 tax, where 66.67 × 5% would round to 3.33 too, but
	// the remainder takes what is left, whatever the rounding made it.
	half, err := creditedAmounts(inv, []LineInput{{Description: "part", Quantity: "1", UnitAmountMinor: 3333, TaxRateBps: 500}})
	if err != nil {
		t.Fatal(err)
	}
	rest, err := creditedAmounts(issuedInvoice(t, creditNoteOf(half)), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := half.totals.Total + rest.totals.Total; got != inv.TotalMinor {
		t.Errorf("a part and the rest credit %d, want the invoice's %d", got, inv.TotalMinor)
	}
	if len(rest.lines) != 2 || rest.lines[0].Description != "Remainder of invoice INV-000007" || rest.lines[0].NetAmountMinor != 6667 ||
		rest.lines[0].TaxAmountMinor != 500-167 || rest.lines[1].NetAmountMinor != 1000 {
		t.Errorf("the rest: %+v", rest.lines)
	}
	_, err = creditedAmounts(issuedInvoice(t, creditNoteOf(half), creditNoteOf(rest)), nil)
	if !errors.Is(err, ErrInvalidState) {
		t.Errorf("crediting an invoice credited in full: %v, want ErrInvalidState", err)
	}
}

func TestACreditNoteNeverTakesMoreThanIsLeftPerCategoryAndRate(t *testing.T) {
	inv := issuedInvoice(t)
	for _, tc := range []struct {
		name  string
		lines []LineInput
		state bool // 409 (what is left), else 422 (the request)
	}{
		{"more net than the exempt group has", []LineInput{{Description: "x", Quantity: "1", UnitAmountMinor: 1001, TaxCategory: events.TaxExempt}}, true},
		{"more than the 5% group", []LineInput{{Description: "x", Quantity: "2", UnitAmountMinor: 5001, TaxRateBps: 500}}, true},
		{"a rate the invoice does not have", []LineInput{{Description: "x", Quantity: "1", UnitAmountMinor: 1, TaxRateBps: 700}}, false},
		{"a category the invoice does not have", []LineInput{{Description: "x", Quantity: "1", UnitAmountMinor: 1, TaxCategory: events.TaxZero}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := creditedAmounts(inv, tc.lines)
			var state *StateError
			var invalid *ValidationError
			if tc.state && !errors.As(err, &state) || !tc.state && !errors.As(err, &invalid) {
				t.Fatalf("got %v", err)
			}
		})
	}
	// 50.10 at 5% is 2.505, rounded 2.51; 49.90 would be 2.495, rounded
	// 2.50, but only 2.49 of tax is left: the tax bounds the second credit
	// note even though its net fits.
	odd := []LineInput{{Description: "x", Quantity: "1", UnitAmountMinor: 5010, TaxRateBps: 500}}
	first, err := creditedAmounts(inv, odd)
	if err != nil || first.totals.Tax != 251 {
		t.Fatalf("first: %+v %v", first, err)
	}
	_, err = creditedAmounts(issuedInvoice(t, creditNoteOf(first)), []LineInput{{Description: "x", Quantity: "1", UnitAmountMinor: 4990, TaxRateBps: 500}})
	var state *StateError
	if !errors.As(err, &state) || state.Violations[0].Message != "would credit 4990 net and 250 tax in VAT category S at 5%, but only 4990 net and 249 tax are left to credit" {
		t.Fatalf("the second half: %v", err)
	}
}
