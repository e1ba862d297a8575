package events

import (
	"encoding/json"
	"reflect"
	"testing"
)

// Events written before issue 22 have no unit_code, tax_category or
// tax_breakdown: they read with the defaults, and the breakdown their
// totals were computed with (the sum of the lines' taxes per category
// and rate).
func TestEventsFromBeforeTheDocumentFieldsReadWithDefaults(t *testing.T) {
	old := `{"invoice_id":"i","lines":[
		{"position":1,"description":"a","quantity":"1","unit_amount_minor":105,"tax_rate_bps":1000,"net_amount_minor":105,"tax_amount_minor":11,"total_amount_minor":116},
		{"position":2,"description":"b","quantity":"1","unit_amount_minor":105,"tax_rate_bps":1000,"net_amount_minor":105,"tax_amount_minor":11,"total_amount_minor":116},
		{"position":3,"description":"c","quantity":"1","unit_amount_minor":50,"tax_rate_bps":0,"net_amount_minor":50,"tax_amount_minor":0,"total_amount_minor":50}],
		"subtotal_minor":260,"tax_minor":22,"total_minor":282}`
	want := []TaxBreakdown{{TaxCategory: "S", TaxRateBps: 1000, TaxableAmountMinor: 210, TaxAmountMinor: 22},
		{TaxCategory: "Z", TaxableAmountMinor: 50}}
	var d InvoiceDrafted
	if err := json.Unmarshal([]byte(old), &d); err != nil {
		t.Fatal(err)
	}
	var r InvoiceRevised
	if err := json.Unmarshal([]byte(old), &r); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string]struct {
		lines []InvoiceLine
		b     []TaxBreakdown
	}{"drafted": {d.Lines, d.TaxBreakdown}, "revised": {r.Lines, r.TaxBreakdown}} {
		if !reflect.DeepEqual(got.b, want) {
			t.Errorf("%s: breakdown %+v, want %+v", name, got.b, want)
		}
		for i, l := range got.lines {
			if l.UnitCode != "C62" || l.TaxCategory != []string{"S", "S", "Z"}[i] {
				t.Errorf("%s: line %d unit_code %q tax_category %q", name, i, l.UnitCode, l.TaxCategory)
			}
		}
	}
}

// SumInvoice computes each breakdown's tax on the group, so that it meets
// BR-CO-17 exactly; summing the lines' taxes would not (two lines of 105
// at 10 %: 11 + 11 = 22, where 210 × 10 % = 21).
func TestSumInvoiceTaxesEachCategoryAndRateOnce(t *testing.T) {
	lines := []InvoiceLine{
		{NetAmountMinor: 105, TaxAmountMinor: 11, TaxRateBps: 1000, TaxCategory: "S"},
		{NetAmountMinor: 50, TaxCategory: "E"},
		{NetAmountMinor: 105, TaxAmountMinor: 11, TaxRateBps: 1000, TaxCategory: "S"},
		{NetAmountMinor: 999, TaxAmountMinor: 70, TaxRateBps: 700, TaxCategory: "S"},
	}
	totals, b, err := SumInvoice(lines)
	if err != nil {
		t.Fatal(err)
	}
	want := []TaxBreakdown{{"S", 1000, 210, 21}, {"E", 0, 50, 0}, {"S", 700, 999, 70}}
	if !reflect.DeepEqual(b, want) {
		t.Errorf("breakdown %+v, want %+v", b, want)
	}
	if totals != (Totals{Subtotal: 1259, Tax: 91, Total: 1350}) {
		t.Errorf("totals %+v", totals)
	}
}

func TestSumInvoiceNamesTheLineThatLeavesTheRange(t *testing.T) {
	lines := []InvoiceLine{
		{NetAmountMinor: MaxAmountMinor - 10, TaxRateBps: 0, TaxCategory: "Z"},
		{NetAmountMinor: 6, TaxRateBps: 10000, TaxAmountMinor: 6, TaxCategory: "S"},
		{NetAmountMinor: 1, TaxCategory: "Z"},
	}
	_, _, err := SumInvoice(lines)
	var re *AmountRangeError
	if !asRange(err, &re) || re.Index != 1 || re.Field != "total_minor" {
		t.Fatalf("err %v, want total_minor at lines[1]", err)
	}
}

func asRange(err error, re **AmountRangeError) bool {
	e, ok := err.(*AmountRangeError)
	*re = e
	return ok
}
