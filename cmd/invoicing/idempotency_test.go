package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
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
		if again.header.Get("Idempotent-Replayed") != "true" {
			t.Errorf("a replay lacks Idempotent-Replayed: true: %v", again.header)
		}
	}
	if first.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("a first create says Idempotent-Replayed: %v", first.header)
	}
	if n := s.count(t, "companies"); n != 1 {
		t.Errorf("%d companies, want 1", n)
	}
}

func TestACreateRecordsTheCallersTraceparent(t *testing.T) {
	s := newService(t)
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for header, want := range map[string]string{tp: tp, "not a trace context": ""} {
		res := s.do(t, request{method: http.MethodPost, path: "/v1/companies", token: token(t, "acme"),
			key: "trace-" + strconv.Itoa(len(header)), body: minimalCompany, headers: map[string]string{"Traceparent": header}})
		mustStatus(t, res, http.StatusCreated)
		var md string
		err := s.pool.QueryRow(context.Background(), `SELECT metadata::text FROM events WHERE data->>'company_id' = $1`, res.object(t)["id"]).Scan(&md)
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			TraceParent *string `json:"traceparent"`
			RequestID   string  `json:"request_id"`
		}
		if err := json.Unmarshal([]byte(md), &got); err != nil {
			t.Fatal(err)
		}
		if (want == "" && got.TraceParent != nil) || (want != "" && (got.TraceParent == nil || *got.TraceParent != want)) {
			t.Errorf("traceparent %q recorded as %v, want %q beside request_id %q", header, got.TraceParent, want, got.RequestID)
		}
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
