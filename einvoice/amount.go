package einvoice

import (
	"fmt"
	"strconv"
	"strings"
)

// CurrencyError is why an amount cannot be written: the currency is not in
// EN 16931's list, has no minor unit, or has more decimals than MaxDecimals.
type CurrencyError struct{ Currency string }

func (e *CurrencyError) Error() string {
	return fmt.Sprintf("einvoice: currency %q cannot be written in EN 16931 (unknown, or more than %d decimals)", e.Currency, MaxDecimals)
}

// FormatAmount writes minor units of currency as a decimal with the
// currency's exponent: 123456 EUR is "1234.56", 1234 JPY is "1234". Integer
// arithmetic only.
func FormatAmount(minor int64, currency string) (string, error) {
	exp, ok := CurrencyExponent(currency)
	if !ok || exp > MaxDecimals {
		return "", &CurrencyError{Currency: currency}
	}
	return formatScaled(minor, exp), nil
}

// FormatRate writes a rate in basis points as a percentage with two
// decimals: 1900 is "19.00", 550 is "5.50".
func FormatRate(bps int64) string { return formatScaled(bps, 2) }

// formatScaled writes v / 10^exp exactly, with exp decimals.
func formatScaled(v int64, exp int) string {
	neg := v < 0
	u := uint64(v)
	if neg {
		u = -u // two's complement: exact even for math.MinInt64
	}
	digits := strconv.FormatUint(u, 10)
	if exp > 0 {
		if len(digits) <= exp {
			digits = strings.Repeat("0", exp-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-exp] + "." + digits[len(digits)-exp:]
	}
	if neg {
		return "-" + digits
	}
	return digits
}
