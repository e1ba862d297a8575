package pdf

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/invoicing/invoicing/einvoice"
)

var update = flag.Bool("update", false, "rewrite docs/invoice-page1.png and testdata/invoice.pdf.sha256 from the representative invoice")

// docsPNG is page 1 of a representative invoice, shown in the docs.
const docsPNG = "../../docs/invoice-page1.png"

// docsDocument is the representative invoice: realistic lines, two rates
// and an exempt service, every block of the layout present.
func docsDocument() einvoice.Document {
	d := sampleDocument(6)
	names := []string{
		"Consulting: architecture review of the billing platform, including a written report",
		"Software licence «Invoicing Pro», annual subscription",
		"Remote support",
		"Workshop “E-invoicing with EN 16931” for the finance team",
		"Hosting of medical records (exempt service)",
		"Data migration from the legacy system",
	}
	for i := range d.Lines {
		d.Lines[i].ItemName = names[i]
	}
	d.Lines[2].Note = "Billed per started half hour"
	d.BuyerReference = "Cost centre 4711"
	return d
}

// TestDocsPicture renders page 1 of the representative invoice to PNG with
// -update (pdftoppm, 60 dpi); without it, it checks the picture exists.
func TestDocsPicture(t *testing.T) {
	if !*update {
		if _, err := os.Stat(docsPNG); err != nil {
			t.Fatalf("%v: run go test ./einvoice/pdf -run TestDocsPicture -update", err)
		}
		return
	}
	d := docsDocument()
	pdf := render(t, newRenderer(t), d)
	dir := t.TempDir()
	in := filepath.Join(dir, "invoice.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	bin := tool(t, "pdftoppm")
	if out, err := exec.Command(bin, "-png", "-r", "60", "-f", "1", "-l", "1", "-singlefile", in, filepath.Join(dir, "page")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	png, err := os.ReadFile(filepath.Join(dir, "page.png"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(docsPNG, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goldenHash holds the SHA-256 of the representative invoice's PDF: a
// change of a single byte, wanted (layout) or not (a clock, a map order),
// shows here. Rewrite with -update after a deliberate change.
const goldenHash = "testdata/invoice.pdf.sha256"

func TestGoldenBytes(t *testing.T) {
	// A fixed XML: the golden pins this package's bytes, not einvoice's CII.
	pdf, err := newRenderer(t).Render(docsDocument(), Options{FacturX: []byte("<rsm:CrossIndustryInvoice/>\n")})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(pdf)
	got := hex.EncodeToString(sum[:]) + "\n"
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenHash, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(goldenHash)
	if err != nil {
		t.Fatalf("%v: run go test ./einvoice/pdf -run TestGoldenBytes -update", err)
	}
	if got != string(want) {
		t.Fatalf("the PDF's bytes changed: sha256 %s, golden %s (a deliberate change: -update)", got, want)
	}
}
