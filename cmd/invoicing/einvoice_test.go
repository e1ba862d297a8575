package main

import (
	"bytes"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// Issue 22, items 2 and 4: GET .../einvoice renders issued and void
// invoices in UBL or CII, byte-stable, with a strong ETag; a draft is 409;
// data that cannot make a valid document is 422 document_incomplete.

func (b billing) einvoice(t *testing.T, id, syntax string, headers map[string]string) response {
	t.Helper()
	path := b.path("/" + id + "/einvoice")
	if syntax != "" {
		path += "?syntax=" + syntax
	}
	return b.s.do(t, request{method: http.MethodGet, path: path, token: b.tok, headers: headers})
}

func (b billing) mustEInvoice(t *testing.T, id, syntax string) []byte {
	t.Helper()
	res := b.einvoice(t, id, syntax, nil)
	mustStatus(t, res, http.StatusOK)
	if ct := res.header.Get("Content-Type"); ct != "application/xml" {
		t.Fatalf("Content-Type = %q", ct)
	}
	return res.body
}

// issued drafts body and issues it, returning the invoice's id.
func (b billing) issued(t *testing.T, key, body string) string {
	t.Helper()
	id := b.create(t, key, body)["id"].(string)
	b.mustChange(t, b.issue(t, id, key))
	return id
}

func TestEInvoiceOfIssuedAndVoidInvoicesAndNotOfDrafts(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "einvoice", fullCompany)
	draftID := b.create(t, "einv-draft", fullInvoice(b.customerID))["id"].(string)
	res := b.einvoice(t, draftID, "", nil)
	mustStatus(t, res, http.StatusConflict)
	if code := errorCode(t, res); code != "invalid_state" {
		t.Fatalf("draft: code %q", code)
	}
	id := b.issued(t, "einv-issued", fullInvoice(b.customerID))
	inv := s.get(t, b.path("/"+id), b.tok).object(t)
	number := inv["number"].(string)
	ubl := b.mustEInvoice(t, id, "")
	if !bytes.Equal(ubl, b.mustEInvoice(t, id, "ubl")) || !bytes.Contains(ubl, []byte("<Invoice ")) || !bytes.Contains(ubl, []byte(number)) {
		t.Fatalf("default syntax is not UBL with the number %s:\n%s", number, ubl)
	}
	cii := b.mustEInvoice(t, id, "cii")
	if !bytes.Contains(cii, []byte("CrossIndustryInvoice")) || !bytes.Contains(cii, []byte(number)) {
		t.Fatalf("cii:\n%s", cii)
	}
	res = b.einvoice(t, id, "pdf", nil)
	mustStatus(t, res, http.StatusUnprocessableEntity)
	if got := detailPaths(t, res); !slices.Equal(got, []string{"syntax"}) {
		t.Fatalf("bad syntax paths %q", got)
	}
	b.mustChange(t, b.void(t, id, "einv-void", "duplicate"))
	if void := b.mustEInvoice(t, id, "ubl"); !bytes.Equal(void, ubl) {
		t.Errorf("a voided invoice renders another document:\n%s", void)
	}
	other := newBilling(t, s, "einvoice-other", fullCompany)
	mustStatus(t, other.einvoice(t, id, "", nil), http.StatusNotFound)
}

func TestEInvoiceETagAndAcceptNegotiation(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "einvoice-etag", fullCompany)
	id := b.issued(t, "etag-einvoice", fullInvoice(b.customerID))
	first := b.einvoice(t, id, "ubl", nil)
	mustStatus(t, first, http.StatusOK)
	tag := first.header.Get("ETag")
	if !strings.HasPrefix(tag, `"`) {
		t.Fatalf("ETag %q is not a strong tag", tag)
	}
	if cii := b.einvoice(t, id, "cii", nil); cii.header.Get("ETag") == tag {
		t.Errorf("UBL and CII share the ETag %s", tag)
	}
	notModified := b.einvoice(t, id, "ubl", map[string]string{"If-None-Match": tag})
	mustStatus(t, notModified, http.StatusNotModified)
	if len(notModified.body) != 0 || notModified.header.Get("ETag") != tag {
		t.Errorf("304: body %q, ETag %q", notModified.body, notModified.header.Get("ETag"))
	}
	for accept, status := range map[string]int{
		"application/xml": 200, "*/*": 200, "application/*": 200, "text/html, application/xml;q=0.5": 200,
		"application/json": 406, "application/pdf": 406, "application/xml;q=0": 406, "text/*": 406,
	} {
		res := b.einvoice(t, id, "ubl", map[string]string{"Accept": accept})
		mustStatus(t, res, status)
		if status == 406 && errorCode(t, res) != "not_acceptable" {
			t.Errorf("Accept %q: %s", accept, res.body)
		}
	}
	for accept, status := range map[string]int{"application/pdf": 406, "text/xml": 406, "*/*": 200, "application/*": 200, "application/json": 200} {
		res := s.do(t, request{method: http.MethodGet, path: b.path("/" + id), token: b.tok, headers: map[string]string{"Accept": accept}})
		mustStatus(t, res, status)
	}
}

// Each rule behind document_incomplete, through the API: the rule id in
// the message, the record field to fix in the path.
func TestEInvoiceDocumentIncompleteNamesRulesAndPaths(t *testing.T) {
	s := newService(t)
	bare := newBilling(t, s, "incomplete-bare", minimalCompany) // no identifiers
	taxed := newBilling(t, s, "incomplete-taxed", fullCompany)  // VAT id DE123
	line := func(rate int, category string) map[string]any {
		return map[string]any{"description": "x", "quantity": "1", "unit_amount_minor": 100, "tax_rate_bps": rate, "tax_category": category}
	}
	for _, tt := range []struct {
		name   string
		b      billing
		fields map[string]any
		want   map[string]string // rule → path
	}{
		{"standard rated without a seller VAT id", bare, map[string]any{"lines": []any{line(1900, "S")}},
			map[string]string{"BR-S-02": "issuer.identifiers", "BR-CO-26": "issuer.identifiers"}},
		{"exempt without a reason", taxed, map[string]any{"lines": []any{line(0, "E")}},
			map[string]string{"BR-E-10": "tax_exemptions"}},
		{"reverse charge without reason or buyer id", taxed, map[string]any{"lines": []any{line(0, "AE")}},
			map[string]string{"BR-AE-10": "tax_exemptions", "BR-AE-02": "customer.identifiers"}},
		{"intra-community supply without delivery", taxed, map[string]any{"lines": []any{line(0, "K")},
			"tax_exemptions": []any{map[string]any{"tax_category": "K", "reason_code": "VATEX-EU-IC"}}},
			map[string]string{"BR-IC-11": "delivery_date", "BR-IC-12": "delivery_address.country_code", "BR-IC-02": "customer.identifiers"}},
		{"export without a reason", taxed, map[string]any{"lines": []any{line(0, "G")}},
			map[string]string{"BR-G-10": "tax_exemptions"}},
		{"not subject to VAT with a seller VAT id", taxed, map[string]any{"lines": []any{line(0, "O")},
			"tax_exemptions": []any{map[string]any{"tax_category": "O", "reason": "Outside the scope"}}},
			map[string]string{"BR-O-02": "issuer.identifiers"}},
		{"a three-decimal currency", taxed, map[string]any{"currency": "BHD"},
			map[string]string{"BR-DEC-09": "currency"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			id := tt.b.issued(t, "incomplete-"+strings.ReplaceAll(tt.name, " ", "-"), tt.b.invoiceBody(t, tt.fields))
			res := tt.b.einvoice(t, id, "cii", nil)
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if code := errorCode(t, res); code != "document_incomplete" {
				t.Fatalf("code %q", code)
			}
			got := map[string]string{}
			e := res.object(t)["error"].(map[string]any)
			for _, d := range e["details"].([]any) {
				m := d.(map[string]any)
				msg, path := m["message"].(string), m["path"].(string)
				rule := strings.TrimPrefix(strings.SplitN(msg, "]", 2)[0], "[")
				got[rule] = path
			}
			for rule, path := range tt.want {
				if got[rule] != path {
					t.Errorf("rule %s: path %q, want %q (details %v)", rule, got[rule], path, got)
				}
			}
		})
	}
}

// The acceptance of item 1: a customer and a company updated after
// drafting; the e-invoice renders the snapshots, not the current records.
// And rendering is byte-stable across a projection rebuild.
func TestEInvoiceRendersTheSnapshotsAndIsStableAcrossARebuild(t *testing.T) {
	s := newService(t)
	tok := token(t, "einvoice-frozen")
	companyID := s.createCompany(t, tok, "frozen22-co", withFields(fullCompany, `"bank_account":`+bankAccount+`,"electronic_address":`+eaddrCompany))["id"].(string)
	customerID := s.createCustomer(t, tok, companyID, "frozen22-cu",
		withFields(fullCustomer, `"electronic_address":{"scheme":"EM","value":"ap@globex.example"}`))["id"].(string)
	b := billing{s: s, tok: tok, companyID: companyID, customerID: customerID}
	id := b.create(t, "frozen22-draft", documentInvoice(customerID))["id"].(string)
	company := "/v1/companies/" + companyID
	s.mustWrite(t, company, tok, s.patch(t, company, tok, "frozen22-patch-co",
		`{"legal_name":"Renamed AG","bank_account":{"iban":"GB82WEST12345698765432"},"electronic_address":null}`, nil))
	s.mustWrite(t, company+"/customers/"+customerID, tok, s.patch(t, company+"/customers/"+customerID, tok, "frozen22-patch-cu",
		`{"name":"Renamed Customer","electronic_address":{"value":"new@globex.example"}}`, nil))
	b.mustChange(t, b.issue(t, id, "frozen22-issue"))
	before := map[string][]byte{}
	for _, syntax := range []string{"ubl", "cii"} {
		doc := b.mustEInvoice(t, id, syntax)
		before[syntax] = doc
		for _, want := range []string{"Acme GmbH", "Globex", "DE89370400440532013000", "4000001000005", "ap@globex.example"} {
			if !bytes.Contains(doc, []byte(want)) {
				t.Errorf("%s lacks the snapshot's %q", syntax, want)
			}
		}
		for _, unwanted := range []string{"Renamed", "GB82WEST", "new@globex"} {
			if bytes.Contains(doc, []byte(unwanted)) {
				t.Errorf("%s renders the current record's %q", syntax, unwanted)
			}
		}
		if again := b.mustEInvoice(t, id, syntax); !bytes.Equal(again, doc) {
			t.Errorf("%s: two renders differ", syntax)
		}
	}
	if out, err := runCommand(t, s, "projections", "rebuild"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	for syntax, doc := range before {
		if after := b.mustEInvoice(t, id, syntax); !bytes.Equal(after, doc) {
			t.Errorf("%s: the render after a rebuild differs", syntax)
		}
	}
}
