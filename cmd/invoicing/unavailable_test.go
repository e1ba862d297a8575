package main

import (
	"net/http"
	"testing"

	"github.com/invoicing/invoicing/internal/pgtest"
)

// TestADatabaseOutageIs503NotAnInternalError: while PostgreSQL is down,
// creates and reads answer 503 unavailable with Retry-After, which tells a
// client to retry; once it is back, the retried create succeeds.
func TestADatabaseOutageIs503NotAnInternalError(t *testing.T) {
	pg := pgtest.NewServer(t)
	s := newService(t, func(c *config) { c.DatabaseURL = pg.NewDatabase(t) })
	tok := token(t, "outage")
	company := s.createCompany(t, tok, "before-the-outage", minimalCompany)

	pg.StopImmediate()
	for name, res := range map[string]response{
		"a create": s.post(t, "/v1/companies", tok, "during-the-outage", minimalCompany),
		"a get":    s.get(t, "/v1/companies/"+company["id"].(string), tok),
		"a list":   s.get(t, "/v1/companies", tok),
	} {
		mustCode(t, res, http.StatusServiceUnavailable, "unavailable")
		if res.header.Get("Retry-After") != "1" {
			t.Errorf("%s: 503 without Retry-After", name)
		}
	}
	pg.Start()
	s.createCompany(t, tok, "during-the-outage", minimalCompany)
}
