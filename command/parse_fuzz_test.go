package command

import (
	"errors"
	"testing"
	"unicode/utf8"

	"github.com/invoicing/invoicing/events"
)

// FuzzParseCreateInvoice: any JSON object either yields violations with
// paths, or a request whose every field keeps the spec's rules.
func FuzzParseCreateInvoice(f *testing.F) {
	f.Add([]byte(`{"customer_id":"01a20588-7ee3-7d5f-b3e9-b847ee0b78f7","issue_date":"2025-01-15","lines":[{"description":"x","quantity":"1.5","unit_amount_minor":100,"tax_rate_bps":1900}]}`))
	f.Add([]byte(`{"customer_id":"x","issue_date":"2025-02-30","due_date":"2025-01-01","lines":[{"quantity":"0"}],"extra":1}`))
	f.Add([]byte(`{"lines":[{"description":"é","quantity":"999999999.999","unit_amount_minor":9007199254740991,"tax_rate_bps":10000,"unit":null}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := ParseCreateInvoice(data)
		if err != nil {
			return
		}
		in, err := body.Valid()
		var verr *ValidationError
		if err != nil {
			if !errors.As(err, &verr) || len(verr.Violations) == 0 {
				t.Fatalf("error %v is not a ValidationError with violations", err)
			}
			for _, v := range verr.Violations {
				if v.Path == "" || v.Message == "" {
					t.Fatalf("violation without path or message: %+v", v)
				}
			}
			return
		}
		if len(in.Lines) < 1 || len(in.Lines) > maxLines {
			t.Fatalf("accepted %d lines", len(in.Lines))
		}
		for _, l := range in.Lines {
			if _, err := events.ParseQuantity(l.Quantity); err != nil {
				t.Fatalf("accepted quantity %q", l.Quantity)
			}
			if n := utf8.RuneCountInString(l.Description); n < 1 || n > 500 {
				t.Fatalf("accepted a description of %d code points", n)
			}
			if l.UnitAmountMinor < 0 || l.UnitAmountMinor > events.MaxAmountMinor || l.TaxRateBps < 0 || l.TaxRateBps > 10000 {
				t.Fatalf("accepted out-of-range amounts %+v", l)
			}
		}
		if in.DueDate != "" && in.DueDate < in.IssueDate {
			t.Fatalf("accepted due_date %s before issue_date %s", in.DueDate, in.IssueDate)
		}
	})
}

// FuzzParseCreateCompany: never panics; accepted requests keep the rules.
func FuzzParseCreateCompany(f *testing.F) {
	f.Add([]byte(`{"legal_name":"Acme","address":{"line_1":"a","city":"b","postal_code":"c","country_code":"DE"},"default_currency":"EUR"}`))
	f.Add([]byte(`{"legal_name":5,"identifiers":[{"scheme":"VAT"}],"default_payment_terms_days":1e3}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		body, err := ParseCreateCompany(data)
		if err != nil {
			return
		}
		c, err := body.Valid()
		if err != nil {
			return
		}
		if c.LegalName == "" || !currency.pattern.MatchString(c.DefaultCurrency) || len(c.Identifiers) > maxIdentifiers {
			t.Fatalf("accepted an invalid company %+v", c)
		}
		if d := c.DefaultPaymentTermsDays; d != nil && (*d < 0 || *d > 365) {
			t.Fatalf("accepted payment terms %d", *d)
		}
	})
}
