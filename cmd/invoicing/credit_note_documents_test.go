package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// Issue 23, item 3: a credit note in UBL (CreditNote) and CII (type 381)
// referring to the invoice it corrects (BG-3), as a PDF carrying its CII,
// through the same renderers and CEN check as invoices; an invoice's
// e-invoice shows what was paid (BT-113) and what is left to pay (BT-115).

// cnDocument GETs the credit note's einvoice (syntax "" = the default) or,
// for syntax "pdf", its PDF.
func (b billing) cnDocument(t *testing.T, id, syntax string) response {
	t.Helper()
	path := b.cnPath("/" + id + "/einvoice")
	switch syntax {
	case "pdf":
		path = b.cnPath("/" + id + "/pdf")
	case "":
	default:
		path += "?syntax=" + syntax
	}
	return b.s.do(t, request{method: http.MethodGet, path: path, token: b.tok})
}

func (b billing) mustCNDocument(t *testing.T, id, syntax string) []byte {
	t.Helper()
	res := b.cnDocument(t, id, syntax)
	mustStatus(t, res, http.StatusOK)
	want := "application/xml"
	if syntax == "pdf" {
		want = "application/pdf"
	}
	if ct := res.header.Get("Content-Type"); ct != want {
		t.Fatalf("Content-Type = %q, want %q", ct, want)
	}
	return res.body
}

var betweenTags = regexp.MustCompile(`>\s+<`)

// flat is an XML document without the white space between its tags.
func flat(doc []byte) string { return betweenTags.ReplaceAllString(string(doc), "><") }

// mustHold fails unless the flattened doc holds every one of parts.
func mustHold(t *testing.T, what string, doc []byte, parts ...string) {
	t.Helper()
	f := flat(doc)
	for _, p := range parts {
		if !strings.Contains(f, p) {
			t.Errorf("%s lacks %s:\n%s", what, p, doc)
		}
	}
}

// TestCreditNoteDocuments: a credit note's UBL is a CreditNote (type
// 381), its CII type 381, both naming the invoice's number and issue date
// (BG-3) and the credit note's own number, the default syntax UBL; its PDF
// says what it is, names its number and the invoice's, and carries
// factur-x.xml byte-equal to its CII. An invoice with a payment shows the
// paid amount and what is left to pay in both syntaxes.
func TestCreditNoteDocuments(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "cn-docs", withFields(fullCompany, `"invoice_number_prefix":"INV-","bank_account":`+bankAccount))
	id := b.issued(t, "cn-docs-invoice", b.invoiceBody(t, map[string]any{"lines": twoGroupLines(), "language": "en"}))
	cn := b.mustCreditNote(t, id, "cn-docs-cn", map[string]any{"reason": "Damaged in transit", "issue_date": "2025-02-03",
		"lines": []any{mline("Books, damaged", "1", 5000, 700, "")}})
	cnID, number := cn["id"].(string), cn["number"].(string)
	if number != "CN-000001" || cn["invoice_number"] != "INV-000001" || cn["invoice_issue_date"] != "2025-01-15" {
		t.Fatalf("credit note %v of invoice %v of %v", number, cn["invoice_number"], cn["invoice_issue_date"])
	}

	ubl := b.mustCNDocument(t, cnID, "ubl")
	if def := b.mustCNDocument(t, cnID, ""); !bytes.Equal(def, ubl) {
		t.Errorf("the default syntax is not UBL")
	}
	mustHold(t, "the credit note's UBL", ubl, "<CreditNote ", "<cbc:ID>"+number+"</cbc:ID>", "<cbc:IssueDate>2025-02-03</cbc:IssueDate>",
		"<cbc:CreditNoteTypeCode>381</cbc:CreditNoteTypeCode>",
		"<cac:BillingReference><cac:InvoiceDocumentReference><cbc:ID>INV-000001</cbc:ID><cbc:IssueDate>2025-01-15</cbc:IssueDate></cac:InvoiceDocumentReference></cac:BillingReference>",
		`<cbc:PayableAmount currencyID="EUR">53.50</cbc:PayableAmount>`)
	cii := b.mustCNDocument(t, cnID, "cii")
	mustHold(t, "the credit note's CII", cii, "CrossIndustryInvoice", "<ram:ID>"+number+"</ram:ID>", "<ram:TypeCode>381</ram:TypeCode>",
		"<ram:InvoiceReferencedDocument><ram:IssuerAssignedID>INV-000001</ram:IssuerAssignedID><ram:FormattedIssueDateTime>"+
			`<qdt:DateTimeString format="102">20250115</qdt:DateTimeString></ram:FormattedIssueDateTime></ram:InvoiceReferencedDocument>`,
		"<ram:DuePayableAmount>53.50</ram:DuePayableAmount>")
	if strings.Contains(string(ubl), "<Invoice ") {
		t.Errorf("the credit note's UBL is an Invoice")
	}

	pdf := b.mustCNDocument(t, cnID, "pdf")
	text := pdfTool(t, pdf, "pdftotext", "{}", "-")
	for _, want := range []string{"Credit note", number, "INV-000001", "Damaged in transit", "Books, damaged", "Globex Corp"} {
		if !strings.Contains(text, want) {
			t.Errorf("the credit note's PDF lacks %q:\n%s", want, text)
		}
	}
	out := filepath.Join(t.TempDir(), "factur-x.xml")
	if list := pdfTool(t, pdf, "pdfdetach", "-list", "{}"); !strings.Contains(list, "factur-x.xml") {
		t.Fatalf("the credit note's PDF carries no factur-x.xml: %s", list)
	}
	pdfTool(t, pdf, "pdfdetach", "-save", "1", "-o", out, "{}")
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, cii) {
		t.Errorf("factur-x.xml (%v) is not the credit note's CII:\n%s", err, got)
	}
	if _, err := exec.LookPath("qpdf"); err == nil {
		if out, err := exec.Command("qpdf", "--check", writeTemp(t, pdf)).CombinedOutput(); err != nil {
			t.Errorf("qpdf --check: %v\n%s", err, out)
		}
	}
	if again := b.mustCNDocument(t, cnID, "pdf"); !bytes.Equal(again, pdf) {
		t.Errorf("two GETs of the credit note's PDF differ")
	}

	// Another account's, an unknown one, a bad syntax.
	intruder := b
	intruder.tok = token(t, "cn-docs-intruder")
	for _, syntax := range []string{"ubl", "pdf"} {
		mustCode(t, intruder.cnDocument(t, cnID, syntax), http.StatusNotFound, "not_found")
		mustCode(t, b.cnDocument(t, "01a20588-7ee3-7d5f-b3e9-b847ee0b78f7", syntax), http.StatusNotFound, "not_found")
	}
	mustStatus(t, b.cnDocument(t, cnID, "pdf417"), http.StatusUnprocessableEntity)

	// The invoice with a payment: BT-113 paid, BT-115 total − paid.
	b.mustPay(t, id, "cn-docs-pay", payment(5000))
	mustHold(t, "the paid invoice's UBL", b.mustEInvoice(t, id, "ubl"),
		`<cbc:PrepaidAmount currencyID="EUR">50.00</cbc:PrepaidAmount>`, `<cbc:PayableAmount currencyID="EUR">176.00</cbc:PayableAmount>`)
	mustHold(t, "the paid invoice's CII", b.mustEInvoice(t, id, "cii"),
		"<ram:TotalPrepaidAmount>50.00</ram:TotalPrepaidAmount>", "<ram:DuePayableAmount>176.00</ram:DuePayableAmount>")
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCreditNoteEInvoicesPassTheCENCheck: credit notes of the e-invoice
// matrix's invoices (whole, partial, several categories, rounding, the
// remainder after a partial one), and invoices with payments, each in UBL
// and CII, pass CEN's EN 16931 check in one call of the runner.
func TestCreditNoteEInvoicesPassTheCENCheck(t *testing.T) {
	runner := cenRunner(t)
	s := newService(t)
	full, minimal, notSubject, eu := matrixParties(t, s)
	cases := matrixCases(full, minimal, notSubject, eu)
	pick := func(name string) matrixCase {
		for _, c := range cases {
			if c.name == name {
				return c
			}
		}
		t.Fatalf("no matrix case %q", name)
		return matrixCase{}
	}
	dir := t.TempDir()
	var files []string
	write := func(name string, doc []byte) {
		f := filepath.Join(dir, strings.NewReplacer(" ", "_", ",", "", "/", "_").Replace(name)+".xml")
		if err := os.WriteFile(f, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	credit := func(c matrixCase, i int, lines ...[]any) {
		id := c.b.issued(t, fmt.Sprintf("cen-cn-%02d", i), c.b.invoiceBody(t, c.fields))
		if len(lines) == 0 {
			lines = [][]any{nil}
		}
		for j, l := range lines {
			body := map[string]any{"reason": "Correction <&> \"quoted\"\nsecond line"}
			if l != nil {
				body["lines"] = l
			}
			cn := c.b.mustCreditNote(t, id, fmt.Sprintf("cen-cn-%02d-%d", i, j), body)
			for _, syntax := range []string{"ubl", "cii"} {
				write(fmt.Sprintf("%02d-%d-%s.%s", i, j, c.name, syntax), c.b.mustCNDocument(t, cn["id"].(string), syntax))
			}
		}
	}
	credit(pick("S, one line, no optional field"), 0)
	credit(pick("every optional field"), 1, []any{mline("Teilgutschrift", "1", 1000, 1900, "S")}, nil)
	credit(pick("E"), 2)
	credit(pick("K"), 3)
	credit(pick("O"), 4, []any{mline("Event refund", "1", 2500, 0, "O")})
	credit(pick("mixed categories and rates"), 5, []any{mline("a", "1", 500, 1900, ""), mline("b", "0.5", 999, 700, "")}, nil)
	credit(pick("fractional quantities"), 6, []any{mline("a", "0.333", 1001, 1900, "")}, []any{mline("c", "1", 7, 700, "")}, nil)
	credit(pick("JPY"), 7, []any{mline("a", "1", 105, 1000, "")}, nil)
	credit(pick("100 lines"), 8)

	for i, name := range []string{"S, one line, no optional field", "every optional field", "mixed categories and rates"} {
		c := pick(name)
		id := c.b.issued(t, fmt.Sprintf("cen-paid-%02d", i), c.b.invoiceBody(t, c.fields))
		inv := c.b.mustPay(t, id, fmt.Sprintf("cen-paid-%02d", i), payment(1))
		if i == 1 {
			c.b.mustPay(t, id, "cen-paid-rest", payment(int64(settlement(inv).due)))
		}
		for _, syntax := range []string{"ubl", "cii"} {
			write(fmt.Sprintf("paid-%02d-%s.%s", i, name, syntax), c.b.mustEInvoice(t, id, syntax))
		}
	}

	verdicts, out := cenVerdicts(t, runner, files)
	for _, f := range files {
		switch line, ok := verdicts[f]; {
		case !ok:
			t.Errorf("no verdict for %s:\n%s", f, out)
		case !strings.HasPrefix(line, "PASS"):
			doc, _ := os.ReadFile(f)
			t.Errorf("%s\n%s", line, doc)
		}
	}
}
