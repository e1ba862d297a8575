package events

import (
	"errors"
	"math/big"
	"regexp"
	"testing"
)

// The spec pattern is ^(?!0(?:\.0{1,3})?$)(?:0|[1-9]\d{0,8})(?:\.\d{1,3})?$.
// Go's regexp has no lookahead, so the negative lookahead becomes a second
// pattern that must not match. Go's \d is ASCII-only, as the spec means.
var (
	specQuantity = regexp.MustCompile(`^(?:0|[1-9]\d{0,8})(?:\.\d{1,3})?$`)
	specZero     = regexp.MustCompile(`^0(?:\.0{1,3})?$`)
)

func FuzzParseQuantity(f *testing.F) {
	for _, s := range []string{
		"1", "0.001", "1.50", "999999999.999", "1000000000", "1.2345",
		"0", "0.000", "01", "1.", ".5", "+1", "-1", "1e3", " 1", "", "١", "000",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		q, err := ParseQuantity(s)
		wantOK := specQuantity.MatchString(s) && !specZero.MatchString(s)
		if (err == nil) != wantOK {
			t.Fatalf("ParseQuantity(%q) error = %v; spec accepts: %v", s, err, wantOK)
		}
		if err != nil {
			return
		}
		// Reference: the exact rational value of s, times 1000.
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			t.Fatalf("big.Rat rejects %q", s)
		}
		r.Mul(r, big.NewRat(1000, 1))
		if !r.IsInt() || r.Num().Cmp(big.NewInt(q.Thousandths())) != 0 {
			t.Fatalf("ParseQuantity(%q).Thousandths() = %d, want %s", s, q.Thousandths(), r.RatString())
		}
		// The canonical form names the same value and is itself valid.
		back, err := ParseQuantity(q.String())
		if err != nil || back != q {
			t.Fatalf("ParseQuantity(%q.String() = %q) = %v, %v; want %v", s, q.String(), back, err, q)
		}
	})
}

// roundHalfUp returns floor(r + 1/2), which rounds .5 away from zero for
// the non-negative values it is given.
func roundHalfUp(r *big.Rat) *big.Int {
	x := new(big.Rat).Add(r, big.NewRat(1, 2))
	// Quo on a non-negative numerator and positive denominator floors.
	return new(big.Int).Quo(x.Num(), x.Denom())
}

// referenceLine computes DESIGN §4 in exact rationals; ok is false when the
// inputs or any amount leave their ranges.
func referenceLine(quantity string, unit, bps int64) (want LineAmounts, ok bool) {
	if unit < 0 || unit > MaxAmountMinor || bps < 0 || bps > 10000 {
		return LineAmounts{}, false
	}
	q, _ := new(big.Rat).SetString(quantity)
	net := roundHalfUp(new(big.Rat).Mul(q, new(big.Rat).SetInt64(unit)))
	taxRat := new(big.Rat).SetFrac(new(big.Int).Mul(net, big.NewInt(bps)), big.NewInt(10000))
	tax := roundHalfUp(taxRat)
	total := new(big.Int).Add(net, tax)
	limit := big.NewInt(MaxAmountMinor)
	for _, v := range []*big.Int{net, tax, total} {
		if v.Cmp(limit) > 0 {
			return LineAmounts{}, false
		}
	}
	return LineAmounts{Net: net.Int64(), Tax: tax.Int64(), Total: total.Int64()}, true
}

func FuzzComputeLine(f *testing.F) {
	f.Add("1", int64(100), int64(0))
	f.Add("0.5", int64(1), int64(0))
	f.Add("1.005", int64(100), int64(1900))
	f.Add("0.001", int64(500), int64(1))
	f.Add("1", int64(5000), int64(1))
	f.Add("1", MaxAmountMinor, int64(0))
	f.Add("1", MaxAmountMinor, int64(1))
	f.Add("999999999.999", int64(9007199), int64(0))
	f.Add("999999999.999", int64(9007200), int64(0))
	f.Add("999999999.999", int64(4503599), int64(10000))
	f.Add("999999999.999", MaxAmountMinor, int64(10000))
	f.Add("12.345", int64(-1), int64(10001))
	f.Fuzz(func(t *testing.T, quantity string, unit, bps int64) {
		q, err := ParseQuantity(quantity)
		if err != nil {
			return // FuzzParseQuantity covers the parser.
		}
		got, err := ComputeLine(q, unit, bps)
		want, wantOK := referenceLine(quantity, unit, bps)
		if (err == nil) != wantOK {
			t.Fatalf("ComputeLine(%s, %d, %d) = %+v, %v; reference ok: %v %+v", quantity, unit, bps, got, err, wantOK, want)
		}
		if err != nil && !errors.Is(err, ErrAmountOutOfRange) {
			t.Fatalf("ComputeLine(%s, %d, %d) error %v does not wrap ErrAmountOutOfRange", quantity, unit, bps, err)
		}
		if got != want {
			t.Fatalf("ComputeLine(%s, %d, %d) = %+v, want %+v", quantity, unit, bps, got, want)
		}
	})
}
