package events

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func mustQuantity(t *testing.T, s string) Quantity {
	t.Helper()
	q, err := ParseQuantity(s)
	if err != nil {
		t.Fatalf("ParseQuantity(%q): %v", s, err)
	}
	return q
}

// Every expected value below is worked out by hand; the comment after a row
// shows the exact product before rounding.
func TestComputeLine(t *testing.T) {
	const bound = MaxAmountMinor
	tests := []struct {
		name     string
		quantity string
		unit     int64
		bps      int64
		want     LineAmounts
		wantErr  string // field named in the error; "" means success
	}{
		{"quantity one gives the unit amount", "1", 100, 0, LineAmounts{100, 0, 100}, ""},
		{"net half rounds up", "0.5", 1, 0, LineAmounts{1, 0, 1}, ""},                               // 0.5
		{"net 100.5 rounds up", "1.005", 100, 0, LineAmounts{101, 0, 101}, ""},                      // 100.5
		{"net just below half rounds down", "0.001", 499, 0, LineAmounts{0, 0, 0}, ""},              // 0.499
		{"net 0.5 from the smallest quantity rounds up", "0.001", 500, 0, LineAmounts{1, 0, 1}, ""}, // 0.5
		{"net just above half rounds up", "0.001", 501, 0, LineAmounts{1, 0, 1}, ""},                // 0.501
		{"net 1.499 rounds down", "0.001", 1499, 0, LineAmounts{1, 0, 1}, ""},                       // 1.499
		{"net 1.5 rounds up", "0.001", 1500, 0, LineAmounts{2, 0, 2}, ""},                           // 1.5
		{"net 2.5 rounds up, not to even", "0.001", 2500, 0, LineAmounts{3, 0, 3}, ""},              // 2.5
		{"net 4.5 rounds up", "1.5", 3, 0, LineAmounts{5, 0, 5}, ""},                                // 4.5
		{"net 0.4 rounds down", "0.1", 4, 0, LineAmounts{0, 0, 0}, ""},                              // 0.4
		{"net 0.999 rounds up", "0.333", 3, 0, LineAmounts{1, 0, 1}, ""},                            // 0.999
		{"fractional quantity and tax", "12.345", 678, 1900, LineAmounts{8370, 1590, 9960}, ""},     // 8369.91; 1590.3
		{"tax 199.8 at 2000 bps rounds up", "3", 333, 2000, LineAmounts{999, 200, 1199}, ""},        // 999; 199.8
		{"tax 1 bps of 10000 is 1", "1", 10000, 1, LineAmounts{10000, 1, 10001}, ""},                // 1
		{"tax 10000 bps doubles the net", "1", 10000, 10000, LineAmounts{10000, 10000, 20000}, ""},
		{"tax half rounds up", "1", 5000, 1, LineAmounts{5000, 1, 5001}, ""},              // 0.5
		{"tax just below half rounds down", "1", 4999, 1, LineAmounts{4999, 0, 4999}, ""}, // 0.4999
		{"tax 1.5 rounds up", "1", 15000, 1, LineAmounts{15000, 2, 15002}, ""},            // 1.5
		{"tax half of one minor unit rounds up", "1", 1, 5000, LineAmounts{1, 1, 2}, ""},  // 0.5
		{"tax at 10000 bps on one minor unit", "1", 1, 10000, LineAmounts{1, 1, 2}, ""},
		{"zero unit amount gives all zero", "1000", 0, 2500, LineAmounts{0, 0, 0}, ""},
		{"zero unit amount at the largest quantity", "999999999.999", 0, 10000, LineAmounts{0, 0, 0}, ""},
		{"largest integer quantity", "999999999", 1, 0, LineAmounts{999999999, 0, 999999999}, ""},
		{"smallest quantity times the largest unit", "0.001", bound, 0, LineAmounts{9007199254741, 0, 9007199254741}, ""}, // 9007199254740.991
		{"largest unit fits with quantity 1 and no tax", "1", bound, 0, LineAmounts{bound, 0, bound}, ""},
		{"largest unit with 1 bps tax overflows total", "1", bound, 1, LineAmounts{}, "total_amount_minor"}, // tax 900719925474
		{"largest quantity, last unit whose net fits", "999999999.999", 9007199, 0,
			LineAmounts{9007198999990993, 0, 9007198999990993}, ""}, // 9007198999990992.801
		{"largest quantity, first unit whose net overflows", "999999999.999", 9007200, 0, LineAmounts{}, "net_amount_minor"}, // 9007199999990992.8
		// net × 10000 here is ~4.5e19, past int64: the tax needs 128 bits too.
		{"largest quantity, last unit whose total fits at 10000 bps", "999999999.999", 4503599, 10000,
			LineAmounts{4503598999995496, 4503598999995496, 9007197999990992}, ""},
		{"largest quantity, first unit whose total overflows at 10000 bps", "999999999.999", 4503600, 10000, LineAmounts{}, "total_amount_minor"},
		{"product past 2^64 is an error, not a wrap", "999999999.999", bound, 0, LineAmounts{}, "net_amount_minor"},
		{"negative unit amount", "1", -1, 0, LineAmounts{}, "unit_amount_minor"},
		{"unit amount above the bound", "1", bound + 1, 0, LineAmounts{}, "unit_amount_minor"},
		{"negative tax rate", "1", 100, -1, LineAmounts{}, "tax_rate_bps"},
		{"tax rate above 10000 bps", "1", 100, 10001, LineAmounts{}, "tax_rate_bps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ComputeLine(mustQuantity(t, tt.quantity), tt.unit, tt.bps)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrAmountOutOfRange) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ComputeLine(%s, %d, %d) = %+v, %v; want ErrAmountOutOfRange naming %s",
						tt.quantity, tt.unit, tt.bps, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ComputeLine(%s, %d, %d) = %+v, %v; want %+v, nil", tt.quantity, tt.unit, tt.bps, got, err, tt.want)
			}
		})
	}
}

func TestParseQuantityAccepts(t *testing.T) {
	tests := []struct {
		in          string
		thousandths int64
		canonical   string
	}{
		{"1", 1000, "1"},
		{"0.001", 1, "0.001"},
		{"0.01", 10, "0.01"},
		{"0.010", 10, "0.01"},
		{"0.5", 500, "0.5"},
		{"0.500", 500, "0.5"},
		{"1.50", 1500, "1.5"},
		{"1.005", 1005, "1.005"},
		{"10", 10000, "10"},
		{"100.000", 100000, "100"},
		{"123456789.5", 123456789500, "123456789.5"},
		{"999999999", 999999999000, "999999999"},         // 9 integer digits
		{"999999999.999", 999999999999, "999999999.999"}, // 9 + 3 digits
		{"100000000.001", 100000000001, "100000000.001"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			q, err := ParseQuantity(tt.in)
			if err != nil {
				t.Fatalf("ParseQuantity(%q): %v", tt.in, err)
			}
			if got := q.Thousandths(); got != tt.thousandths {
				t.Errorf("Thousandths() = %d, want %d", got, tt.thousandths)
			}
			if got := q.String(); got != tt.canonical {
				t.Errorf("String() = %q, want %q", got, tt.canonical)
			}
		})
	}
}

func TestParseQuantityRejects(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"ten integer digits", "1000000000"},
		{"ten integer digits with fraction", "1000000000.5"},
		{"four fractional digits", "1.2345"},
		{"four fractional digits below one", "0.0001"},
		{"zero", "0"},
		{"zero with one fractional zero", "0.0"},
		{"zero with two fractional zeros", "0.00"},
		{"zero with three fractional zeros", "0.000"},
		{"zero with four fractional zeros", "0.0000"},
		{"leading zero", "01"},
		{"double zero", "00"},
		{"triple zero", "000"},
		{"leading zero before point", "00.5"},
		{"trailing point", "1."},
		{"leading point", ".5"},
		{"point alone", "."},
		{"two points", "1.2.3"},
		{"plus sign", "+1"},
		{"minus sign", "-1"},
		{"exponent", "1e3"},
		{"leading space", " 1"},
		{"trailing space", "1 "},
		{"comma decimal separator", "1,5"},
		{"digit group separator", "1_000"},
		{"hex", "0x1"},
		{"arabic-indic digit", "١"},
		{"fullwidth digit", "１"},
		{"NaN", "NaN"},
		{"infinity", "Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := ParseQuantity(tt.in)
			if !errors.Is(err, ErrInvalidQuantity) {
				t.Errorf("ParseQuantity(%q) = %v, %v; want ErrInvalidQuantity", tt.in, q, err)
			}
		})
	}
}

func repeatLine(n int, l LineAmounts) []LineAmounts {
	lines := make([]LineAmounts, n)
	for i := range lines {
		lines[i] = l
	}
	return lines
}

func TestSumLines(t *testing.T) {
	const bound = MaxAmountMinor
	// 100 lines (the per-invoice limit) summing to exactly the bound:
	// 99 × 90071992547409 + 90071992547500 = 9007199254740991.
	atMax := append(repeatLine(99, LineAmounts{90071992547409, 0, 90071992547409}),
		LineAmounts{90071992547500, 0, 90071992547500})
	overMax := append(repeatLine(99, LineAmounts{90071992547409, 0, 90071992547409}),
		LineAmounts{90071992547501, 0, 90071992547501})
	// Two lines of total 4.5e15 each, then one whose total lands on bound or
	// one past it while the subtotal stays far below.
	taxed := repeatLine(2, LineAmounts{4000000000000000, 500000000000000, 4500000000000000})
	tests := []struct {
		name    string
		lines   []LineAmounts
		want    Totals
		wantErr *AmountRangeError
	}{
		{"no lines sum to zero", nil, Totals{}, nil},
		{"sums each column", []LineAmounts{{100, 19, 119}, {1, 0, 1}, {50, 10, 60}}, Totals{151, 29, 180}, nil},
		{"one line at the bound", []LineAmounts{{bound, 0, bound}}, Totals{bound, 0, bound}, nil},
		{"100 lines summing to exactly the bound", atMax, Totals{bound, 0, bound}, nil},
		{"100 lines summing to one past the bound", overMax, Totals{}, &AmountRangeError{99, "subtotal_minor"}},
		{"total reaching the bound", append(taxed, LineAmounts{7199254740991, 0, 7199254740991}),
			Totals{8007199254740991, 1000000000000000, bound}, nil},
		{"total one past the bound while subtotal fits", append(taxed, LineAmounts{7199254740992, 0, 7199254740992}),
			Totals{}, &AmountRangeError{2, "total_minor"}},
		{"tax sum checked before total", []LineAmounts{{0, bound, bound}, {0, 1, 1}}, Totals{}, &AmountRangeError{1, "tax_minor"}},
		{"subtotal named first when all overflow", []LineAmounts{{bound, 0, bound}, {1, 1, 2}}, Totals{}, &AmountRangeError{1, "subtotal_minor"}},
		{"negative amount is out of range", []LineAmounts{{-1, 0, -1}}, Totals{}, &AmountRangeError{0, "subtotal_minor"}},
		{"int64 overflow is caught, not wrapped", []LineAmounts{{bound, 0, bound}, {math.MaxInt64, 0, 0}}, Totals{}, &AmountRangeError{1, "subtotal_minor"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := SumLines(tt.lines)
			if tt.wantErr == nil {
				if err != nil || got != tt.want {
					t.Errorf("SumLines = %+v, %v; want %+v, nil", got, err, tt.want)
				}
				return
			}
			var rangeErr *AmountRangeError
			if !errors.As(err, &rangeErr) || *rangeErr != *tt.wantErr || !errors.Is(err, ErrAmountOutOfRange) {
				t.Fatalf("SumLines error = %v; want %+v wrapping ErrAmountOutOfRange", err, tt.wantErr)
			}
		})
	}
}

func TestAmountRangeErrorMessageNamesLine(t *testing.T) {
	err := error(&AmountRangeError{Index: 99, Field: "subtotal_minor"})
	want := "amount out of range: subtotal_minor would exceed 9007199254740991 at lines[99]"
	if got := err.Error(); got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}
