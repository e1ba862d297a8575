package bench

import (
	"encoding/json"
	"fmt"
	"time"
)

// The request bodies of the service benchmark, and the same shapes for the
// generated events of the scale benchmark, so that rows read at a million
// invoices are the size of rows created through the API.

// lineSpec is one invoice line as a client sends it.
type lineSpec struct {
	Description     string `json:"description"`
	Quantity        string `json:"quantity"`
	Unit            string `json:"unit,omitempty"`
	UnitAmountMinor int64  `json:"unit_amount_minor"`
	TaxRateBps      int64  `json:"tax_rate_bps"`
}

var quantities = []string{"1", "2.5", "0.75", "10", "3.125", "40", "0.5"}

// lines returns n deterministic lines for seed.
func lines(seed uint64, n int) []lineSpec {
	out := make([]lineSpec, n)
	for k := range out {
		h := seed*0x9E3779B97F4A7C15 + uint64(k+1)*0xBF58476D1CE4E5B9
		h ^= h >> 31
		tax := int64(1900)
		if h%4 == 0 {
			tax = 700
		}
		out[k] = lineSpec{
			Description:     fmt.Sprintf("Consulting services, work package %d", k+1),
			Quantity:        quantities[h%uint64(len(quantities))],
			Unit:            "h",
			UnitAmountMinor: 1000 + int64((h>>8)%99000),
			TaxRateBps:      tax,
		}
	}
	return out
}

// address is the one every benchmark company and customer has.
type address struct {
	Line1       string `json:"line_1"`
	City        string `json:"city"`
	PostalCode  string `json:"postal_code"`
	CountryCode string `json:"country_code"`
}

type identifier struct {
	Scheme      string `json:"scheme"`
	Value       string `json:"value"`
	CountryCode string `json:"country_code,omitempty"`
}

// companyBody is a create-company request.
func companyBody(i int) []byte {
	b, _ := json.Marshal(struct {
		LegalName           string       `json:"legal_name"`
		Address             address      `json:"address"`
		DefaultCurrency     string       `json:"default_currency"`
		Email               string       `json:"email"`
		Identifiers         []identifier `json:"identifiers"`
		InvoiceNumberPrefix string       `json:"invoice_number_prefix"`
	}{
		LegalName:           fmt.Sprintf("Benchmark Company %02d GmbH", i),
		Address:             companyAddress(i),
		DefaultCurrency:     "EUR",
		Email:               fmt.Sprintf("billing@company%02d.example", i),
		Identifiers:         []identifier{{Scheme: "vat", Value: fmt.Sprintf("DE%09d", 100000000+i), CountryCode: "DE"}},
		InvoiceNumberPrefix: "INV-",
	})
	return b
}

func companyAddress(i int) address {
	return address{Line1: fmt.Sprintf("Hauptstraße %d", i+1), City: "Berlin", PostalCode: "10115", CountryCode: "DE"}
}

// customerBody is a create-customer request.
func customerBody(i int) []byte {
	b, _ := json.Marshal(struct {
		Name        string       `json:"name"`
		Address     address      `json:"address"`
		Email       string       `json:"email"`
		Identifiers []identifier `json:"identifiers"`
	}{
		Name:        fmt.Sprintf("Customer %04d Ltd", i),
		Address:     customerAddress(i),
		Email:       fmt.Sprintf("ap@customer%04d.example", i),
		Identifiers: []identifier{{Scheme: "vat", Value: fmt.Sprintf("GB%09d", 200000000+i), CountryCode: "GB"}},
	})
	return b
}

func customerAddress(i int) address {
	return address{Line1: fmt.Sprintf("%d High Street", i+1), City: "London", PostalCode: "EC1A 1BB", CountryCode: "GB"}
}

// invoiceRequest is a create-invoice request with five lines, the one
// source of both benchmarks' invoices: `make bench` sends it as JSON
// (invoiceBody), `make bench-scale` drafts it with the write side's own
// code (dataset.draft).
type invoiceRequest struct {
	CustomerID        string     `json:"customer_id"`
	IssueDate         string     `json:"issue_date"`
	Lines             []lineSpec `json:"lines"`
	ExternalReference string     `json:"external_reference,omitempty"`
	Notes             string     `json:"notes"`
}

// newInvoiceRequest is the request of invoice seed; externalRef is
// omitted when "".
func newInvoiceRequest(customerID string, issueDate time.Time, seed uint64, externalRef string) invoiceRequest {
	return invoiceRequest{
		CustomerID:        customerID,
		IssueDate:         issueDate.Format(time.DateOnly),
		Lines:             lines(seed, 5),
		ExternalReference: externalRef,
		Notes:             "Payable within 30 days. Thank you for your business.",
	}
}

// invoiceBody is newInvoiceRequest as the body of a create-invoice request.
func invoiceBody(customerID string, issueDate time.Time, seed uint64, externalRef string) []byte {
	b, _ := json.Marshal(newInvoiceRequest(customerID, issueDate, seed, externalRef))
	return b
}
