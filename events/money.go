package events

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// MaxAmountMinor is the largest amount in minor units (2^53-1, exact in
// every JSON client, including those that read numbers as float64).
const MaxAmountMinor int64 = 9007199254740991

// ErrInvalidQuantity reports a quantity string that breaks rule 1 of the
// interface. Its text is meant for API clients, so it names the rule and
// not the input.
var ErrInvalidQuantity = errors.New("must be a decimal string greater than zero with at most 9 integer and 3 fractional digits")

// ErrAmountOutOfRange reports an input or computed amount outside its
// allowed range; errors from ComputeLine and SumLines wrap it, so callers
// map it to 422 with errors.Is.
var ErrAmountOutOfRange = errors.New("amount out of range")

// Quantity is an exact non-negative decimal with at most 9 integer and 3
// fractional digits (rule 1), held in thousandths so that no binary
// floating point ever touches an amount. The zero value is zero, which
// ParseQuantity never returns.
type Quantity struct {
	thousandths int64
}

// ParseQuantity parses s by rule 1: the pattern
// ^(?!0(?:\.0{1,3})?$)(?:0|[1-9]\d{0,8})(?:\.\d{1,3})?$. Go's regexp has no
// lookahead, and the grammar is tiny, so it is parsed by hand. Only ASCII
// digits count: other Unicode digits, signs, exponents and spaces are
// rejected. Any error is ErrInvalidQuantity.
func ParseQuantity(s string) (Quantity, error) {
	intPart, fracPart, hasPoint := strings.Cut(s, ".")
	if len(intPart) < 1 || len(intPart) > 9 || !asciiDigits(intPart) {
		return Quantity{}, ErrInvalidQuantity
	}
	// A single "0" is the only integer part that may start with 0.
	if len(intPart) > 1 && intPart[0] == '0' {
		return Quantity{}, ErrInvalidQuantity
	}
	// "1." and "1.2345" are rejected; strings.Cut leaves any second point
	// in fracPart, where asciiDigits rejects it.
	if hasPoint && (len(fracPart) < 1 || len(fracPart) > 3 || !asciiDigits(fracPart)) {
		return Quantity{}, ErrInvalidQuantity
	}
	var t int64
	for i := 0; i < len(intPart); i++ {
		t = t*10 + int64(intPart[i]-'0')
	}
	// Pad the fraction to exactly three digits: ".5" is 500 thousandths.
	for i := 0; i < 3; i++ {
		t *= 10
		if i < len(fracPart) {
			t += int64(fracPart[i] - '0')
		}
	}
	if t == 0 {
		return Quantity{}, ErrInvalidQuantity
	}
	return Quantity{thousandths: t}, nil
}

func asciiDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Thousandths returns q in thousandths: 1.5 is 1500.
func (q Quantity) Thousandths() int64 { return q.thousandths }

// String returns q in canonical form, without trailing fractional zeros
// (1.5, 2, 0.001). It is for debugging: responses echo the client's own
// quantity string, which the caller keeps.
func (q Quantity) String() string {
	whole := strconv.FormatInt(q.thousandths/1000, 10)
	frac := q.thousandths % 1000
	if frac == 0 {
		return whole
	}
	// 1000+frac keeps the leading zeros of the fraction: 7 -> "1007" -> "007".
	digits := strconv.FormatInt(1000+frac, 10)[1:]
	return whole + "." + strings.TrimRight(digits, "0")
}

// LineAmounts are the computed amounts of one invoice line, in minor units.
type LineAmounts struct {
	Net, Tax, Total int64
}

// ComputeLine computes one line by DESIGN §4:
//
//	net   = round_half_up(quantity × unitAmountMinor)
//	tax   = round_half_up(net × taxRateBps / 10000)
//	total = net + tax
//
// where round_half_up rounds .5 away from zero. It returns an error wrapping
// ErrAmountOutOfRange if unitAmountMinor is outside 0..MaxAmountMinor,
// taxRateBps is outside 0..10000, or net, tax or total exceeds
// MaxAmountMinor.
func ComputeLine(q Quantity, unitAmountMinor, taxRateBps int64) (LineAmounts, error) {
	if unitAmountMinor < 0 || unitAmountMinor > MaxAmountMinor {
		return LineAmounts{}, fmt.Errorf("%w: unit_amount_minor must be 0..%d", ErrAmountOutOfRange, MaxAmountMinor)
	}
	if taxRateBps < 0 || taxRateBps > 10000 {
		return LineAmounts{}, fmt.Errorf("%w: tax_rate_bps must be 0..10000", ErrAmountOutOfRange)
	}
	// quantity × unit reaches ~1e12 × 9e15 ≈ 9e27 thousandths, past
	// uint64, so mulDivHalfUp works in 128 bits.
	net, ok := mulDivHalfUp(uint64(q.thousandths), uint64(unitAmountMinor), 1000)
	if !ok || net > uint64(MaxAmountMinor) {
		return LineAmounts{}, exceeds("net_amount_minor")
	}
	// net × 10000 can pass 2^63 even though tax ≤ net always fits.
	tax, _ := mulDivHalfUp(net, uint64(taxRateBps), 10000)
	// net, tax ≤ 2^53, so the sum cannot overflow before the check.
	total := net + tax
	if total > uint64(MaxAmountMinor) {
		return LineAmounts{}, exceeds("total_amount_minor")
	}
	return LineAmounts{Net: int64(net), Tax: int64(tax), Total: int64(total)}, nil
}

func exceeds(field string) error {
	return fmt.Errorf("%w: %s would exceed %d", ErrAmountOutOfRange, field, MaxAmountMinor)
}

// mulDivHalfUp returns round_half_up(a × b / d) for an even d, exactly, with
// a 128-bit intermediate; ok is false if the result does not fit in uint64.
func mulDivHalfUp(a, b, d uint64) (q uint64, ok bool) {
	hi, lo := bits.Mul64(a, b)
	// Adding d/2 before the floor division rounds .5 up. The 128-bit sum
	// cannot wrap: a × b ≤ (2^64-1)^2 leaves room for one more uint64.
	lo, carry := bits.Add64(lo, d/2, 0)
	hi += carry
	// bits.Div64 panics when the quotient would not fit; that is exactly
	// hi ≥ d.
	if hi >= d {
		return 0, false
	}
	q, _ = bits.Div64(hi, lo, d)
	return q, true
}

// Totals are the sums of an invoice's lines, in minor units.
type Totals struct {
	Subtotal, Tax, Total int64
}

// AmountRangeError reports the line whose addition first took an invoice
// sum out of 0..MaxAmountMinor. It wraps ErrAmountOutOfRange.
type AmountRangeError struct {
	// Index is the 0-based index of the line in the request.
	Index int
	// Field is the invoice field that went out of range: "subtotal_minor",
	// "tax_minor" or "total_minor".
	Field string
}

// Error names the line as a JSON path (lines[i]), as a client sent it.
func (e *AmountRangeError) Error() string {
	return fmt.Sprintf("%v: %s would exceed %d at lines[%d]", ErrAmountOutOfRange, e.Field, MaxAmountMinor, e.Index)
}

// Unwrap returns ErrAmountOutOfRange.
func (e *AmountRangeError) Unwrap() error { return ErrAmountOutOfRange }

// SumLines sums the lines: subtotal = Σ net, tax = Σ tax, total = Σ total.
// When a running sum would leave 0..MaxAmountMinor it returns an
// *AmountRangeError naming the line and the first of subtotal, tax and
// total that did.
func SumLines(lines []LineAmounts) (Totals, error) {
	var t Totals
	for i, l := range lines {
		// Comparing against the room left, rather than adding first, keeps
		// the check exact even for amounts that did not come from
		// ComputeLine and would overflow int64.
		switch {
		case l.Net < 0 || l.Net > MaxAmountMinor-t.Subtotal:
			return Totals{}, &AmountRangeError{Index: i, Field: "subtotal_minor"}
		case l.Tax < 0 || l.Tax > MaxAmountMinor-t.Tax:
			return Totals{}, &AmountRangeError{Index: i, Field: "tax_minor"}
		case l.Total < 0 || l.Total > MaxAmountMinor-t.Total:
			return Totals{}, &AmountRangeError{Index: i, Field: "total_minor"}
		}
		t.Subtotal += l.Net
		t.Tax += l.Tax
		t.Total += l.Total
	}
	return t, nil
}

// SumInvoice totals computed lines by the one money rule of invoices with
// a VAT breakdown (docs/decisions.md): per category and rate (in the
// order they first appear), taxable = Σ net and
// tax = round_half_up(taxable × rate / 10000); the invoice's
// subtotal = Σ net, tax = Σ breakdown tax and total = subtotal + tax. The
// tax is computed on each group, not summed from the lines, so that every
// breakdown meets EN 16931's BR-CO-17 (its tax is its taxable amount times
// its rate, rounded) whatever the number of lines; a line's own
// tax_amount_minor stays round_half_up(net × rate / 10000). When a running
// sum would leave 0..MaxAmountMinor it returns an *AmountRangeError naming
// the first line whose addition did.
func SumInvoice(lines []InvoiceLine) (Totals, []TaxBreakdown, error) {
	out, idx := group(lines)
	var t Totals
	for i, l := range lines {
		b := &out[idx[i]]
		if l.NetAmountMinor < 0 || l.NetAmountMinor > MaxAmountMinor-t.Subtotal {
			return Totals{}, nil, &AmountRangeError{Index: i, Field: "subtotal_minor"}
		}
		t.Subtotal += l.NetAmountMinor
		b.TaxableAmountMinor += l.NetAmountMinor
		// taxable ≤ subtotal ≤ MaxAmountMinor and rate ≤ 10000: the
		// quotient fits, and a group's tax only grows with its taxable.
		tax, _ := mulDivHalfUp(uint64(b.TaxableAmountMinor), uint64(b.TaxRateBps), 10000)
		t.Tax += int64(tax) - b.TaxAmountMinor
		b.TaxAmountMinor = int64(tax)
		if t.Tax > MaxAmountMinor {
			return Totals{}, nil, &AmountRangeError{Index: i, Field: "tax_minor"}
		}
		if t.Tax > MaxAmountMinor-t.Subtotal {
			return Totals{}, nil, &AmountRangeError{Index: i, Field: "total_minor"}
		}
	}
	t.Total = t.Subtotal + t.Tax
	if out == nil {
		out = []TaxBreakdown{}
	}
	return t, out, nil
}
