package transport

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/invoicing/invoicing/einvoice"
	"github.com/invoicing/invoicing/einvoice/pdf"
)

// GET /v1/companies/{company_id}/invoices/{invoice_id}/pdf: the invoice as a
// printable PDF. An issued or void invoice carries its CII e-invoice as
// factur-x.xml, so it needs what the e-invoice needs (422
// document_incomplete otherwise); a draft renders stamped DRAFT, without
// XML, whatever its data.

const pdfMediaType = "application/pdf"

// errNoPDFRenderer: the server was built without Config.PDF.
var errNoPDFRenderer = errors.New("transport: no PDF renderer configured (Config.PDF)")

func (s *server) getInvoicePDF(w http.ResponseWriter, r *http.Request) error {
	companyID, invoiceID, err := invoiceParams(r)
	if err != nil {
		return err
	}
	return s.servePDF(w, r, func() (einvoice.Document, error) { return s.invoiceDocument(r, companyID, invoiceID) })
}

// servePDF answers a GET of the PDF of the document load reads (an
// invoice's, a credit note's).
func (s *server) servePDF(w http.ResponseWriter, r *http.Request, load func() (einvoice.Document, error)) error {
	if !acceptable(r.Header.Values("Accept"), pdfMediaType) {
		return errNotAcceptable
	}
	if s.PDF == nil {
		return errNoPDFRenderer
	}
	doc, err := load()
	if err != nil {
		return err
	}
	var xml []byte
	if doc.Status != einvoice.StatusDraft {
		if problems := einvoice.Check(doc); len(problems) > 0 {
			return &documentIncompleteError{problems: problems}
		}
		if xml, err = einvoice.RenderCII(doc); err != nil {
			return fmt.Errorf("render the CII e-invoice of %s for its PDF: %w", doc.Number, err)
		}
	}
	body, err := s.PDF.Render(doc, pdf.Options{FacturX: xml})
	if err != nil {
		return fmt.Errorf("render the PDF of %s: %w", doc.Number, err)
	}
	writeDocument(w, r, pdfMediaType, body)
	return nil
}
