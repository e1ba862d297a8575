package command

import (
	"fmt"
	"strconv"

	"github.com/invoicing/invoicing/events"
)

// creditAmounts are a credit note's lines, totals and VAT breakdown.
type creditAmounts struct {
	lines     []events.InvoiceLine
	totals    events.Totals
	breakdown []events.TaxBreakdown
}

// creditedAmounts prices a credit note of inv: the requested lines by the
// invoice's money rule, or, without lines, whatever is left of inv. Either
// must fit in what is left per VAT category and rate (events.Invoice's
// CreditLeft): net and tax each, which bounds the total too, since an
// invoice's total is the sum of its breakdown's.
func creditedAmounts(inv events.Invoice, inputs []LineInput) (creditAmounts, error) {
	left := inv.CreditLeft()
	if inputs == nil {
		return remainder(inv, left)
	}
	lines, totals, breakdown, err := computeLines(inputs)
	if err != nil {
		return creditAmounts{}, err
	}
	if err := withinInvoice(lines, left); err != nil {
		return creditAmounts{}, err
	}
	if err := withinLeft(breakdown, left); err != nil {
		return creditAmounts{}, err
	}
	return creditAmounts{lines: lines, totals: totals, breakdown: breakdown}, nil
}

// withinInvoice checks that every line's category and rate is one of the
// invoice's: a credit note corrects what was invoiced.
func withinInvoice(lines []events.InvoiceLine, left []events.TaxBreakdown) error {
	r := &reader{}
	for i, l := range lines {
		if groupOf(left, l.TaxCategory, l.TaxRateBps) == nil {
			r.add(index(lineFields, i), "the invoice has no amounts in VAT category %s at %s to credit", l.TaxCategory, rate(l.TaxRateBps))
		}
	}
	return r.err()
}

// withinLeft checks a credit note's breakdown against what is left of the
// invoice: a StateError naming, per category and rate, what is left.
func withinLeft(breakdown, left []events.TaxBreakdown) error {
	var over []Violation
	for _, b := range breakdown {
		l := groupOf(left, b.TaxCategory, b.TaxRateBps)
		if b.TaxableAmountMinor > l.TaxableAmountMinor || b.TaxAmountMinor > l.TaxAmountMinor {
			over = append(over, Violation{Path: lineFields, Message: fmt.Sprintf(
				"would credit %d net and %d tax in VAT category %s at %s, but only %d net and %d tax are left to credit",
				b.TaxableAmountMinor, b.TaxAmountMinor, b.TaxCategory, rate(b.TaxRateBps), l.TaxableAmountMinor, l.TaxAmountMinor)})
		}
	}
	if over != nil {
		return fmt.Errorf("the invoice's credit notes may not exceed it: %w", &StateError{Violations: over})
	}
	return nil
}

// remainder credits whatever is left of inv. An invoice not yet credited is
// credited line for line (its amounts are the invoice's exactly); after a
// partial credit note, with one line per category and rate that has
// something left, whose net and tax are exactly what is left, so that the
// invoice ends credited to the minor unit. Such a line's tax may differ by
// a few minor units from its net times its rate (the earlier credit notes'
// rounding), well within EN 16931's tolerance (BR-CO-17).
func remainder(inv events.Invoice, left []events.TaxBreakdown) (creditAmounts, error) {
	if len(inv.CreditNotes) == 0 && inv.TotalMinor > 0 {
		return creditAmounts{lines: inv.Lines, totals: events.Totals{Subtotal: inv.SubtotalMinor, Tax: inv.TaxMinor,
			Total: inv.TotalMinor}, breakdown: inv.TaxBreakdown}, nil
	}
	var out creditAmounts
	for _, l := range left {
		if l.TaxableAmountMinor == 0 && l.TaxAmountMinor == 0 {
			continue
		}
		net, tax := l.TaxableAmountMinor, l.TaxAmountMinor
		out.lines = append(out.lines, events.InvoiceLine{Position: len(out.lines) + 1,
			Description: "Remainder of invoice " + inv.Number, Quantity: "1", UnitCode: events.DefaultUnitCode,
			UnitAmountMinor: net, TaxRateBps: l.TaxRateBps, TaxCategory: l.TaxCategory,
			NetAmountMinor: net, TaxAmountMinor: tax, TotalAmountMinor: net + tax})
		out.breakdown = append(out.breakdown, l)
		out.totals.Subtotal, out.totals.Tax = out.totals.Subtotal+net, out.totals.Tax+tax
	}
	if out.lines == nil {
		return creditAmounts{}, stateOf("invoice_id", "nothing is left to credit: the invoice's credit notes already credit all of it")
	}
	out.totals.Total = out.totals.Subtotal + out.totals.Tax
	return out, nil
}

// groupOf returns the entry of breakdown for category and rate, or nil.
func groupOf(breakdown []events.TaxBreakdown, category string, rateBps int64) *events.TaxBreakdown {
	for i := range breakdown {
		if breakdown[i].TaxCategory == category && breakdown[i].TaxRateBps == rateBps {
			return &breakdown[i]
		}
	}
	return nil
}

// rate renders basis points as a percentage for messages: 1950 is 19.5%.
func rate(bps int64) string {
	return strconv.FormatFloat(float64(bps)/100, 'f', -1, 64) + "%"
}
