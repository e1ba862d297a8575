package main

import (
	"bytes"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 22, items 3 and 4: GET .../invoices/{invoice_id}/pdf, the invoice
// as a printable PDF carrying its CII e-invoice (Factur-X) when issued,
// byte-stable across requests and a projection rebuild.

// pdfTool runs a poppler tool on pdf ("{}" in args is the file) and
// returns its output; the test skips when the tool is missing.
func pdfTool(t *testing.T, pdf []byte, name string, args ...string) string {
	t.Helper()
	bin, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (apt-get install -y poppler-utils): skipping", name)
	}
	path := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{}", path)
	}
	out, err := exec.Command(bin, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

func (b billing) pdf(t *testing.T, id string, headers map[string]string) response {
	t.Helper()
	return b.s.do(t, request{method: http.MethodGet, path: b.path("/" + id + "/pdf"), token: b.tok, headers: headers})
}

func TestInvoicePDF(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "pdf-22", prefixedCompany)
	body := b.invoiceBody(t, map[string]any{"notes": "Thank you.", "terms": "Net 30"})
	// The seller's VAT identifier (BR-S-02) arrives with a revision of the
	// company, after drafting: the snapshot is what renders, so the first
	// invoice cannot become an e-invoice, the second can.
	incomplete := b.create(t, "pdf-incomplete", body)["id"].(string)
	b.mustChange(t, b.issue(t, incomplete, "pdf-incomplete"))
	res := b.pdf(t, incomplete, nil)
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if code := errorCode(t, res); code != "document_incomplete" {
		t.Fatalf("incomplete issued invoice: %s, want document_incomplete", code)
	}
	patched := s.do(t, request{method: http.MethodPatch, path: "/v1/companies/" + b.companyID, token: b.tok, key: "pdf-vat-patch",
		contentType: "application/merge-patch+json", body: `{"identifiers":[{"scheme":"vat","value":"DE123456789"}]}`})
	mustStatus(t, patched, http.StatusOK)

	draft := b.create(t, "pdf-draft", body)["id"].(string)
	res = b.pdf(t, draft, nil)
	mustStatus(t, res, http.StatusOK)
	if ct := res.header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("Content-Type %q", ct)
	}
	if text := pdfTool(t, res.body, "pdftotext", "{}", "-"); !strings.Contains(text, "DRAFT") || !strings.Contains(text, "Globex Corp") {
		t.Errorf("a draft's PDF lacks DRAFT or the customer:\n%s", text)
	}
	if list := pdfTool(t, res.body, "pdfdetach", "-list", "{}"); !strings.Contains(list, "0 embedded files") {
		t.Errorf("a draft's PDF carries files: %s", list)
	}

	issued := b.mustChange(t, b.issue(t, draft, "pdf-issue"))
	res = b.pdf(t, draft, nil)
	mustStatus(t, res, http.StatusOK)
	text := pdfTool(t, res.body, "pdftotext", "{}", "-")
	for _, want := range []string{issued["number"].(string), "Globex Corp", "Consulting", "Thank you.", "Net 30"} {
		if !strings.Contains(text, want) {
			t.Errorf("the issued invoice's PDF lacks %q", want)
		}
	}
	if strings.Contains(text, "DRAFT") {
		t.Error("the issued invoice's PDF is still stamped DRAFT")
	}
	cii := s.do(t, request{method: http.MethodGet, path: b.path("/" + draft + "/einvoice?syntax=cii"), token: b.tok})
	mustStatus(t, cii, http.StatusOK)
	out := filepath.Join(t.TempDir(), "factur-x.xml")
	pdfTool(t, res.body, "pdfdetach", "-save", "1", "-o", out, "{}")
	if got, err := os.ReadFile(out); err != nil || !bytes.Equal(got, cii.body) {
		t.Errorf("factur-x.xml (%v) is not the invoice's CII e-invoice", err)
	}

	// Deterministic: the same bytes again, a strong ETag, 304.
	again := b.pdf(t, draft, nil)
	tag := res.header.Get("ETag")
	if !bytes.Equal(again.body, res.body) || again.header.Get("ETag") != tag || strings.HasPrefix(tag, "W/") || tag == "" {
		t.Fatalf("two GETs differ or the ETag %q is not strong", tag)
	}
	mustStatus(t, b.pdf(t, draft, map[string]string{"If-None-Match": tag}), http.StatusNotModified)
	res = b.pdf(t, draft, map[string]string{"Accept": "application/json"})
	mustStatus(t, res, http.StatusNotAcceptable)
	if out, err := runCommand(t, s, "projections", "rebuild"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if after := b.pdf(t, draft, nil); !bytes.Equal(after.body, again.body) {
		t.Error("the PDF after a projection rebuild differs")
	}

	b.mustChange(t, b.void(t, draft, "pdf-void", "Wrong customer"))
	res = b.pdf(t, draft, nil)
	mustStatus(t, res, http.StatusOK)
	if text := pdfTool(t, res.body, "pdftotext", "{}", "-"); !strings.Contains(text, "VOID") || !strings.Contains(text, "Wrong customer") {
		t.Errorf("a void invoice's PDF lacks VOID or its reason:\n%s", text)
	}
	if list := pdfTool(t, res.body, "pdfdetach", "-list", "{}"); !strings.Contains(list, "factur-x.xml") {
		t.Errorf("a void invoice's PDF lost its XML: %s", list)
	}
}
