package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Issue 21, item 1: PATCH of companies and customers (JSON Merge Patch over
// the create request's fields).

// patchStep is one merge patch of a record and what it must change.
type patchStep struct {
	name  string
	patch string
	want  map[string]any // dotted path → value after the patch (absent: removed)
}

// runPatchSteps applies steps in order to the record at path: each answer
// is 200 with the whole record, exactly want changed, version +1, an ETag,
// GET agreeing at once, agree (the lists) too, and an immediate replay the
// same answer. At the end every step is replayed again: the first answers,
// whatever happened since.
func (s *service) runPatchSteps(t *testing.T, path, tok, keyPrefix string, steps []patchStep, agree func(*testing.T, map[string]any)) map[string]any {
	t.Helper()
	before := s.get(t, path, tok).object(t)
	firsts := make([]response, len(steps))
	for i, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			req := request{method: http.MethodPatch, path: path, token: tok, key: fmt.Sprintf("%s-%02d", keyPrefix, i),
				body: step.patch, contentType: mergePatchType}
			res := s.do(t, req)
			after := s.mustWrite(t, path, tok, res)
			checkChanged(t, before, after, step.want)
			agree(t, after)
			s.mustReplay(t, req, res)
			firsts[i], before = res, after
		})
	}
	t.Run("replays answer the first answers", func(t *testing.T) {
		for i, step := range steps {
			if firsts[i].status == 0 {
				continue // the step failed
			}
			s.mustReplay(t, request{method: http.MethodPatch, path: path, token: tok, key: fmt.Sprintf("%s-%02d", keyPrefix, i),
				body: step.patch, contentType: mergePatchType}, firsts[i])
		}
	})
	return before
}

// agreeInList checks that the list at listPath serves rec as GET does, and
// that the external_reference filter finds it by its current value only.
func (s *service) agreeInList(listPath, tok string, oldRefs *[]string) func(*testing.T, map[string]any) {
	return func(t *testing.T, rec map[string]any) {
		t.Helper()
		item := find(s.listed(t, listPath, tok, nil), rec["id"].(string))
		if item == nil || mustJSON(t, item) != mustJSON(t, rec) {
			t.Errorf("the list serves %v\nwant the record %v", item, rec)
		}
		ref, _ := rec["external_reference"].(string)
		if ref != "" {
			if got := ids(s.listed(t, listPath, tok, url.Values{"external_reference": {ref}})); strings.Join(got, ",") != rec["id"] {
				t.Errorf("external_reference=%s lists %v, want only %s", ref, got, rec["id"])
			}
		}
		for _, old := range *oldRefs {
			if old != ref {
				if got := ids(s.listed(t, listPath, tok, url.Values{"external_reference": {old}})); len(got) != 0 {
					t.Errorf("external_reference=%s (a former value) still lists %v", old, got)
				}
			}
		}
		if ref != "" {
			*oldRefs = append(*oldRefs, ref)
		}
	}
}

var companyPatchSteps = []patchStep{
	{"text", `{"legal_name":"Acme Holding GmbH","trading_name":"Acme Holding"}`,
		map[string]any{"legal_name": "Acme Holding GmbH", "trading_name": "Acme Holding"}},
	{"address, other address fields kept", `{"address":{"line_1":"Neue Str. 5","city":"Hamburg","postal_code":"20095"}}`,
		map[string]any{"address.line_1": "Neue Str. 5", "address.city": "Hamburg", "address.postal_code": "20095"}},
	{"nested null removes an address field", `{"address":{"line_2":null,"region":null}}`,
		map[string]any{"address.line_2": absent, "address.region": absent}},
	{"null removes optional fields", `{"trading_name":null,"email":null}`,
		map[string]any{"trading_name": absent, "email": absent}},
	{"identifiers replace the array", `{"identifiers":[{"scheme":"vat","value":"DE999","country_code":"DE"},{"scheme":"de.hrb","value":"HRB 1"}]}`,
		map[string]any{"identifiers": []any{map[string]any{"scheme": "vat", "value": "DE999", "country_code": "DE"}, map[string]any{"scheme": "de.hrb", "value": "HRB 1"}}}},
	{"defaults and the number prefix", `{"default_language":"fr","default_payment_terms_days":14,"default_currency":"CHF","invoice_number_prefix":"RE-"}`,
		map[string]any{"default_language": "fr", "default_payment_terms_days": 14, "default_currency": "CHF", "invoice_number_prefix": "RE-"}},
	{"null restores the defaults", `{"default_language":null,"default_payment_terms_days":null,"identifiers":null}`,
		map[string]any{"default_language": "en", "default_payment_terms_days": 30, "identifiers": []any{}}},
	{"external_reference and email set", `{"external_reference":"erp-2","email":"ap@acme.example"}`,
		map[string]any{"external_reference": "erp-2", "email": "ap@acme.example"}},
	{"null removes the number prefix", `{"invoice_number_prefix":null}`,
		map[string]any{"invoice_number_prefix": ""}},
}

func TestPatchCompanyFieldFamilies(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	companyID := s.createCompany(t, tok, "patch-company", fullCompany)["id"].(string)
	s.createCompany(t, tok, "patch-company-bystander", minimalCompany)
	oldRefs := []string{"erp-1"}
	s.runPatchSteps(t, "/v1/companies/"+companyID, tok, "patch-company", companyPatchSteps, s.agreeInList("/v1/companies", tok, &oldRefs))
	streams, n := s.streamsOf(t, "Company", "company_id", companyID)
	if streams != 1 || n != 1+len(companyPatchSteps) {
		t.Errorf("the company's events: %d in %d streams; want %d in its one stream", n, streams, 1+len(companyPatchSteps))
	}
}

var customerPatchSteps = []patchStep{
	{"text", `{"name":"Globex International"}`, map[string]any{"name": "Globex International"}},
	{"address, other address fields kept", `{"address":{"line_1":"2 Side St","city":"Shelbyville","country_code":"CA"}}`,
		map[string]any{"address.line_1": "2 Side St", "address.city": "Shelbyville", "address.country_code": "CA"}},
	{"nested null removes an address field", `{"address":{"line_2":null}}`, map[string]any{"address.line_2": absent}},
	{"null removes optional fields", `{"email":null,"external_reference":null}`, map[string]any{"email": absent, "external_reference": absent}},
	{"identifiers replace the array", `{"identifiers":[{"scheme":"ca.bn","value":"123456789","country_code":"CA"}]}`,
		map[string]any{"identifiers": []any{map[string]any{"scheme": "ca.bn", "value": "123456789", "country_code": "CA"}}}},
	{"null restores the identifiers' default", `{"identifiers":null}`, map[string]any{"identifiers": []any{}}},
	{"external_reference and email set", `{"external_reference":"crm-2","email":"billing@globex.example"}`,
		map[string]any{"external_reference": "crm-2", "email": "billing@globex.example"}},
}

func TestPatchCustomerFieldFamilies(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	companyID := s.createCompany(t, tok, "patch-customer-company", minimalCompany)["id"].(string)
	customers := "/v1/companies/" + companyID + "/customers"
	customerID := s.createCustomer(t, tok, companyID, "patch-customer", fullCustomer)["id"].(string)
	s.createCustomer(t, tok, companyID, "patch-customer-bystander", minimalCustomer)
	oldRefs := []string{"crm-1"}
	s.runPatchSteps(t, customers+"/"+customerID, tok, "patch-customer", customerPatchSteps, s.agreeInList(customers, tok, &oldRefs))
	streams, n := s.streamsOf(t, "Customer", "customer_id", customerID)
	if streams != 1 || n != 1+len(customerPatchSteps) {
		t.Errorf("the customer's events: %d in %d streams; want %d in its one stream", n, streams, 1+len(customerPatchSteps))
	}
}

// badPatch is a patch refused with 422 validation_failed at path.
type badPatch struct{ name, patch, path string }

// readOnlyPatches are the server's fields every record refuses in a patch.
func readOnlyPatches(fields ...string) []badPatch {
	var out []badPatch
	for _, f := range append([]string{"id", "version", "archived_at", "created_at", "updated_at"}, fields...) {
		value := `"2025-01-01T00:00:00Z"`
		switch f {
		case "version", "subtotal_minor", "tax_minor", "total_minor":
			value = "7"
		case "id", "company_id":
			value = `"0190a0c0-0000-7000-8000-000000000000"`
		case "archived_at":
			value = "null"
		case "customer", "issuer":
			value = `{"name":"X"}`
		case "status":
			value = `"issued"`
		case "number", "void_reason", "customer_name":
			value = `"X"`
		}
		out = append(out, badPatch{"read-only " + f, `{"` + f + `":` + value + `}`, f})
	}
	return out
}

// mustRefusePatches sends each bad patch to path and expects 422
// validation_failed naming exactly its path; the record stays as it was.
func (s *service) mustRefusePatches(t *testing.T, path, tok, keyPrefix string, bad []badPatch) {
	t.Helper()
	before := s.get(t, path, tok)
	for i, bp := range bad {
		t.Run(bp.name, func(t *testing.T) {
			res := s.patch(t, path, tok, fmt.Sprintf("%s-%03d", keyPrefix, i), bp.patch, nil)
			mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", bp.path)
		})
	}
	if after := s.get(t, path, tok); string(after.body) != string(before.body) {
		t.Errorf("refused patches changed the record:\n%s\n%s", before.body, after.body)
	}
}

func TestPatchCompanyRefusesBadPatchesWithTheirPath(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	companyID := s.createCompany(t, tok, "bad-patch-company", fullCompany)["id"].(string)
	bad := append([]badPatch{
		{"unknown field", `{"colour":"red"}`, "colour"},
		{"unknown address field", `{"address":{"street":"x"}}`, "address.street"},
		{"unknown identifier field", `{"identifiers":[{"scheme":"vat","value":"1","kind":"x"}]}`, "identifiers[0].kind"},
		{"null legal_name", `{"legal_name":null}`, "legal_name"},
		{"null address", `{"address":null}`, "address"},
		{"null address.city", `{"address":{"city":null}}`, "address.city"},
		{"null default_currency", `{"default_currency":null}`, "default_currency"},
		{"empty legal_name", `{"legal_name":""}`, "legal_name"},
		{"legal_name of 201", `{"legal_name":"` + strings.Repeat("x", 201) + `"}`, "legal_name"},
		{"address not an object", `{"address":"Berlin"}`, "address"},
		{"address.country_code of three letters", `{"address":{"country_code":"DEU"}}`, "address.country_code"},
		{"default_currency lowercase", `{"default_currency":"eur"}`, "default_currency"},
		{"default_payment_terms_days 366", `{"default_payment_terms_days":366}`, "default_payment_terms_days"},
		{"email invalid", `{"email":"not-an-email"}`, "email"},
		{"identifier scheme uppercase", `{"identifiers":[{"scheme":"VAT","value":"1"}]}`, "identifiers[0].scheme"},
		{"invoice_number_prefix with a space", `{"invoice_number_prefix":"INV 1"}`, "invoice_number_prefix"},
		{"NUL in trading_name", `{"trading_name":"a\u0000b"}`, "trading_name"},
		{"NUL in address.line_1", `{"address":{"line_1":"a\u0000b"}}`, "address.line_1"},
		{"NUL in an identifier", `{"identifiers":[{"scheme":"vat","value":"a\u0000b"}]}`, "identifiers[0].value"},
	}, readOnlyPatches()...)
	s.mustRefusePatches(t, "/v1/companies/"+companyID, tok, "bad-patch-company", bad)
	if n := s.eventCount(t, "CompanyUpdated", "company_id", companyID); n != 0 {
		t.Errorf("%d CompanyUpdated events after refused patches, want 0", n)
	}
}

func TestPatchCustomerRefusesBadPatchesWithTheirPath(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	companyID := s.createCompany(t, tok, "bad-patch-customer-company", minimalCompany)["id"].(string)
	customerID := s.createCustomer(t, tok, companyID, "bad-patch-customer", fullCustomer)["id"].(string)
	bad := append([]badPatch{
		{"unknown field", `{"colour":"red"}`, "colour"},
		{"unknown address field", `{"address":{"street":"x"}}`, "address.street"},
		{"null name", `{"name":null}`, "name"},
		{"null address", `{"address":null}`, "address"},
		{"null address.postal_code", `{"address":{"postal_code":null}}`, "address.postal_code"},
		{"empty name", `{"name":""}`, "name"},
		{"address.country_code lowercase", `{"address":{"country_code":"us"}}`, "address.country_code"},
		{"email invalid", `{"email":"a@"}`, "email"},
		{"identifiers not an array", `{"identifiers":"vat"}`, "identifiers"},
		{"21 identifiers", mustJSONAny(map[string]any{"identifiers": identifiersN(21)}), "identifiers"},
		{"NUL in name", `{"name":"a\u0000b"}`, "name"},
		{"NUL in address.city", `{"address":{"city":"a\u0000b"}}`, "address.city"},
	}, readOnlyPatches("company_id")...)
	s.mustRefusePatches(t, "/v1/companies/"+companyID+"/customers/"+customerID, tok, "bad-patch-customer", bad)
	if n := s.eventCount(t, "CustomerUpdated", "customer_id", customerID); n != 0 {
		t.Errorf("%d CustomerUpdated events after refused patches, want 0", n)
	}
}

// TestPatchRequestRules: what every write checks (media type, body, key,
// the record) holds for PATCH too, and a patch that changes nothing appends
// nothing.
func TestPatchRequestRules(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	company := s.createCompany(t, tok, "patch-rules-company", fullCompany)
	path := "/v1/companies/" + company["id"].(string)
	t.Run("media types", func(t *testing.T) {
		for i, ct := range []string{"text/plain", "application/x-www-form-urlencoded", "application/jsonx"} {
			res := s.do(t, request{method: http.MethodPatch, path: path, token: tok, key: fmt.Sprint("patch-media-", i), body: `{}`, contentType: ct})
			mustFail(t, res, http.StatusUnsupportedMediaType, "unsupported_media_type")
		}
		for i, ct := range []string{mergePatchType, mergePatchType + "; charset=utf-8", "application/json", "application/json; charset=utf-8"} {
			res := s.do(t, request{method: http.MethodPatch, path: path, token: tok, key: fmt.Sprint("patch-media-ok-", i),
				body: fmt.Sprintf(`{"trading_name":"Acme %d"}`, i), contentType: ct})
			s.mustWrite(t, path, tok, res)
		}
	})
	for _, tt := range []struct{ name, key, body string }{
		{"no key", "", `{"legal_name":"X"}`},
		{"a key of 7 characters", "1234567", `{"legal_name":"X"}`},
		{"an array", "patch-malformed-1", `[{"legal_name":"X"}]`},
		{"null", "patch-malformed-2", `null`},
		{"a string", "patch-malformed-3", `"X"`},
		{"a syntax error", "patch-malformed-4", `{"legal_name":`},
		{"an empty body", "patch-malformed-5", ``},
		{"a duplicate key", "patch-malformed-6", `{"legal_name":"A","legal_name":"B"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mustFail(t, s.do(t, request{method: http.MethodPatch, path: path, token: tok, key: tt.key, body: tt.body,
				contentType: mergePatchType}), http.StatusBadRequest, "malformed_request")
		})
	}
	t.Run("another account's company, an unknown one, a malformed id", func(t *testing.T) {
		mustFail(t, s.patch(t, path, token(t, "globex"), "patch-tenancy-1", `{"legal_name":"X"}`, nil), http.StatusNotFound, "not_found")
		mustFail(t, s.patch(t, "/v1/companies/0190a0c0-0000-7000-8000-000000000000", tok, "patch-tenancy-2", `{"legal_name":"X"}`, nil), http.StatusNotFound, "not_found")
		mustFail(t, s.patch(t, "/v1/companies/nope", tok, "patch-tenancy-3", `{"legal_name":"X"}`, nil), http.StatusUnprocessableEntity, "validation_failed", "company_id")
	})
	t.Run("a read-only token", func(t *testing.T) {
		mustStatus(t, s.patch(t, path, token(t, "acme", "invoicing:read"), "patch-scope-1", `{"legal_name":"X"}`, nil), http.StatusForbidden)
	})
	t.Run("the same key with another body", func(t *testing.T) {
		s.mustWrite(t, path, tok, s.patch(t, path, tok, "patch-reused", `{"legal_name":"First GmbH"}`, nil))
		mustFail(t, s.patch(t, path, tok, "patch-reused", `{"legal_name":"Second GmbH"}`, nil), http.StatusConflict, "idempotency_key_reused")
	})
	t.Run("a patch that changes nothing appends nothing", func(t *testing.T) {
		current := s.get(t, path, tok)
		cur := current.object(t)
		events := s.eventCount(t, "CompanyUpdated", "company_id", cur["id"].(string))
		for i, body := range []string{`{}`, mustJSON(t, map[string]any{"legal_name": cur["legal_name"], "address": map[string]any{"city": "Berlin"}}),
			`{"default_language":"de"}`} {
			res := s.patch(t, path, tok, fmt.Sprint("patch-noop-", i), body, nil)
			if got := s.mustWrite(t, path, tok, res); mustJSON(t, got) != mustJSON(t, cur) {
				t.Errorf("no-op patch %s answered\n%v\nwant the current record\n%v", body, got, cur)
			}
		}
		if n := s.eventCount(t, "CompanyUpdated", "company_id", cur["id"].(string)); n != events {
			t.Errorf("no-op patches appended %d events", n-events)
		}
	})
}

// TestChangeKeysAreScopedToAccountOperationAndPath: one idempotency key
// used for patches of two companies, for an archive and a restore of one,
// and by another account, is four independent writes each time.
func TestChangeKeysAreScopedToAccountOperationAndPath(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	a := "/v1/companies/" + s.createCompany(t, tok, "scope-company-a", minimalCompany)["id"].(string)
	b := "/v1/companies/" + s.createCompany(t, tok, "scope-company-b", minimalCompany)["id"].(string)
	const key = "one-key-for-all"
	for _, path := range []string{a, b} {
		if got := s.mustWrite(t, path, tok, s.patch(t, path, tok, key, `{"trading_name":"Scoped"}`, nil)); got["version"] != 2.0 {
			t.Errorf("patch of %s with a key used elsewhere: version %v, want 2", path, got["version"])
		}
	}
	if got := s.mustWrite(t, a, tok, s.action(t, a, "archive", tok, key, "", nil)); got["version"] != 3.0 || got["archived_at"] == nil {
		t.Errorf("archive with the patch's key: %v", got)
	}
	if got := s.mustWrite(t, a, tok, s.action(t, a, "unarchive", tok, key, "", nil)); got["version"] != 4.0 || got["archived_at"] != nil {
		t.Errorf("restore with the archive's key: %v", got)
	}
	other := token(t, "globex")
	c := "/v1/companies/" + s.createCompany(t, other, "scope-company-c", minimalCompany)["id"].(string)
	if got := s.mustWrite(t, c, other, s.patch(t, c, other, key, `{"trading_name":"Scoped"}`, nil)); got["version"] != 2.0 {
		t.Errorf("another account's patch with the same key: version %v, want 2", got["version"])
	}
}
