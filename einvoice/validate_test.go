package einvoice

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestValidateExamples: every example CEN ships passes the CEN check (its
// README says so), and Validate agrees.
func TestValidateExamples(t *testing.T) {
	dir := examplesDir(t)
	files, err := filepath.Glob(filepath.Join(dir, "*", "*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples in %s (%v)", dir, err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := Validate(bytes.NewReader(b))
		if err != nil || len(r.Problems) != 0 {
			t.Errorf("%s: Validate = %v, %v; want valid", filepath.Base(f), r.Problems, err)
		}
	}
}

// variant is a broken copy of a rendered document and the rule it breaks.
type variant struct {
	name, syntax, rule string
	doc                func() Document
	old, new           string // the first old becomes new; new "" removes it
}

func withE() Document { return withLines(full(), lineSpec{"1", 5000, "E", 0}) }

// cnFull is the credit note of full(); paidFull is full() with 50.00 paid.
func cnFull() Document   { return creditNote(full()) }
func paidFull() Document { return paid(full(), 5000) }

var variants = []variant{
	{"ubl-payable", "ubl", "BR-CO-16", full, "<cbc:PayableAmount currencyID=\"EUR\">140.39<", "<cbc:PayableAmount currencyID=\"EUR\">140.40<"},
	{"ubl-inclusive", "ubl", "BR-CO-15", full, "<cbc:TaxInclusiveAmount currencyID=\"EUR\">140.39<", "<cbc:TaxInclusiveAmount currencyID=\"EUR\">141.39<"},
	{"ubl-linetotal", "ubl", "BR-CO-10", full, "<cbc:LineExtensionAmount currencyID=\"EUR\">119.99<", "<cbc:LineExtensionAmount currencyID=\"EUR\">119.98<"},
	{"ubl-exclusive", "ubl", "BR-CO-13", full, "<cbc:TaxExclusiveAmount currencyID=\"EUR\">119.99<", "<cbc:TaxExclusiveAmount currencyID=\"EUR\">119.89<"},
	{"ubl-taxtotal", "ubl", "BR-CO-14", full, "<cbc:TaxAmount currencyID=\"EUR\">20.40<", "<cbc:TaxAmount currencyID=\"EUR\">20.50<"},
	{"ubl-buyername", "ubl", "BR-07", full, "<cbc:RegistrationName>Client SARL</cbc:RegistrationName>", ""},
	{"ubl-specid", "ubl", "BR-01", full, "<cbc:CustomizationID>urn:cen.eu:en16931:2017</cbc:CustomizationID>", ""},
	{"ubl-sellervat", "ubl", "BR-S-02", full, `(?s)<cac:PartyTaxScheme>.*?</cac:PartyTaxScheme>\s*<cac:PartyTaxScheme>.*?</cac:PartyTaxScheme>`, ""},
	{"ubl-exemption", "ubl", "BR-E-10", withE, `(?s)<cbc:TaxExemptionReasonCode>.*?<cbc:TaxExemptionReason>[^<]*</cbc:TaxExemptionReason>`, ""},
	{"ubl-cn-payable", "ubl", "BR-CO-16", cnFull, "<cbc:PayableAmount currencyID=\"EUR\">140.39<", "<cbc:PayableAmount currencyID=\"EUR\">140.40<"},
	{"ubl-cn-linetotal", "ubl", "BR-CO-10", cnFull, "<cbc:LineExtensionAmount currencyID=\"EUR\">119.99<", "<cbc:LineExtensionAmount currencyID=\"EUR\">119.98<"},
	{"ubl-cn-buyername", "ubl", "BR-07", cnFull, "<cbc:RegistrationName>Client SARL</cbc:RegistrationName>", ""},
	{"ubl-paid", "ubl", "BR-CO-16", paidFull, "<cbc:PrepaidAmount currencyID=\"EUR\">50.00<", "<cbc:PrepaidAmount currencyID=\"EUR\">50.01<"},
	{"cii-payable", "cii", "BR-CO-16", full, "<ram:DuePayableAmount>140.39<", "<ram:DuePayableAmount>140.40<"},
	{"cii-grandtotal", "cii", "BR-CO-15", full, "<ram:GrandTotalAmount>140.39<", "<ram:GrandTotalAmount>141.39<"},
	{"cii-linetotal", "cii", "BR-CO-10", full, "<ram:LineTotalAmount>119.99<", "<ram:LineTotalAmount>119.98<"},
	{"cii-taxtotal", "cii", "BR-CO-14", full, "currencyID=\"EUR\">20.40<", "currencyID=\"EUR\">20.50<"},
	{"cii-buyername", "cii", "BR-07", full, "<ram:Name>Client SARL</ram:Name>", ""},
	{"cii-sellercountry", "cii", "BR-09", full, "<ram:CountryID>DE</ram:CountryID>", ""},
	{"cii-sellervat", "cii", "BR-S-02", full, `(?s)<ram:SpecifiedTaxRegistration>.*?</ram:SpecifiedTaxRegistration>\s*<ram:SpecifiedTaxRegistration>.*?</ram:SpecifiedTaxRegistration>`, ""},
	{"cii-cn-payable", "cii", "BR-CO-16", cnFull, "<ram:DuePayableAmount>140.39<", "<ram:DuePayableAmount>140.40<"},
	{"cii-cn-grandtotal", "cii", "BR-CO-15", cnFull, "<ram:GrandTotalAmount>140.39<", "<ram:GrandTotalAmount>141.39<"},
	{"cii-cn-preceding", "cii", "BR-55", cnFull, "<ram:IssuerAssignedID>RE-2026/0001</ram:IssuerAssignedID>", "<ram:IssuerAssignedID> </ram:IssuerAssignedID>"},
	{"cii-paid", "cii", "BR-CO-16", paidFull, "<ram:TotalPrepaidAmount>50.00<", "<ram:TotalPrepaidAmount>50.01<"},
	{"cii-exemption", "cii", "BR-E-10", withE, `(?s)<ram:ExemptionReason>[^<]*</ram:ExemptionReason>(.*?)<ram:ExemptionReasonCode>[^<]*</ram:ExemptionReasonCode>`, "$1"},
}

// render renders d in syntax "ubl" or "cii".
func render(t testing.TB, d Document, syntax string) []byte {
	t.Helper()
	r := RenderUBL
	if syntax == "cii" {
		r = RenderCII
	}
	b, err := r(d)
	if err != nil {
		t.Fatalf("render %s: %v", syntax, err)
	}
	return b
}

// broken renders v's document and breaks it; the first match only.
func (v variant) broken(t *testing.T) []byte {
	b := render(t, v.doc(), v.syntax)
	re := regexp.MustCompile(v.old)
	if !strings.HasPrefix(v.old, "(?s)") {
		re = regexp.MustCompile(regexp.QuoteMeta(v.old))
	}
	loc := re.FindSubmatchIndex(b)
	if loc == nil {
		t.Fatalf("%s: %q not in the rendered document", v.name, v.old)
	}
	repl := re.Expand(nil, []byte(v.new), b, loc)
	return append(append(append([]byte{}, b[:loc[0]]...), repl...), b[loc[1]:]...)
}

func rulesOf(r Report) []string {
	var ids []string
	for _, p := range r.Problems {
		ids = append(ids, p.Rule)
	}
	return ids
}

// TestValidateBrokenVariants: changed totals and removed mandatory
// elements of the service's own output fail, naming the rule.
func TestValidateBrokenVariants(t *testing.T) {
	for _, v := range variants {
		r, err := Validate(bytes.NewReader(v.broken(t)))
		if err != nil {
			t.Fatalf("%s: %v", v.name, err)
		}
		if ids := rulesOf(r); !contains(ids, v.rule) {
			t.Errorf("%s: Validate names %v, want %s", v.name, ids, v.rule)
		}
	}
	for _, d := range []func() Document{full, withE} {
		for _, syntax := range []string{"ubl", "cii"} {
			if r, err := Validate(bytes.NewReader(render(t, d(), syntax))); err != nil || len(r.Problems) != 0 {
				t.Errorf("unbroken %s: %v, %v", syntax, r.Problems, err)
			}
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestValidateAgreesWithCEN: on the broken variants (and the documents
// they break) Validate and CEN's check give the same verdict and name the
// same rule.
func TestValidateAgreesWithCEN(t *testing.T) {
	cenValidator(t)
	dir := t.TempDir()
	docs := map[string][]byte{}
	var names []string
	for name, d := range map[string]Document{"full": full(), "credit-note": cnFull(), "paid": paidFull()} {
		for _, syntax := range []string{"ubl", "cii"} {
			n := name + "." + syntax + ".xml"
			docs[n] = render(t, d, syntax)
			names = append(names, n)
		}
	}
	for _, v := range variants {
		docs[v.name+".xml"] = v.broken(t)
		names = append(names, v.name+".xml")
	}
	paths := writeFiles(t, dir, names, docs)
	cen := runCEN(t, paths)
	for i, n := range names {
		r, err := Validate(bytes.NewReader(docs[n]))
		if err != nil {
			t.Fatal(err)
		}
		c := cen[paths[i]]
		if c.pass != (len(r.Problems) == 0) {
			t.Errorf("%s: CEN says %q, Validate %v", n, c.line, rulesOf(r))
		}
		for _, v := range variants {
			if v.name+".xml" == n && (!c.rules[v.rule] || !contains(rulesOf(r), v.rule)) {
				t.Errorf("%s: want %s named by both; CEN: %q; Validate: %v", n, v.rule, c.line, rulesOf(r))
			}
		}
		var cenRules []string
		for id := range c.rules {
			cenRules = append(cenRules, id)
		}
		sort.Strings(cenRules)
		ours := rulesOf(r)
		sort.Strings(ours)
		if strings.Join(cenRules, " ") != strings.Join(ours, " ") {
			t.Errorf("%s: CEN names %v, Validate %v", n, cenRules, ours)
		}
	}
}

func TestValidateRejectsWhatIsNoInvoice(t *testing.T) {
	for _, in := range []string{"", "<a", "<Invoice/>", `<Order xmlns="urn:oasis:names:specification:ubl:schema:xsd:Order-2"/>`} {
		if _, err := Validate(strings.NewReader(in)); err == nil {
			t.Errorf("Validate(%q) = nil error", in)
		} else if in == "<Invoice/>" && !errors.Is(err, ErrNotAnInvoice) {
			t.Errorf("Validate(%q) = %v, want ErrNotAnInvoice", in, err)
		}
	}
}

// FuzzValidate: whatever the input, Validate answers (a report or an
// error) and never panics.
func FuzzValidate(f *testing.F) {
	for _, d := range []Document{minimal(), full()} {
		f.Add(render(f, d, "ubl"))
		f.Add(render(f, d, "cii"))
	}
	f.Add([]byte(`<Invoice xmlns="urn:oasis:names:specification:ubl:schema:xsd:Invoice-2"><cac:InvoiceLine xmlns:cac="x"/></Invoice>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Validate(bytes.NewReader(b))
	})
}
