package einvoice

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// matrixCase is one hand-built invoice of the acceptance matrix. nearCap
// marks amounts near the API's cap (2^53-1 minor units): CEN's CII
// artefact adds amounts in floating point (upstream eInvoicing-EN16931
// #277, #279, #435), so those may fail there although correct.
type matrixCase struct {
	name    string
	doc     Document
	nearCap bool
}

// spanish is a seller in the Canary Islands or Ceuta and Melilla (IGIC,
// IPSI).
func spanish(d Document) Document {
	d.Seller.VATID, d.Seller.TaxRegistration = "ESB12345678", ""
	d.Seller.Address = Address{Line1: "Calle Mayor 1", City: "Las Palmas", PostalCode: "35001", CountryCode: "ES"}
	return d
}

// notSubject is a seller outside the scope of VAT: no VAT identifiers on
// either side, the legal registration identifies the seller (BR-CO-26).
func notSubject(d Document) Document {
	d.Seller.VATID, d.Seller.TaxRegistration, d.Buyer.VATID = "", "", ""
	return d
}

// exporter sells outside the EU.
func exporter(d Document) Document {
	d.Buyer.VATID, d.Buyer.LegalRegistration = "", nil
	d.Buyer.Address = Address{Line1: "1 Main St", City: "Springfield", PostalCode: "12345", Subdivision: "IL", CountryCode: "US"}
	return d
}

func matrix() []matrixCase {
	one := func(cat string, rate int64) Document { return withLines(full(), lineSpec{"1", 12345, cat, rate}) }
	largest := events.MaxAmountMinor
	netS := largest / 11900 * 10000 // net + 19 % VAT stays within the cap
	cases := []matrixCase{
		{name: "cat-S", doc: one("S", 1900)},
		{name: "cat-Z", doc: one("Z", 0)},
		{name: "cat-E", doc: one("E", 0)},
		{name: "cat-AE", doc: one("AE", 0)},
		{name: "cat-K", doc: one("K", 0)},
		{name: "cat-G", doc: exporter(one("G", 0))},
		{name: "cat-O", doc: notSubject(one("O", 0))},
		{name: "cat-L", doc: spanish(one("L", 700))},
		{name: "cat-M", doc: spanish(one("M", 400))},
		{name: "mixed", doc: withLines(full(), lineSpec{"1", 10000, "S", 1900}, lineSpec{"2", 2550, "S", 700}, lineSpec{"1", 999, "Z", 0},
			lineSpec{"3", 1000, "E", 0}, lineSpec{"1", 5000, "AE", 0}, lineSpec{"0.5", 3333, "K", 0}, lineSpec{"1", 100, "S", 1900})},
		{name: "canary-mixed", doc: spanish(withLines(full(), lineSpec{"1", 10000, "L", 700}, lineSpec{"1", 10000, "L", 300}, lineSpec{"2", 333, "M", 400}))},
		{name: "jpy", doc: jpy()},
		{name: "gbp", doc: func() Document { d := one("S", 2000); d.Currency = "GBP"; return d }()},
		{name: "fractional", doc: withLines(full(), lineSpec{"0.001", 99999, "S", 1900}, lineSpec{"2.333", 333, "S", 700},
			lineSpec{"999999999.999", 1, "Z", 0}, lineSpec{"1.5", 1, "S", 1900})},
		{name: "one-line", doc: minimal()},
		{name: "hundred-lines", doc: hundredLines()},
		{name: "all-optional", doc: full()},
		{name: "no-optional", doc: minimal()},
		{name: "text", doc: escaping()},
		{name: "max-eur-z", doc: withLines(full(), lineSpec{"1", largest, "Z", 0}), nearCap: true},
		{name: "max-eur-s", doc: withLines(full(), lineSpec{"1", netS, "S", 1900}), nearCap: true},
		{name: "max-eur-two-lines", doc: withLines(full(), lineSpec{"1", largest / 2, "Z", 0}, lineSpec{"1", largest - largest/2, "Z", 0}), nearCap: true},
		{name: "max-eur-mixed", doc: withLines(full(), lineSpec{"1", netS / 2, "S", 1900}, lineSpec{"1", netS/2 - 3, "S", 700},
			lineSpec{"1", 1234567, "Z", 0}), nearCap: true},
		// Three lines near the cap with cents: CEN's CII artefact sums the
		// line amounts as doubles (BR-CO-10) and misses by a cent.
		{name: "max-eur-three-lines", doc: withLines(full(), lineSpec{"1", largest/2 - 2, "Z", 0}, lineSpec{"1", largest/2 - 6, "Z", 0},
			lineSpec{"1", 5, "Z", 0}), nearCap: true},
		{name: "max-jpy-z", doc: func() Document { d := withLines(full(), lineSpec{"1", largest, "Z", 0}); d.Currency = "JPY"; return d }(), nearCap: true},
		{name: "max-jpy-s", doc: func() Document { d := withLines(full(), lineSpec{"1", netS, "S", 1900}); d.Currency = "JPY"; return d }(), nearCap: true},
		// Credit notes (type 381, BG-3) and invoices with payments (BT-113).
		{name: "credit-note-S", doc: creditNote(one("S", 1900))},
		{name: "credit-note-minimal", doc: creditNote(minimal())},
		{name: "credit-note-mixed", doc: creditNote(withLines(full(), lineSpec{"1", 10000, "S", 1900}, lineSpec{"2", 2550, "S", 700},
			lineSpec{"3", 1000, "E", 0}, lineSpec{"1", 5000, "AE", 0}, lineSpec{"0.5", 3333, "K", 0}, lineSpec{"1", 999, "Z", 0}))},
		{name: "credit-note-remainder", doc: remainder()},
		{name: "credit-note-not-subject", doc: creditNote(notSubject(one("O", 0)))},
		{name: "credit-note-jpy", doc: creditNote(jpy())},
		{name: "paid-part", doc: paid(full(), 5000)},
		{name: "paid-full", doc: func() Document { d := full(); return paid(d, d.Totals.TaxInclusive) }()},
		{name: "paid-mixed-jpy", doc: paid(jpy(), 1)},
	}
	return cases
}

func hundredLines() Document {
	specs := make([]lineSpec, 100)
	for i := range specs {
		cat, rate := "S", int64(1900)
		switch i % 4 {
		case 1:
			rate = 700
		case 2:
			cat, rate = "Z", 0
		}
		specs[i] = lineSpec{fmt.Sprintf("%d.%d", i%7+1, i%10), int64(1000 + 37*i), cat, rate}
	}
	return withLines(full(), specs...)
}

// TestMatrixPassesCheckAndValidate: every matrix document is one Check
// accepts and Validate finds valid in both syntaxes (no CEN needed).
func TestMatrixPassesCheckAndValidate(t *testing.T) {
	for _, c := range matrix() {
		if p := Check(c.doc); len(p) != 0 {
			t.Errorf("%s: Check = %v", c.name, p)
		}
		for _, syntax := range []string{"ubl", "cii"} {
			r, err := Validate(bytes.NewReader(render(t, c.doc, syntax)))
			if err != nil || len(r.Problems) != 0 {
				t.Errorf("%s %s: Validate = %v, %v", c.name, syntax, r.Problems, err)
			}
		}
	}
}

// TestMatrixPassesCEN runs CEN's check (XML Schema and Schematron) over
// the whole matrix in both syntaxes in one call. UBL must pass everywhere,
// CII everywhere but near the cap, where CEN's floating point arithmetic
// is logged, not failed.
func TestMatrixPassesCEN(t *testing.T) {
	cenValidator(t)
	docs := map[string][]byte{}
	var names []string
	nearCap := map[string]bool{}
	for _, c := range matrix() {
		for _, syntax := range []string{"ubl", "cii"} {
			n := c.name + "." + syntax + ".xml"
			docs[n], nearCap[n] = render(t, c.doc, syntax), c.nearCap && syntax == "cii"
			names = append(names, n)
		}
	}
	paths := writeFiles(t, t.TempDir(), names, docs)
	results := runCEN(t, paths)
	for i, n := range names {
		r := results[paths[i]]
		switch {
		case r.pass && nearCap[n]:
			t.Logf("%s: passes CEN's CII check", n)
		case r.pass:
		case nearCap[n]:
			t.Logf("%s: known upstream CII floating point issue (eInvoicing-EN16931 #277/#279/#435): %s", n, r.line)
		default:
			t.Errorf("%s: %s", n, r.line)
		}
	}
}
