package main

import (
	"context"
	"net/http"
	"sync"
	"testing"
)

func TestReplayReturnsTheOriginalBody(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	first := s.post(t, "/v1/companies", tok, "replay-key-1", minimalCompany)
	mustStatus(t, first, http.StatusCreated)
	reordered := `{ "default_currency":"EUR", "address":{"country_code":"DE","postal_code":"10115","city":"Berlin","line_1":"Hauptstr. 1"},"legal_name":"Acme GmbH", "email": null }`
	for _, body := range []string{minimalCompany, reordered} {
		again := s.post(t, "/v1/companies", tok, "replay-key-1", body)
		mustStatus(t, again, http.StatusCreated)
		if string(again.body) != string(first.body) {
			t.Errorf("replay body differs:\nfirst:  %s\nreplay: %s", first.body, again.body)
		}
	}
	if n := s.count(t, "companies"); n != 1 {
		t.Errorf("%d companies, want 1", n)
	}
}

func TestSameKeyWithAnotherBodyIs409(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	mustStatus(t, s.post(t, "/v1/companies", tok, "conflict-key", minimalCompany), http.StatusCreated)
	res := s.post(t, "/v1/companies", tok, "conflict-key", companyWith(t, "legal_name", "Other GmbH"))
	mustStatus(t, res, http.StatusConflict)
	if code := errorCode(t, res); code != "idempotency_key_reused" {
		t.Errorf("code = %q", code)
	}
}

func TestConcurrentIdenticalCreatesMakeOneCompany(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	const n = 20
	bodies := make([]string, n)
	statuses := make([]int, n)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := s.post(t, "/v1/companies", tok, "concurrent-key", minimalCompany)
			bodies[i], statuses[i] = string(res.body), res.status
		}()
	}
	close(start)
	wg.Wait()
	for i := range n {
		if statuses[i] != http.StatusCreated || bodies[i] != bodies[0] {
			t.Errorf("request %d: %d %s; want 201 and the same body as request 0 (%s)", i, statuses[i], bodies[i], bodies[0])
		}
	}
	if c := s.count(t, "companies"); c != 1 {
		t.Errorf("%d companies, want exactly 1", c)
	}
}

func TestSameKeyUnderAnotherAccountIsIndependent(t *testing.T) {
	s := newService(t)
	a := s.createCompany(t, token(t, "acme"), "shared-key-1", minimalCompany)
	b := s.createCompany(t, token(t, "globex"), "shared-key-1", companyWith(t, "legal_name", "Globex"))
	if a["id"] == b["id"] {
		t.Fatal("two accounts sharing a key got the same company")
	}
}

// count returns the rows of a read-model table.
func (s *service) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM `+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
