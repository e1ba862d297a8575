package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// appendCompanyEvent appends a CompanyCreated with data straight to the
// store, past the API's validation, and returns its stream and position.
func appendCompanyEvent(t *testing.T, s *service, data []byte) (string, events.Position) {
	t.Helper()
	stream := "company-" + uuid.NewString()
	res, err := s.app.store.Append(context.Background(), stream, events.NoStream(), events.EventData{
		ID: events.EventID(stream, 0), Type: events.TypeCompanyCreated, Data: data, Metadata: []byte(`{}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	return stream, res.Position
}

// runCommand runs the CLI and returns its error and standard output.
func runCommand(t *testing.T, s *service, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), args, s.env(), &out, io.Discard)
	return out.String(), err
}

// quarantineTwoCompanies makes the companies projection quarantine two
// events: one a constraint someone added by mistake rejects (SQLSTATE
// 23514) until the test drops it, and one that can never apply. It returns
// the first's company id and both streams.
func quarantineTwoCompanies(t *testing.T, s *service) (companyID, fixable, broken string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.pool.Exec(ctx, `ALTER TABLE companies ADD CONSTRAINT test_rejects CHECK (legal_name <> 'Rejected Ltd')`); err != nil {
		t.Fatal(err)
	}
	company := events.CompanyCreated{CompanyID: uuid.NewString(), AccountID: "acme", LegalName: "Rejected Ltd",
		Address:         events.Address{Line1: "Hauptstr. 1", City: "Berlin", PostalCode: "10115", CountryCode: "DE"},
		DefaultCurrency: "EUR", DefaultLanguage: "en", DefaultPaymentTermsDays: 30, Identifiers: []events.Identifier{},
		CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
	data, err := json.Marshal(company)
	if err != nil {
		t.Fatal(err)
	}
	fixable, fixablePos := appendCompanyEvent(t, s, data)
	broken, brokenPos := appendCompanyEvent(t, s, []byte(`[]`))
	for _, pos := range []events.Position{fixablePos, brokenPos} {
		waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := s.app.group.WaitFor(waitCtx, pos, events.TypeCompanyCreated)
		cancel()
		if !errors.Is(err, projections.ErrQuarantined) {
			t.Fatalf("setup: WaitFor(%s) = %v, want ErrQuarantined", pos, err)
		}
	}
	return company.CompanyID, fixable, broken
}

func TestProjectionsStatusShowsQuarantineAndRetryAppliesWhatWasFixed(t *testing.T) {
	s := newService(t)
	companyID, fixable, broken := quarantineTwoCompanies(t, s)
	s.createCompany(t, token(t, "acme"), "after-the-bad-events", minimalCompany) // the projection goes on
	ready := s.get(t, "/readyz", "")
	mustStatus(t, ready, http.StatusOK)
	// Two in companies, and the broken one in public_events as well.
	if n := ready.object(t)["quarantined_events"]; n != 3.0 {
		t.Errorf("/readyz reports %v quarantined events, want 3", n)
	}

	status, err := runCommand(t, s, "projections", "status")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"QUARANTINED", fixable, broken, "SQLSTATE 23514", "cannot unmarshal array"} {
		if !strings.Contains(status, want) {
			t.Errorf("status lacks %q:\n%s", want, status)
		}
	}
	if !strings.Contains(status, "  2\n") {
		t.Errorf("status does not count 2 quarantined events for companies:\n%s", status)
	}

	// A create whose event is quarantined is stored, but never a 201: the
	// client is told to retry, and the retry replays once it is readable.
	rejected := strings.Replace(minimalCompany, "Acme GmbH", "Rejected Ltd", 1)
	res := s.post(t, "/v1/companies", token(t, "acme"), "quarantined-create", rejected)
	mustCode(t, res, http.StatusServiceUnavailable, "not_yet_readable")
	if res.header.Get("Retry-After") != "1" {
		t.Errorf("503 without Retry-After: %v", res.header)
	}
	if _, err := s.pool.Exec(context.Background(), `ALTER TABLE companies DROP CONSTRAINT test_rejects`); err != nil {
		t.Fatal(err)
	}
	out, err := runCommand(t, s, "projections", "retry", "companies")
	checkRetryOutput(t, out, err, fixable, broken)
	mustStatus(t, s.get(t, "/v1/companies/"+companyID, token(t, "acme")), http.StatusOK)
	s.createCompany(t, token(t, "acme"), "quarantined-create", rejected) // the retry replays: 201, readable

	out, err = runCommand(t, s, "projections", "retry")
	if !errors.Is(err, errStillQuarantined) || !strings.Contains(out, "0 applied, 2 still quarantined") {
		t.Errorf("second retry = %v\n%s\nwant nothing applied and the broken event left", err, out)
	}
}

func checkRetryOutput(t *testing.T, out string, err error, fixable, broken string) {
	t.Helper()
	if !errors.Is(err, errStillQuarantined) || errors.Is(err, errUsage) {
		t.Errorf("retry with an event left = %v; want an error that exits 1", err)
	}
	applied, remaining, ok := strings.Cut(out, "Still quarantined:")
	if !ok || !strings.HasPrefix(out, "2 applied, 1 still quarantined\n") { // fixable and the quarantined create
		t.Fatalf("retry output:\n%s\nwant a count, then what was applied and what is still quarantined", out)
	}
	if !strings.Contains(applied, fixable) || strings.Contains(applied, broken) {
		t.Errorf("applied section:\n%s\nwant %s only", applied, fixable)
	}
	if !strings.Contains(remaining, broken) || !strings.Contains(remaining, "cannot unmarshal array") {
		t.Errorf("still quarantined section:\n%s\nwant %s with its error", remaining, broken)
	}
}
