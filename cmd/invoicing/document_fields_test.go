package main

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Issue 22, item 1: the document fields are optional, checked at drafting
// and in revisions with their paths, and every string among them keeps
// the text rules.

const (
	bankAccount    = `{"iban":"DE89370400440532013000","bic":"COBADEFFXXX","account_name":"Acme GmbH"}`
	eaddrCompany   = `{"scheme":"0088","value":"4000001000005"}`
	documentFields = `"buyer_reference":"04011000-12345-34","tax_exemptions":[{"tax_category":"E","reason":"Art. 132","reason_code":"VATEX-EU-132"}],` +
		`"delivery_date":"2025-01-10","delivery_address":{"line_1":"Dock 4","city":"Hamburg","postal_code":"20457","country_code":"DE"},` +
		`"billing_period":{"start":"2025-01-01","end":"2025-01-31"}`
)

// withFields adds members (JSON text without braces) to a JSON object.
func withFields(body, members string) string {
	return strings.TrimSuffix(strings.TrimSpace(body), "}") + "," + members + "}"
}

func documentInvoice(customerID string) string {
	return withFields(fullInvoice(customerID), documentFields)
}

func TestDocumentFieldsKeepTheTextRules(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "hostile-22", fullCompany)
	withNUL := func(old string) string { return old[:len(old)/2] + "\x00" + old[len(old)/2:] }
	cases := []struct {
		kind, url, body string
		paths           []string
	}{
		{"company", "/v1/companies", withFields(fullCompany, `"bank_account":`+bankAccount+`,"electronic_address":`+eaddrCompany),
			stringPaths("", "bank_account.iban", "bank_account.bic", "bank_account.account_name", "electronic_address.scheme", "electronic_address.value")},
		{"customer", "/v1/companies/" + b.companyID + "/customers", withFields(fullCustomer, `"electronic_address":{"scheme":"EM","value":"ap@globex.example"}`),
			stringPaths("", "electronic_address.scheme", "electronic_address.value")},
		{"invoice", b.path(""), documentInvoice(b.customerID), slices.Concat(
			stringPaths("", "buyer_reference", "delivery_date", "billing_period.start", "billing_period.end"),
			stringPaths("tax_exemptions[0].", "tax_category", "reason", "reason_code"),
			stringPaths("delivery_address.", "line_1", "city", "postal_code", "country_code"))},
	}
	for _, c := range cases {
		for _, path := range c.paths {
			t.Run(c.kind+"/"+path, func(t *testing.T) {
				res := s.post(t, c.url, b.tok, "nul22-"+c.kind+"-"+path, withValueAt(t, c.body, path, withNUL))
				mustStatus(t, res, http.StatusUnprocessableEntity)
				if got := detailPaths(t, res); !slices.Equal(got, []string{path}) {
					t.Fatalf("details paths = %q, want [%q]", got, path)
				}
			})
		}
	}
}

func TestDocumentFieldsAreCheckedAtDrafting(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "drafting-22", fullCompany)
	line := func(extra string) string {
		return `{"description":"x","quantity":"1","unit_amount_minor":100,"tax_rate_bps":` + extra + `}`
	}
	invoice := func(lines, members string) string {
		body := `{"customer_id":"` + b.customerID + `","issue_date":"2025-01-15","lines":[` + lines + `]`
		if members != "" {
			body += "," + members
		}
		return body + "}"
	}
	for _, tt := range []struct {
		name, body string
		paths      []string // nil: accepted
	}{
		{"every field, valid", documentInvoice(b.customerID), nil},
		{"S needs a rate", invoice(line(`0,"tax_category":"S"`), ""), []string{"lines[0].tax_category"}},
		{"E forbids a rate", invoice(line(`700,"tax_category":"E"`), ""), []string{"lines[0].tax_category"}},
		{"AE, K, G, O forbid a rate", invoice(line(`1,"tax_category":"AE"`)+","+line(`1,"tax_category":"K"`)+","+line(`1,"tax_category":"G"`), ""),
			[]string{"lines[0].tax_category", "lines[1].tax_category", "lines[2].tax_category"}},
		{"L and M take any rate", invoice(line(`700,"tax_category":"L"`)+","+line(`0,"tax_category":"M"`), ""), nil},
		{"an unknown category", invoice(line(`0,"tax_category":"X"`), ""), []string{"lines[0].tax_category"}},
		{"O alone", invoice(line(`0,"tax_category":"O"`)+","+line(`0,"tax_category":"O"`), ""), nil},
		{"O mixed with others", invoice(line(`0,"tax_category":"O"`)+","+line(`1900`)+","+line(`0`), ""),
			[]string{"lines[1].tax_category", "lines[2].tax_category"}},
		{"a unit code", invoice(line(`0,"unit_code":"HUR"`), ""), nil},
		{"a bad unit code", invoice(line(`0,"unit_code":"hour"`), ""), []string{"lines[0].unit_code"}},
		{"an exemption of a taxed category", invoice(line(`0`), `"tax_exemptions":[{"tax_category":"S","reason":"r"}]`), []string{"tax_exemptions[0].tax_category"}},
		{"an exemption twice", invoice(line(`0`), `"tax_exemptions":[{"tax_category":"E","reason":"r"},{"tax_category":"E","reason_code":"VATEX-EU-132"}]`),
			[]string{"tax_exemptions[1].tax_category"}},
		{"an exemption without reason or code", invoice(line(`0`), `"tax_exemptions":[{"tax_category":"E"}]`), []string{"tax_exemptions[0]"}},
		{"a bad reason code", invoice(line(`0`), `"tax_exemptions":[{"tax_category":"E","reason_code":"vatex eu"}]`), []string{"tax_exemptions[0].reason_code"}},
		{"a period that ends before it starts", invoice(line(`0`), `"billing_period":{"start":"2025-02-01","end":"2025-01-31"}`), []string{"billing_period.end"}},
		{"an empty period", invoice(line(`0`), `"billing_period":{}`), []string{"billing_period"}},
		{"a period of year 0", invoice(line(`0`), `"billing_period":{"start":"0000-12-01"}`), []string{"billing_period.start"}},
		{"a delivery date of year 10000", invoice(line(`0`), `"delivery_date":"10000-01-01"`), []string{"delivery_date"}},
		{"a delivery address without country", invoice(line(`0`), `"delivery_address":{"line_1":"a","city":"b","postal_code":"c"}`),
			[]string{"delivery_address.country_code"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "draft22-" + strings.ReplaceAll(tt.name, " ", "-")
			if tt.paths == nil {
				b.create(t, key, tt.body)
				return
			}
			res := s.post(t, b.path(""), b.tok, key, tt.body)
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if got := detailPaths(t, res); !slices.Equal(got, tt.paths) {
				t.Fatalf("paths = %q, want %q", got, tt.paths)
			}
		})
	}
}

func TestCompanyAndCustomerDocumentFieldsThroughCreateAndPatch(t *testing.T) {
	s := newService(t)
	tok := token(t, "records-22")
	co := s.createCompany(t, tok, "records22-co", withFields(fullCompany, `"bank_account":`+bankAccount+`,"electronic_address":`+eaddrCompany))
	if ba, _ := co["bank_account"].(map[string]any); ba["iban"] != "DE89370400440532013000" || co["electronic_address"] == nil {
		t.Fatalf("company = %v", co)
	}
	company := "/v1/companies/" + co["id"].(string)
	for _, tt := range []struct {
		name, body string
		paths      []string
	}{
		{"wrong IBAN check digits", `{"bank_account":{"iban":"DE88370400440532013000"}}`, []string{"bank_account.iban"}},
		{"an IBAN with spaces", `{"bank_account":{"iban":"DE89 3704 0044 0532 0130 00"}}`, []string{"bank_account.iban"}},
		{"a bad BIC", `{"bank_account":{"bic":"COBA"}}`, []string{"bank_account.bic"}},
		{"no IBAN", `{"bank_account":{"iban":null}}`, []string{"bank_account.iban"}},
		{"a bad EAS scheme", `{"electronic_address":{"scheme":"gln"}}`, []string{"electronic_address.scheme"}},
		{"an unknown member", `{"electronic_address":{"url":"x"}}`, []string{"electronic_address.url"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			res := s.patch(t, company, tok, "records22-"+strings.ReplaceAll(tt.name, " ", "-"), tt.body, nil)
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if got := detailPaths(t, res); !slices.Equal(got, tt.paths) {
				t.Fatalf("paths = %q, want %q", got, tt.paths)
			}
		})
	}
	got := s.mustWrite(t, company, tok, s.patch(t, company, tok, "records22-bic", `{"bank_account":{"bic":null,"account_name":"Acme"},"electronic_address":null}`, nil))
	if ba := got["bank_account"].(map[string]any); ba["bic"] != nil || ba["account_name"] != "Acme" || ba["iban"] != "DE89370400440532013000" {
		t.Errorf("bank_account after the patch = %v", ba)
	}
	if _, ok := got["electronic_address"]; ok {
		t.Errorf("electronic_address after null = %v", got["electronic_address"])
	}
	cu := s.createCustomer(t, tok, co["id"].(string), "records22-cu", withFields(fullCustomer, `"electronic_address":{"scheme":"EM","value":"ap@globex.example"}`))
	customer := company + "/customers/" + cu["id"].(string)
	got = s.mustWrite(t, customer, tok, s.patch(t, customer, tok, "records22-cu-patch", `{"electronic_address":{"value":"billing@globex.example"}}`, nil))
	if ea := got["electronic_address"].(map[string]any); ea["scheme"] != "EM" || ea["value"] != "billing@globex.example" {
		t.Errorf("customer electronic_address after the patch = %v", ea)
	}
}
