// Package pdf renders an einvoice.Document as a printable A4 invoice or
// credit note (type code 381). An issued (or voided) document carries its CII XML as the embedded file
// factur-x.xml with the Factur-X XMP metadata (profile EN 16931), aiming at
// PDF/A-3b; a draft is stamped DRAFT and carries no XML. Rendering is a pure
// function of its input: no clock, no random ids, the same bytes every time.
//
// Layout uses github.com/go-pdf/fpdf with Go Regular (BSD licensed, from
// golang.org/x/image/font/gofont) embedded as a subset; finish (pdfa.go)
// rewrites the document catalog for what fpdf cannot express.
package pdf

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/invoicing/invoicing/einvoice"
)

// Producer names the software in the file's metadata.
const Producer = "invoicing einvoice/pdf (go-pdf/fpdf v0.9.0)"

// ErrNoFacturX means an issued or void invoice was given no CII XML to
// embed: the PDF of a legal invoice always carries its e-invoice.
var ErrNoFacturX = errors.New("pdf: an issued or void invoice needs its CII XML (Options.FacturX)")

// Options are the inputs of a render besides the document.
type Options struct {
	// FacturX is the invoice's CII XML (einvoice's CII rendering), embedded
	// byte for byte as factur-x.xml. Required for an issued or void
	// document, ignored for a draft (a draft is no legal document).
	FacturX []byte
}

// Renderer renders PDFs. Make one with NewRenderer and reuse it: it holds
// what every render needs and never changes (the font's coverage, the
// output intent's colour profile); it is safe for concurrent use.
type Renderer struct {
	regular  []byte
	cover    *coverage
	iccFlate []byte
	zlib     *deflater
}

// NewRenderer reads the font's coverage once and builds the colour profile.
func NewRenderer() (*Renderer, error) {
	cover, err := newCoverage(goregular.TTF)
	if err != nil {
		return nil, fmt.Errorf("pdf: parse the Go font: %w", err)
	}
	zlib := newDeflater()
	return &Renderer{regular: goregular.TTF, cover: cover, iccFlate: zlib.deflate(srgbProfile()), zlib: zlib}, nil
}

// Render draws d and returns the PDF's bytes.
func (r *Renderer) Render(d einvoice.Document, opts Options) ([]byte, error) {
	var xml []byte
	if d.Status != einvoice.StatusDraft {
		if len(opts.FacturX) == 0 {
			return nil, ErrNoFacturX
		}
		xml = opts.FacturX
	}
	if _, err := money(0, d.Currency); err != nil {
		return nil, fmt.Errorf("pdf: %w", err)
	}
	p := r.newFpdf()
	l := &layout{p: p, d: d, c: r.cover, lc: localeFor(d.Language)}
	l.draw()
	if err := p.Error(); err != nil {
		return nil, fmt.Errorf("pdf: layout: %w", err)
	}
	var raw bytes.Buffer
	if err := p.Output(&raw); err != nil {
		return nil, fmt.Errorf("pdf: write: %w", err)
	}
	return r.finish(raw.Bytes(), r.info(d, xml != nil), xml)
}

func (r *Renderer) newFpdf() *fpdf.Fpdf {
	p := fpdf.New("P", "mm", "A4", "")
	p.SetCatalogSort(true)  // fonts in a fixed order: the same bytes every time
	p.SetCompression(false) // finish deflates the page contents (copyObject)
	p.SetAutoPageBreak(false, 0)
	p.SetMargins(marginX, marginTop, marginX)
	p.SetCellMargin(1.2)
	p.AddUTF8FontFromBytes(fontFamily, "", r.regular)
	return p
}

// info is the file's metadata, the same in the Info dictionary and in XMP.
func (r *Renderer) info(d einvoice.Document, facturX bool) docInfo {
	lc := localeFor(d.Language)
	title := lc.title(d)
	lang := d.Language
	if lang == "" {
		lang = "en"
	}
	return docInfo{
		Title:    r.cover.clean(title),
		Author:   r.cover.clean(d.Seller.Name),
		Subject:  r.cover.clean(title + " to " + d.Buyer.Name),
		Creator:  "invoicing",
		Producer: Producer,
		Date:     d.IssueDate,
		Lang:     lang,
		FacturX:  facturX,
	}
}
