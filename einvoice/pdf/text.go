package pdf

import (
	"strings"
	"unicode"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/text/unicode/norm"

	"github.com/invoicing/invoicing/einvoice"
)

// replacement is drawn for a character the fonts lack: visible, so a reader
// sees that something was there, and present in the Go fonts (drawing a
// glyph a font lacks would reference .notdef, which PDF/A forbids).
const replacement = '\uFFFD'

// coverage is the set of runes every font of the renderer can draw. fpdf
// indexes its width table by rune and has only the Basic Multilingual
// Plane's 65536 entries, so a rune beyond U+FFFF is never covered.
type coverage [0x10000 / 64]uint64

func (c *coverage) has(r rune) bool {
	return r >= 0 && r < 0x10000 && c[r/64]&(1<<(uint(r)%64)) != 0
}

// newCoverage is the intersection of the cmaps of fonts (TrueType bytes).
func newCoverage(fonts ...[]byte) (*coverage, error) {
	var c coverage
	for i := range c {
		c[i] = ^uint64(0)
	}
	var buf sfnt.Buffer
	for _, data := range fonts {
		f, err := sfnt.Parse(data)
		if err != nil {
			return nil, err
		}
		for r := rune(0); r < 0x10000; r++ {
			if g, err := f.GlyphIndex(&buf, r); err != nil || g == 0 {
				c[r/64] &^= 1 << (uint(r) % 64)
			}
		}
	}
	return &c, nil
}

// clean makes s drawable on one line: NFC (fpdf places no combining marks,
// so "e" + U+0301 must become "é"), tabs and line breaks become spaces,
// other control characters go, and runes the fonts lack become the
// replacement character.
func (c *coverage) clean(s string) string {
	return c.cleanKeep(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}

// cleanLines is clean for multi-line text: one string per line of s.
func (c *coverage) cleanLines(s string) []string {
	s = strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = c.cleanKeep(l)
	}
	return lines
}

func (c *coverage) cleanKeep(s string) string {
	s = norm.NFC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == '\t' || r == '\n':
			b.WriteByte(' ')
		case unicode.IsControl(r) || r == '\uFEFF':
		case c.has(r):
			b.WriteRune(r)
		default:
			b.WriteRune(replacement)
		}
	}
	return b.String()
}

// money writes minor units of currency with the currency's exponent and
// thousands separators: 123456 EUR is "1,234.56". A currency outside the
// ISO 4217 table is an error, as it is for the XML.
func money(minor int64, currency string) (string, error) {
	exp, ok := einvoice.CurrencyExponent(currency)
	if !ok {
		return "", &einvoice.CurrencyError{Currency: currency}
	}
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = -u
	}
	digits := []byte(formatUint(u))
	for len(digits) <= exp {
		digits = append([]byte{'0'}, digits...)
	}
	intPart, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	out := group(intPart)
	if exp > 0 {
		out += "." + string(frac)
	}
	if neg {
		out = "-" + out
	}
	return out, nil
}

func formatUint(u uint64) string {
	if u == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for u > 0 {
		i--
		b[i] = byte('0' + u%10)
		u /= 10
	}
	return string(b[i:])
}

// group puts a comma between each group of three digits.
func group(digits []byte) string {
	var b strings.Builder
	for i, d := range digits {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(d)
	}
	return b.String()
}

// rate writes basis points as a percentage without trailing zeros:
// 1900 is "19%", 550 is "5.5%", 0 is "0%".
func rate(bps int64) string {
	s := einvoice.FormatRate(bps)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s + "%"
}

// unitNames are the UN/ECE Rec 20/21 codes an invoice most often carries,
// by the short name a reader expects; other codes are shown as they are.
var unitNames = map[string]string{
	"C62": "unit", "H87": "piece", "EA": "each", "XPP": "piece", "HUR": "hour",
	"MIN": "min", "DAY": "day", "WEE": "week", "MON": "month", "ANN": "year",
	"KGM": "kg", "GRM": "g", "TNE": "t", "MTR": "m", "KMT": "km", "MTK": "m²",
	"MTQ": "m³", "LTR": "l", "KWH": "kWh", "E48": "service", "LS": "lump sum",
	"SET": "set", "PR": "pair", "XBX": "box", "XPK": "pack",
}

// unit is the printed unit of a Rec 20/21 code.
func unit(code string) string {
	if n, ok := unitNames[code]; ok {
		return n
	}
	return code
}

// categoryNames are the VAT categories (UNTDID 5305) in words.
var categoryNames = map[string]string{
	einvoice.CategoryStandard:       "Standard rate",
	einvoice.CategoryZero:           "Zero rated",
	einvoice.CategoryExempt:         "Exempt from VAT",
	einvoice.CategoryReverseCharge:  "Reverse charge",
	einvoice.CategoryIntraCommunity: "Intra-community supply",
	einvoice.CategoryExport:         "Export outside the EU",
	einvoice.CategoryNotSubject:     "Not subject to VAT",
	einvoice.CategoryCanaryIslands:  "Canary Islands IGIC",
	einvoice.CategoryCeutaMelilla:   "Ceuta and Melilla IPSI",
}

func categoryName(code string) string {
	if n, ok := categoryNames[code]; ok {
		return n
	}
	return code
}
