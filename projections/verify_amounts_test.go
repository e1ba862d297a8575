package projections

import (
	"testing"

	"github.com/invoicing/invoicing/events"
)

// audit verify recomputes an invoice by the rule it was priced with: the
// tax per category and rate, or, for invoices from before the breakdown,
// the sum of the lines' taxes; anything else is a finding.
func TestRecomputeInvoiceAcceptsEitherRuleAndNothingElse(t *testing.T) {
	lines := []events.InvoiceLine{
		{Position: 1, Quantity: "1", UnitAmountMinor: 105, TaxRateBps: 1000, TaxCategory: "S", NetAmountMinor: 105, TaxAmountMinor: 11, TotalAmountMinor: 116},
		{Position: 2, Quantity: "1", UnitAmountMinor: 105, TaxRateBps: 1000, TaxCategory: "S", NetAmountMinor: 105, TaxAmountMinor: 11, TotalAmountMinor: 116},
	}
	byGroup := []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1000, TaxableAmountMinor: 210, TaxAmountMinor: 21}}
	byLine := []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1000, TaxableAmountMinor: 210, TaxAmountMinor: 22}}
	for _, tt := range []struct {
		name      string
		breakdown []events.TaxBreakdown
		totals    events.Totals
		ok        bool
	}{
		{"per group", byGroup, events.Totals{Subtotal: 210, Tax: 21, Total: 231}, true},
		{"per line, from before the breakdown", byLine, events.Totals{Subtotal: 210, Tax: 22, Total: 232}, true},
		{"per group with the lines' totals", byGroup, events.Totals{Subtotal: 210, Tax: 22, Total: 232}, false},
		{"a breakdown of neither rule", []events.TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1000, TaxableAmountMinor: 210, TaxAmountMinor: 20}},
			events.Totals{Subtotal: 210, Tax: 20, Total: 230}, false},
	} {
		if got := recomputeInvoice(lines, tt.breakdown, tt.totals); (len(got) == 0) != tt.ok {
			t.Errorf("%s: findings %q", tt.name, got)
		}
	}
}
