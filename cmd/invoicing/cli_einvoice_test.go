package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/einvoice"
)

// TestEinvoiceValidate: valid files print "valid", a broken one its rule
// ids, and any failure exits 1 (not a usage error).
func TestEinvoiceValidate(t *testing.T) {
	d := einvoice.Document{
		Number: "INV-1", IssueDate: "2026-01-15", TypeCode: "380", Currency: "EUR",
		Seller: einvoice.Party{Name: "S", VATID: "DE123456789", Address: einvoice.Address{CountryCode: "DE"}},
		Buyer:  einvoice.Party{Name: "B", Address: einvoice.Address{CountryCode: "DE"}},
		Lines: []einvoice.Line{{ID: "1", Quantity: "1", UnitCode: "C62", NetAmount: 10000, ItemName: "Work",
			Price: 10000, VATCategory: "S", VATRateBps: 1900}},
		VATBreakdown: []einvoice.VATBreakdown{{TaxableAmount: 10000, TaxAmount: 1900, Category: "S", RateBps: 1900}},
		Totals:       einvoice.Totals{LineTotal: 10000, TaxExclusive: 10000, Tax: 1900, TaxInclusive: 11900, Payable: 11900},
	}
	ubl, err := einvoice.RenderUBL(d)
	if err != nil {
		t.Fatal(err)
	}
	cii, err := einvoice.RenderCII(d)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"ok.ubl.xml": ubl, "ok.cii.xml": cii,
		"payable.xml": bytes.Replace(ubl, []byte(">119.00</cbc:PayableAmount>"), []byte(">119.01</cbc:PayableAmount>"), 1),
		"order.xml":   []byte(`<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"/>`),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	path := func(n string) string { return filepath.Join(dir, n) }

	out, _, err := runCLI(noEnv, "einvoice", "validate", path("ok.ubl.xml"), path("ok.cii.xml"))
	if err != nil || out != path("ok.ubl.xml")+": valid (UBL)\n"+path("ok.cii.xml")+": valid (CII)\n" {
		t.Errorf("valid files: %q, %v", out, err)
	}
	out, _, err = runCLI(noEnv, "einvoice", "validate", path("ok.ubl.xml"), path("payable.xml"), path("order.xml"), path("missing.xml"))
	if !errors.Is(err, errInvalidEinvoice) || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "3 of 4") {
		t.Errorf("err = %v, want 3 of 4 files invalid (exit 1)", err)
	}
	for _, want := range []string{
		path("payable.xml") + ": [BR-CO-16] ",
		path("order.xml") + ": einvoice: not a UBL Invoice",
		path("missing.xml") + ": open ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
