package events

import "encoding/json"

// VAT categories of a line (EN 16931 BT-151, UNTDID 5305 as EN 16931
// restricts it).
const (
	TaxStandard       = "S"  // standard rate: a rate above 0
	TaxZero           = "Z"  // zero rated goods
	TaxExempt         = "E"  // exempt from VAT
	TaxReverseCharge  = "AE" // VAT reverse charge
	TaxIntraCommunity = "K"  // intra-community supply
	TaxExport         = "G"  // free export item, VAT not charged
	TaxNotSubject     = "O"  // services outside the scope of VAT
	TaxCanaryIslands  = "L"  // IGIC (Canary Islands)
	TaxCeutaMelilla   = "M"  // IPSI (Ceuta and Melilla)
)

// TaxCategories lists the categories a line may have, in the order the
// API documents them.
var TaxCategories = []string{TaxStandard, TaxZero, TaxExempt, TaxReverseCharge,
	TaxIntraCommunity, TaxExport, TaxNotSubject, TaxCanaryIslands, TaxCeutaMelilla}

// DefaultUnitCode is a line's unit of measure code (UN/ECE Rec 20 "one",
// EN 16931 BT-130) when the client names none, and in events from before it.
const DefaultUnitCode = "C62"

// DefaultTaxCategory is a line's category when the client names none, and
// in events from before it: standard rated when it bears a rate, else zero
// rated.
func DefaultTaxCategory(taxRateBps int64) string {
	if taxRateBps > 0 {
		return TaxStandard
	}
	return TaxZero
}

// RateRule is what a category says of a line's rate: S needs one above 0;
// Z, E, AE, K, G and O forbid one (0); L and M take any.
func RateRule(category string) (needsRate, forbidsRate bool) {
	switch category {
	case TaxStandard:
		return true, false
	case TaxZero, TaxExempt, TaxReverseCharge, TaxIntraCommunity, TaxExport, TaxNotSubject:
		return false, true
	}
	return false, false
}

// TaxBreakdown is one entry of an invoice's VAT breakdown (EN 16931
// BG-23): the lines of one category and rate, their net sum and its tax.
type TaxBreakdown struct {
	TaxCategory        string `json:"tax_category"`
	TaxRateBps         int64  `json:"tax_rate_bps"`
	TaxableAmountMinor int64  `json:"taxable_amount_minor"`
	TaxAmountMinor     int64  `json:"tax_amount_minor"`
}

// UnmarshalJSON reads a line, giving a line from before unit_code and
// tax_category their defaults (DefaultUnitCode, DefaultTaxCategory), so
// that every reader of the log sees one shape.
func (l *InvoiceLine) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, (*plainLine)(l)); err != nil {
		return err
	}
	l.setDefaults()
	return nil
}

// plainLine is an InvoiceLine without its UnmarshalJSON.
type plainLine InvoiceLine

func (l *InvoiceLine) setDefaults() {
	if l.UnitCode == "" {
		l.UnitCode = DefaultUnitCode
	}
	if l.TaxCategory == "" {
		l.TaxCategory = DefaultTaxCategory(l.TaxRateBps)
	}
}

// linesOf returns the lines decoded as plainLines with their defaults set.
// An event's lines are decoded so, in the event's own decode, because each
// InvoiceLine.UnmarshalJSON is a json.Unmarshal of its own that scans the
// line again before decoding it: a third of a five-line draft's decode.
func linesOf(plain []plainLine) []InvoiceLine {
	if plain == nil {
		return nil
	}
	lines := make([]InvoiceLine, len(plain))
	for i := range plain {
		lines[i] = InvoiceLine(plain[i])
	}
	setLineDefaults(lines)
	return lines
}

func setLineDefaults(lines []InvoiceLine) {
	for i := range lines {
		lines[i].setDefaults()
	}
}

// UnmarshalJSON reads an InvoiceDrafted; one from before tax_breakdown
// gets the breakdown its totals were computed with (LineTaxBreakdown).
// What json.Marshal wrote is read without reflection (decodeDraftedFast);
// anything else, by encoding/json.
func (d *InvoiceDrafted) UnmarshalJSON(b []byte) error {
	if isZeroDraft(d) {
		if decodeDraftedFast(d, b) {
			setLineDefaults(d.Lines)
			d.defaultBreakdown()
			return nil
		}
		*d = InvoiceDrafted{}
	}
	return d.unmarshalReflect(b)
}

// defaultBreakdown gives a draft from before tax_breakdown its breakdown.
func (d *InvoiceDrafted) defaultBreakdown() {
	if d.TaxBreakdown == nil {
		d.TaxBreakdown = LineTaxBreakdown(d.Lines)
	}
}

// unmarshalReflect is UnmarshalJSON by encoding/json.
func (d *InvoiceDrafted) unmarshalReflect(b []byte) error {
	type plain InvoiceDrafted
	w := struct {
		*plain
		Lines []plainLine `json:"lines"` // shadows plain's, which it fills below
	}{plain: (*plain)(d)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	d.Lines = linesOf(w.Lines)
	d.defaultBreakdown()
	return nil
}

// UnmarshalJSON reads an InvoiceRevised, as InvoiceDrafted's.
func (r *InvoiceRevised) UnmarshalJSON(b []byte) error {
	type plain InvoiceRevised
	w := struct {
		*plain
		Lines []plainLine `json:"lines"` // as in InvoiceDrafted's
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	r.Lines = linesOf(w.Lines)
	if r.TaxBreakdown == nil {
		r.TaxBreakdown = LineTaxBreakdown(r.Lines)
	}
	return nil
}

// breakdownKey groups lines by category and rate.
type breakdownKey struct {
	category string
	rate     int64
}

// group returns the breakdown of lines with empty tax amounts, one entry
// per category and rate in the order they first appear, and each line's
// entry.
func group(lines []InvoiceLine) ([]TaxBreakdown, []int) {
	var out []TaxBreakdown
	at := map[breakdownKey]int{}
	idx := make([]int, len(lines))
	for i, l := range lines {
		k := breakdownKey{l.TaxCategory, l.TaxRateBps}
		n, ok := at[k]
		if !ok {
			n = len(out)
			at[k] = n
			out = append(out, TaxBreakdown{TaxCategory: k.category, TaxRateBps: k.rate})
		}
		idx[i] = n
	}
	return out, idx
}

// LineTaxBreakdown is the breakdown of invoices drafted or revised before
// the breakdown existed, whose tax was the sum of their lines' taxes: per
// category and rate, taxable = Σ net and tax = Σ line tax. It keeps
// Σ breakdown tax equal to the tax those events recorded.
func LineTaxBreakdown(lines []InvoiceLine) []TaxBreakdown {
	out, idx := group(lines)
	for i, l := range lines {
		out[idx[i]].TaxableAmountMinor += l.NetAmountMinor
		out[idx[i]].TaxAmountMinor += l.TaxAmountMinor
	}
	if out == nil {
		out = []TaxBreakdown{}
	}
	return out
}
