package pdf

import (
	"bytes"
	"compress/zlib"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/einvoice"
)

// newRenderer is one Renderer per test, as a server makes one per process.
func newRenderer(t testing.TB) *Renderer {
	t.Helper()
	r, err := NewRenderer()
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func render(t testing.TB, r *Renderer, d einvoice.Document) []byte {
	t.Helper()
	var xml []byte
	if d.Status != einvoice.StatusDraft {
		xml = sampleXML(t, d)
	}
	b, err := r.Render(d, Options{FacturX: xml})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	return b
}

// tool is the path of a command-line tool the test needs; the test skips,
// saying how to get it, when it is missing.
func tool(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s not installed (apt-get install -y poppler-utils qpdf): skipping", name)
	}
	return path
}

// run writes pdf to a temporary file and runs name with args, the file's
// path replacing "{}"; it returns standard output.
func run(t *testing.T, pdf []byte, name string, args ...string) string {
	t.Helper()
	bin := tool(t, name)
	path := filepath.Join(t.TempDir(), "invoice.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range args {
		args[i] = strings.ReplaceAll(a, "{}", path)
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %v: %v\n%s%s", name, args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// text is what pdftotext extracts, in reading order.
func text(t *testing.T, pdf []byte) string {
	t.Helper()
	return run(t, pdf, "pdftotext", "-enc", "UTF-8", "{}", "-")
}

// detach is the PDF's first embedded file, as pdfdetach saves it.
func detach(t *testing.T, pdf []byte) []byte {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.xml")
	run(t, pdf, "pdfdetach", "-save", "1", "-o", out, "{}")
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTextHoldsTheInvoice(t *testing.T) {
	r := newRenderer(t)
	d := sampleDocument(5)
	got := text(t, render(t, r, d))
	want := []string{
		d.Number, d.Seller.Name, d.Buyer.Name, "Λεωφόρος Κηφισίας 12", "Αθήνα",
		"2026-11-20", "2026-12-20", "DE123456789", "EL094014201",
		"1,865.93", "200.24", "EUR 2,066.17", // totals
		"DE89 3704 0044 0532 0130 00", "COBADEFFXXX", "Payable within 30 days", "Thank you for your business.",
		"VATEX-EU-132-1C", "Page 1 of 1", "S 19%", "E 0%", "2.5", "hour",
	}
	for _, l := range d.Lines {
		want = append(want, l.ItemName)
	}
	flat := strings.Join(strings.Fields(got), " ")
	for _, w := range want {
		if !strings.Contains(flat, strings.Join(strings.Fields(w), " ")) {
			t.Errorf("pdftotext output lacks %q", w)
		}
	}
	if t.Failed() {
		t.Logf("pdftotext:\n%s", got)
	}
}

func TestFacturXAttachment(t *testing.T) {
	r := newRenderer(t)
	d := sampleDocument(3)
	xml := sampleXML(t, d)
	pdf, err := r.Render(d, Options{FacturX: xml})
	if err != nil {
		t.Fatal(err)
	}
	if list := run(t, pdf, "pdfdetach", "-list", "{}"); !strings.Contains(list, "1 embedded files") || !strings.Contains(list, "1: factur-x.xml") {
		t.Fatalf("pdfdetach -list = %q, want one file factur-x.xml", list)
	}
	if got := detach(t, pdf); !bytes.Equal(got, xml) {
		t.Fatalf("extracted factur-x.xml differs from the CII given:\n%s", got)
	}
	// The XMP must be the catalog's /Metadata: pdfinfo -meta reads it
	// from there, so a stream fpdf-style left unlinked would not show.
	meta := run(t, pdf, "pdfinfo", "-meta", "{}")
	for _, w := range []string{
		"<pdfaid:part>3</pdfaid:part>", "<pdfaid:conformance>B</pdfaid:conformance>",
		"<fx:DocumentType>INVOICE</fx:DocumentType>", "<fx:DocumentFileName>factur-x.xml</fx:DocumentFileName>",
		"<fx:Version>1.0</fx:Version>", "<fx:ConformanceLevel>EN 16931</fx:ConformanceLevel>",
		"urn:factur-x:pdfa:CrossIndustryDocument:invoice:1p0#",
	} {
		if !strings.Contains(meta, w) {
			t.Errorf("catalog metadata lacks %s", w)
		}
	}
	for _, w := range []string{"/AFRelationship /Alternative", "/AF [", "/OutputIntents [", "/S /GTS_PDFA1", "/Subtype /text#2Fxml", "/ID [<"} {
		if !bytes.Contains(pdf, []byte(w)) {
			t.Errorf("file lacks %s", w)
		}
	}
}

func TestQpdfCheckIsClean(t *testing.T) {
	r := newRenderer(t)
	for name, d := range documents() {
		t.Run(name, func(t *testing.T) {
			out := run(t, render(t, r, d), "qpdf", "--check", "{}")
			if !strings.Contains(out, "No syntax or stream encoding errors found") || strings.Contains(strings.ToLower(out), "warning") {
				t.Fatalf("qpdf --check:\n%s", out)
			}
		})
	}
}

// Every stream of the file is deflated: fpdf is told not to compress the
// page contents, so that finish does it with a reused writer, and a change
// that lost that step would serve them uncompressed (qpdf finds nothing
// wrong with that).
func TestEveryStreamIsCompressed(t *testing.T) {
	r := newRenderer(t)
	plain := regexp.MustCompile(`obj\n<<[^>]*>>\nstream\n`)
	for name, d := range documents() {
		t.Run(name, func(t *testing.T) {
			pdf := render(t, r, d)
			for _, m := range plain.FindAll(pdf, -1) {
				if !bytes.Contains(m, []byte("/FlateDecode")) && !bytes.Contains(m, []byte("/Metadata")) {
					t.Errorf("a stream without /FlateDecode: %q", m)
				}
			}
			if n := len(plain.FindAll(pdf, -1)); n < 5 {
				t.Fatalf("%d streams found; the pattern no longer matches the file", n)
			}
		})
	}
}

// documents are the variants every structural test runs over.
func documents() map[string]einvoice.Document {
	draft := sampleDocument(4)
	draft.Status, draft.Number, draft.IssueDate, draft.DueDate = einvoice.StatusDraft, "", "", ""
	void := sampleDocument(4)
	void.Status, void.VoidReason = einvoice.StatusVoid, "Billed to the wrong customer"
	minimal := einvoice.Document{
		Number: "1", IssueDate: "2026-01-02", Currency: "JPY", Status: einvoice.StatusIssued,
		Seller: einvoice.Party{Name: "S"}, Buyer: einvoice.Party{Name: "B"},
		Lines:        []einvoice.Line{{Quantity: "1", UnitCode: "C62", ItemName: "x", Price: 1000, NetAmount: 1000, VATCategory: "Z"}},
		VATBreakdown: []einvoice.VATBreakdown{{TaxableAmount: 1000, Category: "Z"}},
		Totals:       einvoice.Totals{LineTotal: 1000, TaxExclusive: 1000, TaxInclusive: 1000, Payable: 1000},
	}
	return map[string]einvoice.Document{
		"issued": sampleDocument(5), "hundred lines": sampleDocument(100), "draft": draft, "void": void,
		"minimal JPY": minimal, "unicode": unicodeDocument(), "credit note": sampleCreditNote(4),
	}
}

func TestHundredLines(t *testing.T) {
	r := newRenderer(t)
	d := sampleDocument(100)
	got := strings.Join(strings.Fields(text(t, render(t, r, d))), " ")
	for _, l := range d.Lines {
		if !strings.Contains(got, strings.Join(strings.Fields(l.ItemName), " ")+" ") {
			t.Errorf("line %s (%q) missing", l.ID, l.ItemName)
		}
	}
	pages := strings.Count(got, "Page ")
	if pages < 3 {
		t.Fatalf("100 lines on %d pages, want several", pages)
	}
	layout := run(t, render(t, r, d), "pdftotext", "-layout", "-enc", "UTF-8", "{}", "-")
	if n := strings.Count(strings.Join(strings.Fields(layout), " "), "# Description Qty Unit Unit price VAT Net amount"); n < pages-1 {
		t.Errorf("table header printed %d times on %d pages, want it on every page with lines", n, pages)
	}
	if !strings.Contains(got, "Page 1 of ") || !strings.Contains(got, "(continued)") {
		t.Errorf("page numbers or continuation header missing")
	}
}

func TestDeterministic(t *testing.T) {
	for name, d := range documents() {
		t.Run(name, func(t *testing.T) {
			a := render(t, newRenderer(t), d)
			r := newRenderer(t)
			b := render(t, r, d)
			c := render(t, r, d)
			if !bytes.Equal(a, b) || !bytes.Equal(b, c) {
				t.Fatal("two renders of the same document differ")
			}
		})
	}
	// Different content, different file id.
	d := sampleDocument(2)
	e := d
	e.Number = "INV-2026-000043"
	r := newRenderer(t)
	if id(render(t, r, d)) == id(render(t, r, e)) {
		t.Error("two different invoices share a file /ID")
	}
}

func id(pdf []byte) string {
	i := bytes.LastIndex(pdf, []byte("/ID [<"))
	return string(pdf[i : i+40])
}

func TestStamps(t *testing.T) {
	r := newRenderer(t)
	docs := documents()
	for _, tc := range []struct {
		name      string
		want      []string
		files     string
		forbidden string
	}{
		{"draft", []string{"DRAFT", "Draft invoice"}, "0 embedded files", "VOID"},
		{"void", []string{"VOID", "Billed to the wrong customer"}, "1: factur-x.xml", "DRAFT"},
		{"issued", nil, "1: factur-x.xml", "DRAFT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := render(t, r, docs[tc.name])
			got := text(t, pdf)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q", w)
				}
			}
			if strings.Contains(got, tc.forbidden) {
				t.Errorf("text holds %q", tc.forbidden)
			}
			if list := run(t, pdf, "pdfdetach", "-list", "{}"); !strings.Contains(list, tc.files) {
				t.Errorf("pdfdetach -list = %q, want %q", list, tc.files)
			}
		})
	}
}

// unicodeDocument has scripts the Go fonts draw (Greek, Cyrillic,
// Latin with diacritics, decomposed accents) and some they do not (CJK,
// Arabic, emoji beyond U+FFFF), tabs and line breaks.
func unicodeDocument() einvoice.Document {
	d := sampleDocument(3)
	d.Buyer.Name = "Łódź Ærø Œuvre e\u0301te\u0301 Привет"
	d.Lines[0].ItemName = "Emoji 🧾💶 and 日本語 and عربى\ttab"
	d.Lines[1].ItemName = "Greek Ωμέγα, Cyrillic Жук, math ≤ ≥ ≠ €"
	d.Notes = []string{"line one\r\nline two\rline three", "🙂"}
	return d
}

func TestUnicode(t *testing.T) {
	r := newRenderer(t)
	got := text(t, render(t, r, unicodeDocument()))
	for _, w := range []string{
		"Łódź Ærø Œuvre été Привет",                                                  // NFC: "e"+U+0301 printed as "é"
		"Emoji \uFFFD\uFFFD and \uFFFD\uFFFD\uFFFD and \uFFFD\uFFFD\uFFFD\uFFFD tab", // replaced visibly, not dropped
		"Greek Ωμέγα, Cyrillic Жук, math ≤ ≥ ≠ €",
		"line one", "line two", "line three",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q", w)
		}
	}
}

func TestClean(t *testing.T) {
	r := newRenderer(t)
	for in, want := range map[string]string{
		"a\tb\r\nc\x07d\uFEFFe": "a b cde",
		"e\u0301":               "é",
		"🧾 x":                   "\uFFFD x",
		"中":                     "\uFFFD",
	} {
		if got := r.cover.clean(in); got != want {
			t.Errorf("clean(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrors(t *testing.T) {
	r := newRenderer(t)
	d := sampleDocument(1)
	if _, err := r.Render(d, Options{}); !errors.Is(err, ErrNoFacturX) {
		t.Errorf("issued without XML: err = %v, want ErrNoFacturX", err)
	}
	d.Currency = "XXX"
	var ce *einvoice.CurrencyError
	if _, err := r.Render(d, Options{FacturX: []byte("<x/>")}); !errors.As(err, &ce) {
		t.Errorf("unknown currency: err = %v, want *einvoice.CurrencyError", err)
	}
	draft := documents()["draft"]
	pdf, err := r.Render(draft, Options{FacturX: []byte("<x/>")})
	if err != nil || bytes.Contains(pdf, []byte("factur-x.xml")) {
		t.Errorf("a draft given XML: err %v, embeds it %v; want no error and no file", err, bytes.Contains(pdf, []byte("factur-x.xml")))
	}
}

func TestMoney(t *testing.T) {
	for _, tc := range []struct {
		minor int64
		cur   string
		want  string
	}{
		{0, "EUR", "0.00"}, {5, "EUR", "0.05"}, {-123456789, "EUR", "-1,234,567.89"},
		{1234567, "JPY", "1,234,567"}, {1234, "BHD", "1.234"}, {100000, "USD", "1,000.00"},
	} {
		if got, err := money(tc.minor, tc.cur); err != nil || got != tc.want {
			t.Errorf("money(%d, %s) = %q, %v; want %q", tc.minor, tc.cur, got, err, tc.want)
		}
	}
	for bps, want := range map[int64]string{1900: "19%", 550: "5.5%", 0: "0%", 1025: "10.25%"} {
		if got := rate(bps); got != want {
			t.Errorf("rate(%d) = %q, want %q", bps, got, want)
		}
	}
}

// BenchmarkRenderPDF renders a 10-line issued invoice with its XML; pdfs/s
// is the throughput of one goroutine (run with -cpu 1 for one core).
func BenchmarkRenderPDF(b *testing.B) {
	r := newRenderer(b)
	d := sampleDocument(10)
	opts := Options{FacturX: sampleXML(b, d)}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Render(d, opts); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pdfs/s")
}

// BenchmarkRenderPDFLibraryFloor is what fpdf costs before any layout: a
// document with the font added, one page, one cell, written out. Adding a
// UTF-8 font and writing its subset are fixed work per document (the
// font's widths JSON-encoded for its id, its glyph map and subset
// compressed), so BenchmarkRenderPDF can never be faster than this.
func BenchmarkRenderPDFLibraryFloor(b *testing.B) {
	r := newRenderer(b)
	b.ReportAllocs()
	for b.Loop() {
		p := r.newFpdf()
		p.AddPage()
		p.SetFont(fontFamily, "", 9)
		p.Cell(40, 5, "Invoice 2026-0001 €")
		if err := p.Output(io.Discard); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pdfs/s")
}

// TestConcurrentRenders shares one Renderer between goroutines, as a
// server does (run with -race).
func TestConcurrentRenders(t *testing.T) {
	r := newRenderer(t)
	d := sampleDocument(20)
	want := render(t, r, d)
	xml := sampleXML(t, d)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := r.Render(d, Options{FacturX: xml})
			if err == nil && !bytes.Equal(got, want) {
				err = errors.New("a concurrent render differs")
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// TestFacturXPassesCEN extracts factur-x.xml from PDFs and runs CEN's
// EN 16931 validation artefacts on it (all files in one call: the runner
// compiles its stylesheets per call).
func TestFacturXPassesCEN(t *testing.T) {
	validator := os.Getenv("EN16931_VALIDATOR")
	if validator == "" {
		t.Skip("EN16931_VALIDATOR is not set (.ci/run sets it to CEN's runner): skipping the CEN check of factur-x.xml")
	}
	r := newRenderer(t)
	dir := t.TempDir()
	var files []string
	for _, name := range []string{"issued", "hundred lines", "void", "unicode", "credit note"} {
		d := documents()[name]
		pdf := render(t, r, d)
		out := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".xml")
		run(t, pdf, "pdfdetach", "-save", "1", "-o", out, "{}")
		files = append(files, out)
	}
	cmd := exec.Command(validator, files...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", validator, err, out)
	}
	if n := strings.Count(string(out), "PASS "); n != len(files) {
		t.Fatalf("%d of %d files pass:\n%s", n, len(files), out)
	}
}

// TestExtremes renders what the API's limits allow at their edges: the
// largest amounts, long unbroken words, a description of many short lines
// (taller than a page), notes and terms of 5000 characters, long names and
// references. Nothing may fail, every line and the totals must be there.
func TestExtremes(t *testing.T) {
	const big = 9007199254740991 // 2^53-1 minor units
	d := sampleDocument(3)
	d.Seller.Name = strings.Repeat("Very Long Company Name ", 9)
	d.Buyer.Name = strings.Repeat("Käufer", 33)
	d.BuyerReference = strings.Repeat("REF", 60)
	d.Lines[0].ItemName = strings.Repeat("Unbrokenwordwithoutanyspace", 18)
	d.Lines[1].ItemName = strings.Repeat("short line\n", 45)
	d.Lines[2].Quantity = "123456789.123456"
	d.Lines[2].Price, d.Lines[2].NetAmount = big, big
	d.Totals.TaxInclusive, d.Totals.Payable = big, big
	d.Notes = []string{strings.Repeat("Note text that goes on. ", 208)}
	d.PaymentTerms = strings.Repeat("Terms\n", 800)
	r := newRenderer(t)
	pdf := render(t, r, d)
	out := run(t, pdf, "qpdf", "--check", "{}")
	if !strings.Contains(out, "No syntax or stream encoding errors found") {
		t.Fatalf("qpdf --check:\n%s", out)
	}
	got := text(t, pdf)
	for _, w := range []string{"90,071,992,547,409.91", "123456789.123456", "Unbrokenword", "short line"} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q", w)
		}
	}
	if n := strings.Count(got, "short line"); n != 45 {
		t.Errorf("%d of 45 short lines printed", n)
	}
	if n := strings.Count(got, "Terms"); n < 800 {
		t.Errorf("%d of 800 lines of terms printed", n)
	}
}

func TestLanguages(t *testing.T) {
	r := newRenderer(t)
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"", []string{"INVOICE", "Invoice number", "2026-11-20", "1,865.93", "EUR 2,066.17", "Page 1 of 1", "S 19%", "2.5", "hour"}},
		{"de-DE", []string{"RECHNUNG", "Rechnungsnummer", "20.11.2026", "1.865,93", "EUR 2.066,17", "Seite 1 von 1", "S 19%", "2,5", "Std.", "Bitte zahlen Sie EUR 2.066,17 bis zum 20.12.2026."}},
		{"fr", []string{"FACTURE", "Numéro", "20/11/2026", "865,93", "Net à payer", "Page 1 sur 1", "S 7%", "Total TTC"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			d := sampleDocument(5)
			d.Language = tc.lang
			got := text(t, render(t, r, d))
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q", w)
				}
			}
		})
	}
}

// TestFontsEmbedded: every font is embedded and maps to Unicode (pdffonts'
// emb and uni columns), as PDF/A and text extraction need.
func TestFontsEmbedded(t *testing.T) {
	out := run(t, render(t, newRenderer(t), sampleDocument(3)), "pdffonts", "{}")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) < 3 {
		t.Fatalf("pdffonts lists no font:\n%s", out)
	}
	for _, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) < 7 || f[len(f)-5] != "yes" || f[len(f)-3] != "yes" {
			t.Errorf("font not embedded or without Unicode map: %s", l)
		}
	}
}

// TestCreditNote: a credit note's PDF says what it is, in every language
// of the labels, names the invoice it corrects and why, asks for no
// payment, and carries its CII (type 381, with the invoice's reference).
func TestCreditNote(t *testing.T) {
	r := newRenderer(t)
	for _, tc := range []struct {
		lang string
		want []string
	}{
		{"", []string{"CREDIT NOTE", "Credit note number", "CN-000003", "Credit note for invoice INV-2026-000042 of 2026-11-20",
			"REASON", "Two licences returned unused.", "Amount credited", "EUR 1,413.77"}},
		{"de", []string{"RECHNUNGSKORREKTUR", "Korrekturnummer", "CN-000003", "Korrektur der Rechnung INV-2026-000042 vom 20.11.2026",
			"GRUND", "Two licences returned unused.", "Gutgeschrieben"}},
		{"fr", []string{"AVOIR", "Numéro d'avoir", "CN-000003", "Avoir sur la facture INV-2026-000042 du 20/11/2026",
			"MOTIF", "Montant de l'avoir"}},
	} {
		t.Run(tc.lang, func(t *testing.T) {
			d := sampleCreditNote(4)
			d.Language = tc.lang
			pdf := render(t, r, d)
			got := strings.Join(strings.Fields(text(t, pdf)), " ")
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("text lacks %q", w)
				}
			}
			for _, w := range []string{"INVOICE", "Please pay", "PAYMENT", "Due date"} {
				if strings.Contains(got, w) {
					t.Errorf("text holds %q", w)
				}
			}
			if t.Failed() {
				t.Logf("pdftotext: %s", got)
			}
			if xml := detach(t, pdf); !bytes.Equal(xml, sampleXML(t, d)) || !bytes.Contains(xml, []byte("<ram:TypeCode>381</ram:TypeCode>")) ||
				!bytes.Contains(xml, []byte("<ram:IssuerAssignedID>INV-2026-000042</ram:IssuerAssignedID>")) {
				t.Errorf("factur-x.xml is not the credit note's CII:\n%s", xml)
			}
			if info := run(t, pdf, "pdfinfo", "{}"); !strings.Contains(info, "CN-000003") {
				t.Errorf("pdfinfo names no credit note:\n%s", info)
			}
		})
	}
}

// TestPaidInvoice: the paid amount (BT-113) is shown and the amount due is
// what is left; a fully paid invoice asks for no payment.
func TestPaidInvoice(t *testing.T) {
	r := newRenderer(t)
	d := sampleDocument(5)
	d.Totals.Paid, d.Totals.Payable = 100000, d.Totals.TaxInclusive-100000
	got := strings.Join(strings.Fields(text(t, render(t, r, d))), " ")
	for _, w := range []string{"Paid 1,000.00", "Amount due EUR 1,066.17", "Please pay EUR 1,066.17 by 2026-12-20."} {
		if !strings.Contains(got, w) {
			t.Errorf("text lacks %q:\n%s", w, got)
		}
	}
	d.Totals.Paid, d.Totals.Payable = d.Totals.TaxInclusive, 0
	got = strings.Join(strings.Fields(text(t, render(t, r, d))), " ")
	if !strings.Contains(got, "Amount due EUR 0.00") || strings.Contains(got, "Please pay") {
		t.Errorf("a paid invoice:\n%s", got)
	}
}

// A deflater's writers are reused across streams and goroutines: each
// stream inflates to its own input, however many deflate at once (more
// than keptWriters, so that some writers are made and dropped).
func TestDeflaterStreamsInflateToTheirInput(t *testing.T) {
	d := newDeflater()
	errs := make(chan error, 3*keptWriters)
	for g := range cap(errs) {
		go func() {
			var err error
			for n := range 20 {
				in := bytes.Repeat([]byte(fmt.Sprintf("stream %d.%d ", g, n)), 50*(n+1))
				var out []byte
				if out, err = inflate(d.deflate(in)); err == nil && !bytes.Equal(out, in) {
					err = fmt.Errorf("stream %d.%d inflates to %d bytes, not its %d", g, n, len(out), len(in))
				}
				if err != nil {
					break
				}
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func inflate(b []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}
