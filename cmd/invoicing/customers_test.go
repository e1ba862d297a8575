package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/uuid"
)

const minimalCustomer = `{"name":"Globex Corp","address":{"line_1":"1 Main St","city":"Springfield","postal_code":"12345","country_code":"US"}}`

// createCustomer creates a customer of company and checks the GET right after.
func (s *service) createCustomer(t *testing.T, tok, companyID, key, body string) map[string]any {
	t.Helper()
	return s.mustCreate(t, "/v1/companies/"+companyID+"/customers", tok, key, body).object(t)
}

func customerWith(t *testing.T, field string, value any) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(minimalCustomer), &m); err != nil {
		t.Fatal(err)
	}
	switch {
	case value == nil:
		delete(m, field)
	case strings.HasPrefix(field, "address."):
		m["address"].(map[string]any)[strings.TrimPrefix(field, "address.")] = value
	default:
		m[field] = value
	}
	return mustJSON(t, m)
}

func TestCreateCustomerRendersEveryField(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	company := s.createCompany(t, tok, "cust-company", minimalCompany)
	companyID := company["id"].(string)
	res := s.mustCreate(t, "/v1/companies/"+companyID+"/customers", tok, "cust-every-field", `{"name":"Globex","address":{"line_1":"1 Main St","line_2":"Suite 5","city":"Springfield","region":"IL","postal_code":"62701","country_code":"US"},"email":"ap@globex.test","external_reference":"crm-7","identifiers":[{"scheme":"us.ein","value":"12-3456789","country_code":"US"}]}`)
	assertGolden(t, "customer_created", res.body)
	if c := res.object(t); c["company_id"] != companyID {
		t.Errorf("company_id = %v, want %s", c["company_id"], companyID)
	}
	min := s.createCustomer(t, tok, companyID, "cust-minimal", minimalCustomer)
	for _, k := range []string{"email", "external_reference"} {
		if _, ok := min[k]; ok {
			t.Errorf("%s present on a customer without it", k)
		}
	}
	if mustJSON(t, min["identifiers"]) != "[]" {
		t.Errorf("identifiers = %v, want []", min["identifiers"])
	}
}

func TestCreateCustomerFieldRules(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	companyID := s.createCompany(t, tok, "cust-rules-company", minimalCompany)["id"].(string)
	tests := []struct {
		name, field string
		value       any
		wantPath    string
	}{
		{"name of 200 code points is accepted", "name", strings.Repeat("ü", 200), ""},
		{"name of 201 code points is rejected", "name", strings.Repeat("ü", 201), "name"},
		{"name empty is rejected", "name", "", "name"},
		{"name missing is rejected", "name", nil, "name"},
		{"address missing is rejected", "address", nil, "address"},
		{"address.country_code invalid is rejected", "address.country_code", "usa", "address.country_code"},
		{"email invalid is rejected", "email", "a@", "email"},
		{"external_reference of 256 is rejected", "external_reference", strings.Repeat("r", 256), "external_reference"},
		{"20 identifiers are accepted", "identifiers", identifiersN(20), ""},
		{"21 identifiers are rejected", "identifiers", identifiersN(21), "identifiers"},
		{"identifiers not an array is rejected", "identifiers", "vat", "identifiers"},
		{"company_id in the body is rejected", "company_id", uuid.NewString(), "company_id"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.post(t, "/v1/companies/"+companyID+"/customers", tok, fmt.Sprintf("cust-rule-%03d", i), customerWith(t, tt.field, tt.value))
			if tt.wantPath == "" {
				mustStatus(t, res, http.StatusCreated)
				return
			}
			mustStatus(t, res, http.StatusUnprocessableEntity)
			if paths := detailPaths(t, res); len(paths) != 1 || paths[0] != tt.wantPath {
				t.Errorf("paths = %v, want [%s]", paths, tt.wantPath)
			}
		})
	}
}

func TestCustomerIdempotencyIsScopedToTheCompany(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	a := s.createCompany(t, tok, "cust-idem-a", minimalCompany)["id"].(string)
	b := s.createCompany(t, tok, "cust-idem-b", minimalCompany)["id"].(string)
	first := s.post(t, "/v1/companies/"+a+"/customers", tok, "customer-key-1", minimalCustomer)
	mustStatus(t, first, http.StatusCreated)
	replay := s.post(t, "/v1/companies/"+a+"/customers", tok, "customer-key-1", minimalCustomer)
	mustStatus(t, replay, http.StatusCreated)
	if string(replay.body) != string(first.body) {
		t.Errorf("replay differs:\n%s\n%s", first.body, replay.body)
	}
	conflict := s.post(t, "/v1/companies/"+a+"/customers", tok, "customer-key-1", customerWith(t, "name", "Other"))
	mustStatus(t, conflict, http.StatusConflict)
	if code := errorCode(t, conflict); code != "idempotency_key_reused" {
		t.Errorf("code = %q", code)
	}
	other := s.post(t, "/v1/companies/"+b+"/customers", tok, "customer-key-1", minimalCustomer)
	mustStatus(t, other, http.StatusCreated)
	if other.object(t)["id"] == first.object(t)["id"] {
		t.Error("the same key under a sibling company replayed the other company's customer")
	}
	concurrent := s.concurrentPosts(t, "/v1/companies/"+b+"/customers", tok, "customer-key-2", minimalCustomer, 20)
	for i, body := range concurrent {
		if body != concurrent[0] {
			t.Errorf("concurrent request %d got another body", i)
		}
	}
	if n := s.count(t, "customers"); n != 3 {
		t.Errorf("%d customers, want 3", n)
	}
}

// concurrentPosts sends n identical creates at once; each must be a 201.
func (s *service) concurrentPosts(t *testing.T, path, tok, key, body string, n int) []string {
	t.Helper()
	out := make([]string, n)
	errs := make(chan string, n)
	start := make(chan struct{})
	done := make(chan struct{}, n)
	for i := range n {
		go func() {
			defer func() { done <- struct{}{} }()
			<-start
			res := s.post(t, path, tok, key, body)
			if res.status != http.StatusCreated {
				errs <- fmt.Sprintf("request %d: %d %s", i, res.status, res.body)
			}
			out[i] = string(res.body)
		}()
	}
	close(start)
	for range n {
		<-done
	}
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	return out
}
