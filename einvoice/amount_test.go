package einvoice

import (
	"errors"
	"math"
	"testing"
)

func TestFormatAmount(t *testing.T) {
	for _, tc := range []struct {
		minor    int64
		currency string
		want     string
	}{
		{0, "EUR", "0.00"},
		{5, "EUR", "0.05"},
		{123456, "EUR", "1234.56"},
		{-5, "EUR", "-0.05"},
		{9007199254740991, "EUR", "90071992547409.91"},
		{9007199254740991, "JPY", "9007199254740991"},
		{1234, "JPY", "1234"},
		{math.MinInt64, "JPY", "-9223372036854775808"},
	} {
		got, err := FormatAmount(tc.minor, tc.currency)
		if err != nil || got != tc.want {
			t.Errorf("FormatAmount(%d, %s) = %q, %v; want %q", tc.minor, tc.currency, got, err, tc.want)
		}
	}
	for _, c := range []string{"BHD", "CLF", "XAU", "ABC", ""} {
		var ce *CurrencyError
		if _, err := FormatAmount(1, c); !errors.As(err, &ce) {
			t.Errorf("FormatAmount(1, %q) error = %v, want *CurrencyError", c, err)
		}
	}
	if got := FormatRate(1900); got != "19.00" {
		t.Errorf("FormatRate(1900) = %q", got)
	}
	if got := FormatRate(550); got != "5.50" {
		t.Errorf("FormatRate(550) = %q", got)
	}
}
