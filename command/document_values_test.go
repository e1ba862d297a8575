package command

import "testing"

func TestValidIBANChecksTheShapeAndTheCheckDigits(t *testing.T) {
	for iban, want := range map[string]bool{
		"DE89370400440532013000":           true,
		"GB82WEST12345698765432":           true,
		"FR1420041010050500013M02606":      true,
		"NL91ABNA0417164300":               true,
		"DE88370400440532013000":           false, // check digits
		"DE89370400440532013001":           false, // a digit changed
		"de89370400440532013000":           false, // lowercase
		"DE89 3704 0044 0532 0130 00":      false, // spaces
		"DE8937040044":                     false, // too short
		"DE893704004405320130001234567890": false, // too long for its check digits
	} {
		if got := validIBAN(iban); got != want {
			t.Errorf("validIBAN(%q) = %v, want %v", iban, got, want)
		}
	}
}
