package einvoice

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// update rewrites the golden documents from what the renderers make:
//
//	go test ./einvoice -run TestGolden -update
//
// Review the diff of testdata/ before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.xml from the rendered documents")

// tricky is text every renderer must carry exactly: markup characters,
// non-Latin scripts, a character beyond U+FFFF, tabs, line feeds and a
// carriage return.
const tricky = "Fish & Chips <\"special\"> 'offer'\nЗаказ №5 · 注文 · طلب · 🧾\r\nTab\there"

// escaping puts tricky text into every kind of text field.
func escaping() Document {
	d := full()
	d.Seller.Name = "Müller & Söhne <GmbH> \"Ω\""
	d.Buyer.Name = "株式会社 'テスト'"
	d.Buyer.Address.Line1 = "ул. Ленина, д. 1 & 2"
	d.Notes = []string{tricky}
	d.PaymentTerms = tricky
	d.BuyerReference = "<ref & 'ref'>"
	d.Lines[0].ItemName = tricky
	d.Lines[0].Note = "line\nnote"
	return d
}

// jpy is a zero-decimal currency invoice with a fractional quantity.
func jpy() Document {
	return build(Document{
		Number: "JP-1", IssueDate: "2026-03-01", Currency: "JPY",
		Seller: Party{Name: "S", VATID: "DE123456789", Address: Address{CountryCode: "DE"}},
		Buyer:  Party{Name: "B", Address: Address{CountryCode: "JP"}},
	}, lineSpec{"1.5", 1001, "S", 1000}, lineSpec{"3", 333, "Z", 0})
}

func TestGolden(t *testing.T) {
	for name, d := range map[string]Document{"minimal": minimal(), "full": full(), "escaping": escaping(), "jpy": jpy(),
		"credit-note": creditNote(full()), "paid": paid(full(), 5000)} {
		for _, syntax := range []string{"ubl", "cii"} {
			got := render(t, d, syntax)
			path := filepath.Join("testdata", name+"."+syntax+".xml")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				continue
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test ./einvoice -run TestGolden -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs from the rendering; if the change is meant, run with -update and review the diff", path)
			}
		}
	}
}

// TestRenderingIsByteStable: a rendering is a pure function of the
// Document.
func TestRenderingIsByteStable(t *testing.T) {
	for _, syntax := range []string{"ubl", "cii"} {
		a, b := render(t, escaping(), syntax), render(t, escaping(), syntax)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: two renderings differ", syntax)
		}
	}
}

// TestEscapingRoundTrips: an XML parser reads back exactly the text that
// went in, carriage returns included.
func TestEscapingRoundTrips(t *testing.T) {
	d := escaping()
	for _, syntax := range []string{"ubl", "cii"} {
		texts := map[string]bool{}
		dec := xml.NewDecoder(bytes.NewReader(render(t, d, syntax)))
		for {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			if cd, ok := tok.(xml.CharData); ok {
				texts[string(cd)] = true
			}
		}
		for _, want := range []string{tricky, d.Seller.Name, d.Buyer.Name, d.Buyer.Address.Line1, d.BuyerReference, "line\nnote"} {
			if !texts[want] {
				t.Errorf("%s: %q does not read back", syntax, want)
			}
		}
	}
}

func TestRenderRefusesWhatCannotBeWritten(t *testing.T) {
	bhd := full()
	bhd.Currency = "BHD"
	nonChar := full()
	nonChar.Notes = []string{"a\uFFFFb"}
	badUTF8 := full()
	badUTF8.Lines[0].ItemName = "a\xffb"
	for _, r := range []func(Document) ([]byte, error){RenderUBL, RenderCII} {
		var ce *CurrencyError
		if _, err := r(bhd); !errors.As(err, &ce) {
			t.Errorf("BHD: err = %v, want *CurrencyError", err)
		}
		for _, d := range []Document{nonChar, badUTF8} {
			if _, err := r(d); !errors.Is(err, ErrNotXMLText) {
				t.Errorf("err = %v, want ErrNotXMLText", err)
			}
		}
	}
	ok := full()
	ok.Notes = []string{"a\uFFFDb"} // the replacement character itself is fine
	if _, err := RenderUBL(ok); err != nil {
		t.Errorf("U+FFFD: %v", err)
	}
}

// TestAmountsUseTheCurrencyExponent: no float formatting anywhere.
func TestAmountsUseTheCurrencyExponent(t *testing.T) {
	u := string(render(t, jpy(), "ubl"))
	for _, want := range []string{`<cbc:PriceAmount currencyID="JPY">1001</cbc:PriceAmount>`, `<cbc:InvoicedQuantity unitCode="C62">1.5</cbc:InvoicedQuantity>`,
		`<cbc:LineExtensionAmount currencyID="JPY">1502</cbc:LineExtensionAmount>`, `<cbc:Percent>10.00</cbc:Percent>`} {
		if !strings.Contains(u, want) {
			t.Errorf("JPY UBL lacks %s", want)
		}
	}
}

func BenchmarkRenderUBL(b *testing.B) { benchmarkRender(b, RenderUBL) }
func BenchmarkRenderCII(b *testing.B) { benchmarkRender(b, RenderCII) }

// benchmarkRender renders a ten-line invoice with every optional term;
// ns/op is the time per document.
func benchmarkRender(b *testing.B, r func(Document) ([]byte, error)) {
	specs := make([]lineSpec, 10)
	for i := range specs {
		specs[i] = lineSpec{"2.5", int64(1000 + i), "S", 1900}
	}
	d := withLines(full(), specs...)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r(d); err != nil {
			b.Fatal(err)
		}
	}
}
