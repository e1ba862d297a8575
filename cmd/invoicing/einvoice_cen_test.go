package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22, acceptance: a matrix of issued invoices, each rendered through
// the API in UBL and CII, passes CEN's EN 16931 check (XML Schema and
// Schematron) in one call of the runner EN16931_VALIDATOR names.

// matrixCase is one invoice of the matrix: who bills whom, and the
// request's fields over billing.invoiceBody's defaults. bigCII marks an
// invoice whose amounts are near the API's cap: CEN's CII artefact adds
// amounts in floating point (upstream eInvoicing-EN16931 #277, #279,
// #435), so its CII check may fail although the amounts are exact; the
// UBL one must pass.
type matrixCase struct {
	name   string
	b      billing
	fields map[string]any
	bigCII bool
}

func cenRunner(t *testing.T) string {
	t.Helper()
	v := os.Getenv("EN16931_VALIDATOR")
	if v == "" {
		t.Skip("EN16931_VALIDATOR is not set: the CEN EN 16931 check (validate.sh FILE...) is not run; .ci/run sets it")
	}
	return v
}

func mline(desc, qty string, unit int64, rate int, category string) map[string]any {
	l := map[string]any{"description": desc, "quantity": qty, "unit_amount_minor": unit, "tax_rate_bps": rate}
	if category != "" {
		l["tax_category"] = category
	}
	return l
}

func exemption(category, reason, code string) []any {
	x := map[string]any{"tax_category": category}
	if reason != "" {
		x["reason"] = reason
	}
	if code != "" {
		x["reason_code"] = code
	}
	return []any{x}
}

// matrixParties creates the companies and customers the matrix bills
// between: a VAT-registered seller with every optional field, one with a
// legal registration only (not subject to VAT), and buyers with and
// without a VAT identifier.
func matrixParties(t *testing.T, s *service) (full, minimal, notSubject, eu billing) {
	tok := token(t, "cen-matrix")
	co := func(key, body string) string { return s.createCompany(t, tok, key, body)["id"].(string) }
	cu := func(companyID, key, body string) string {
		return s.createCustomer(t, tok, companyID, key, body)["id"].(string)
	}
	fullCo := co("cen-co-full", `{"legal_name":"Acme <&> \"Söhne\" GmbH","trading_name":"Acme's","address":{"line_1":"Hauptstr. 1",
		"line_2":"Hinterhaus","city":"Berlin","postal_code":"10115","region":"BE","country_code":"DE"},"default_currency":"EUR",
		"email":"billing@acme.example","identifiers":[{"scheme":"vat","value":"DE123456789"},{"scheme":"tax","value":"12/345/67890"},
		{"scheme":"legal","value":"HRB 12345"},{"scheme":"gln","value":"4000001000005"}],"bank_account":`+bankAccount+`,
		"electronic_address":`+eaddrCompany+`}`)
	euCu := cu(fullCo, "cen-cu-eu", `{"name":"Société Générale d'Études & Cie","address":{"line_1":"1 rue de la Paix","city":"Paris",
		"postal_code":"75002","country_code":"FR"},"email":"ap@sgec.example","identifiers":[{"scheme":"vat","value":"FR12345678901"},
		{"scheme":"siren","value":"123456789"}],"electronic_address":{"scheme":"0009","value":"12345678900012"}}`)
	plainCu := cu(fullCo, "cen-cu-plain", `{"name":"東京商事株式会社","address":{"line_1":"丸の内1-1","city":"東京","postal_code":"100-0005","country_code":"JP"}}`)
	minCo := co("cen-co-min", `{"legal_name":"Βήτα Α.Ε.","address":{"line_1":"Οδός 1","city":"Αθήνα","postal_code":"10431","country_code":"GR"},
		"default_currency":"EUR","identifiers":[{"scheme":"vat","value":"EL123456789"}]}`)
	minCu := cu(minCo, "cen-cu-min", minimalCustomer)
	oCo := co("cen-co-o", `{"legal_name":"Verein e.V.","address":{"line_1":"Am Markt 2","city":"Köln","postal_code":"50667","country_code":"DE"},
		"default_currency":"EUR","identifiers":[{"scheme":"legal","value":"VR 4711"}]}`)
	oCu := cu(oCo, "cen-cu-o", minimalCustomer)
	return billing{s: s, tok: tok, companyID: fullCo, customerID: plainCu}, billing{s: s, tok: tok, companyID: minCo, customerID: minCu},
		billing{s: s, tok: tok, companyID: oCo, customerID: oCu}, billing{s: s, tok: tok, companyID: fullCo, customerID: euCu}
}

func matrixCases(full, minimal, notSubject, eu billing) []matrixCase {
	std := []any{mline("Consulting", "1", 10000, 1900, "")}
	var hundred []any
	for i := range 100 {
		hundred = append(hundred, mline(fmt.Sprintf("Item %d", i+1), "1.5", int64(999+i), []int{1900, 700, 0}[i%3], ""))
	}
	everything := map[string]any{"due_date": "2025-02-14", "currency": "EUR", "language": "de",
		"purchase_order_reference": "PO-<&>-1", "external_reference": "erp-7", "notes": "Thank you.\nLine two\r\nand 'three' & \"four\"",
		"terms": "Net 30 days\n2 % Skonto", "buyer_reference": "04011000-12345-34", "delivery_date": "2025-01-10",
		"delivery_address": map[string]any{"line_1": "Dock 4", "line_2": "Tor B", "city": "Hamburg", "postal_code": "20457", "region": "HH", "country_code": "DE"},
		"billing_period":   map[string]any{"start": "2025-01-01", "end": "2025-01-31"},
		"lines": []any{mline("Beratung <&> \"Analyse\"\nzweite Zeile", "2.5", 12000, 1900, "S"), mline("Bücher", "3", 1999, 700, "S"),
			map[string]any{"description": "Hours", "quantity": "7.25", "unit": "h", "unit_code": "HUR", "unit_amount_minor": 8000, "tax_rate_bps": 1900}}}
	return []matrixCase{
		{"S, one line, no optional field", minimal, map[string]any{"lines": std}, false},
		{"every optional field", eu, everything, false},
		{"Z", full, map[string]any{"lines": []any{mline("Zero rated", "1", 5000, 0, "Z")}}, false},
		{"Z by default", full, map[string]any{"lines": []any{mline("Zero", "1", 5000, 0, "")}}, false},
		{"E", full, map[string]any{"lines": []any{mline("Exempt", "1", 5000, 0, "E")},
			"tax_exemptions": exemption("E", "Exempt under Art. 132", "VATEX-EU-132")}, false},
		{"AE", eu, map[string]any{"lines": []any{mline("Reverse", "1", 5000, 0, "AE")}, "tax_exemptions": exemption("AE", "Reverse charge", "VATEX-EU-AE")}, false},
		{"K", eu, map[string]any{"lines": []any{mline("Supply", "2", 5000, 0, "K")}, "tax_exemptions": exemption("K", "", "VATEX-EU-IC"),
			"delivery_date": "2025-01-12", "delivery_address": map[string]any{"line_1": "Quai 1", "city": "Lyon", "postal_code": "69001", "country_code": "FR"}}, false},
		{"K with a billing period", eu, map[string]any{"lines": []any{mline("Supply", "2", 5000, 0, "K")}, "tax_exemptions": exemption("K", "Intra-community supply", ""),
			"billing_period": map[string]any{"end": "2025-01-31"}, "delivery_address": map[string]any{"line_1": "Quai 1", "city": "Lyon", "postal_code": "69001", "country_code": "FR"}}, false},
		{"G", full, map[string]any{"lines": []any{mline("Export", "1", 5000, 0, "G")}, "tax_exemptions": exemption("G", "Export outside the EU", "VATEX-EU-G")}, false},
		{"O", notSubject, map[string]any{"lines": []any{mline("Membership", "1", 5000, 0, "O"), mline("Event", "2", 2500, 0, "O")},
			"tax_exemptions": exemption("O", "Not subject to VAT", "VATEX-EU-O")}, false},
		{"L", full, map[string]any{"lines": []any{mline("IGIC", "1", 5000, 700, "L")}}, false},
		{"M", full, map[string]any{"lines": []any{mline("IPSI", "1", 5000, 400, "M")}}, false},
		{"mixed categories and rates", eu, map[string]any{"lines": []any{mline("a", "1", 1000, 1900, ""), mline("b", "1", 1000, 700, ""),
			mline("c", "1", 1000, 0, "Z"), mline("d", "1", 1000, 0, "E"), mline("e", "1", 1000, 1900, "S")},
			"tax_exemptions": exemption("E", "Exempt", "")}, false},
		{"JPY", full, map[string]any{"currency": "JPY", "lines": []any{mline("a", "1", 105, 1000, ""), mline("b", "1", 105, 1000, ""), mline("c", "3", 333, 800, "")}}, false},
		{"GBP", full, map[string]any{"currency": "GBP", "lines": []any{mline("a", "1", 1999, 2000, ""), mline("b", "1", 1, 500, "")}}, false},
		{"fractional quantities", full, map[string]any{"lines": []any{mline("a", "0.333", 1001, 1900, ""), mline("b", "1.5", 999, 1900, ""),
			mline("c", "123456789.125", 7, 700, ""), mline("d", "0.001", 1, 1900, "")}}, false},
		{"100 lines", full, map[string]any{"lines": hundred}, false},
		{"the largest amount, zero rated", full, map[string]any{"lines": []any{mline("Max", "1", 9007199254740991, 0, "Z")}}, true},
		{"the largest amount with tax", full, map[string]any{"lines": []any{mline("Max", "1", 7569074163647891, 1900, "S")}}, true},
		{"three lines near the cap with cents", full, map[string]any{"lines": []any{mline("a", "1", 3002399751580331, 0, "Z"),
			mline("b", "1", 3002399751580329, 0, "Z"), mline("c", "1", 3002399751580331, 0, "Z")}}, true},
		{"a large amount without cents", full, map[string]any{"lines": []any{mline("Round", "1", 9000000000000000, 0, "Z")}}, true},
		{"non-Latin scripts", full, map[string]any{"notes": "Спасибо! 谢谢 شكرا ありがとう 🧾", "lines": []any{mline("Ελληνικά καὶ العربية 日本語", "1", 100, 1900, "")}}, false},
	}
}

func TestEInvoiceMatrixPassesTheCENCheck(t *testing.T) {
	runner := cenRunner(t)
	s := newService(t)
	full, minimal, notSubject, eu := matrixParties(t, s)
	dir := t.TempDir()
	var files []string
	big := map[string]bool{}
	for i, c := range matrixCases(full, minimal, notSubject, eu) {
		id := c.b.issued(t, fmt.Sprintf("cen-matrix-%02d", i), c.b.invoiceBody(t, c.fields))
		for _, syntax := range []string{"ubl", "cii"} {
			f := filepath.Join(dir, fmt.Sprintf("%02d-%s.%s.xml", i, strings.ReplaceAll(c.name, " ", "_"), syntax))
			if err := os.WriteFile(f, c.b.mustEInvoice(t, id, syntax), 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
			big[f] = c.bigCII && syntax == "cii"
		}
	}
	// A company and a customer updated after drafting: the snapshots are
	// rendered, and the document stays valid.
	id := eu.create(t, "cen-matrix-updated", eu.invoiceBody(t, map[string]any{"lines": []any{mline("x", "1", 100, 1900, "")}}))["id"].(string)
	company := "/v1/companies/" + eu.companyID
	s.mustWrite(t, company, eu.tok, s.patch(t, company, eu.tok, "cen-matrix-co-patch", `{"identifiers":[],"bank_account":null}`, nil))
	s.mustWrite(t, company+"/customers/"+eu.customerID, eu.tok, s.patch(t, company+"/customers/"+eu.customerID, eu.tok, "cen-matrix-cu-patch", `{"name":"Renamed"}`, nil))
	eu.mustChange(t, eu.issue(t, id, "cen-matrix-updated"))
	for _, syntax := range []string{"ubl", "cii"} {
		f := filepath.Join(dir, "updated-after-drafting."+syntax+".xml")
		if err := os.WriteFile(f, eu.mustEInvoice(t, id, syntax), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}

	verdicts, out := cenVerdicts(t, runner, files)
	for _, f := range files {
		line, ok := verdicts[f]
		switch {
		case !ok:
			t.Errorf("no verdict for %s:\n%s", f, out)
		case strings.HasPrefix(line, "PASS"):
		case big[f]:
			t.Logf("CII near the amount cap fails CEN's floating-point sums (upstream #277, #279, #435), its UBL passes: %s", line)
		default:
			doc, _ := os.ReadFile(f)
			t.Errorf("%s\n%s", line, doc)
		}
	}
}

// cenVerdicts runs CEN's validator (runner) over files and returns each
// file's verdict line ("PASS …" or "FAIL …"), and the whole output for
// the messages. A file the runner says nothing of has no entry.
func cenVerdicts(t *testing.T, runner string, files []string) (verdicts map[string]string, out []byte) {
	t.Helper()
	out, err := exec.Command(runner, files...).CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run %s: %v\n%s", runner, err, out)
	}
	verdicts = map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		verdict, rest, _ := strings.Cut(line, " ")
		file, _, _ := strings.Cut(rest, ": ")
		file, _, _ = strings.Cut(file, " (")
		if verdict == "PASS" || verdict == "FAIL" {
			verdicts[file] = line
		}
	}
	return verdicts, out
}
