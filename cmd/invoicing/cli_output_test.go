package main

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// decodeObject decodes out as exactly one JSON object and checks that it
// has the documented keys.
func decodeObject(t *testing.T, out string, into any, keys ...string) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(out))
	var raw map[string]json.RawMessage
	if err := dec.Decode(&raw); err != nil {
		t.Fatalf("output is not a JSON object: %v\n%s", err, out)
	}
	if dec.More() {
		t.Fatalf("output holds more than one JSON document:\n%s", out)
	}
	for _, k := range keys {
		if _, ok := raw[k]; !ok {
			t.Errorf("output lacks %q:\n%s", k, out)
		}
	}
	if err := json.Unmarshal([]byte(out), into); err != nil {
		t.Fatal(err)
	}
}

// The documented shape of `projections status --output json`, spelled out
// here rather than reusing statusJSON so that a rename there fails.
type statusDoc struct {
	Projections []struct {
		Name              string  `json:"name"`
		CodeVersion       int     `json:"code_version"`
		TablesVersion     int     `json:"tables_version"`
		Checkpoint        string  `json:"checkpoint"`
		LagEvents         int64   `json:"lag_events"`
		LagSeconds        float64 `json:"lag_seconds"`
		RebuildCheckpoint *string `json:"rebuild_checkpoint"`
		Quarantined       int64   `json:"quarantined"`
	} `json:"projections"`
	QuarantinedEvents []struct {
		Projection string `json:"projection"`
		Position   string `json:"position"`
		EventID    string `json:"event_id"`
		Type       string `json:"type"`
		Stream     string `json:"stream"`
		Revision   uint64 `json:"revision"`
		Since      string `json:"since"`
		Error      string `json:"error"`
	} `json:"quarantined_events"`
}

func TestProjectionsStatusJSON(t *testing.T) {
	s := newService(t)
	s.createCompany(t, token(t, "acme"), "status-json-1", minimalCompany)

	out, err := runCommand(t, s, "projections", "status", "--output", "json")
	if err != nil {
		t.Fatal(err)
	}
	var doc statusDoc
	decodeObject(t, out, &doc, "projections", "quarantined_events")
	if doc.QuarantinedEvents == nil || len(doc.QuarantinedEvents) != 0 {
		t.Errorf("quarantined_events = %v, want an empty array (not null):\n%s", doc.QuarantinedEvents, out)
	}
	var names []string
	for _, p := range doc.Projections {
		names = append(names, p.Name)
		if p.CodeVersion < 1 || p.TablesVersion != p.CodeVersion || p.RebuildCheckpoint != nil || p.Quarantined != 0 {
			t.Errorf("projection %+v: want built at its code version, no rebuild, nothing quarantined", p)
		}
		if _, err := events.ParsePosition(p.Checkpoint); err != nil {
			t.Errorf("checkpoint %q: %v", p.Checkpoint, err)
		}
	}
	if !slices.Equal(names, []string{"companies", "customers", "invoices", "credit_notes", "public_events", "webhook_endpoints"}) {
		t.Errorf("projections = %v", names)
	}

	_, fixable, broken := quarantineTwoCompanies(t, s)
	out, err = runCommand(t, s, "projections", "status", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	doc = statusDoc{}
	decodeObject(t, out, &doc, "projections", "quarantined_events")
	var streams []string
	for _, qe := range doc.QuarantinedEvents {
		if qe.Projection == "public_events" && qe.Stream == broken {
			continue // the broken event is no public event either
		}
		streams = append(streams, qe.Stream)
		if qe.Projection != "companies" || qe.Type != events.TypeCompanyCreated || qe.EventID == "" || qe.Since == "" || qe.Error == "" {
			t.Errorf("quarantined event %+v: want every field filled", qe)
		}
		if _, err := events.ParsePosition(qe.Position); err != nil {
			t.Errorf("position %q: %v", qe.Position, err)
		}
	}
	if !slices.Contains(streams, fixable) || !slices.Contains(streams, broken) || len(streams) != 2 {
		t.Errorf("quarantined streams = %v, want %s and %s", streams, fixable, broken)
	}
	if doc.Projections[0].Name != "companies" || doc.Projections[0].Quarantined != 2 {
		t.Errorf("companies = %+v, want 2 quarantined", doc.Projections[0])
	}
}

// The documented shape of `audit verify --output json`.
type auditDoc struct {
	OK       bool `json:"ok"`
	Findings []struct {
		Table   string `json:"table"`
		ID      string `json:"id"`
		Problem string `json:"problem"`
	} `json:"findings"`
}

func TestAuditVerifyJSON(t *testing.T) {
	s := newService(t)
	company := s.createCompany(t, token(t, "acme"), "audit-json-1", minimalCompany)
	out, err := runCommand(t, s, "audit", "verify", "--output", "json")
	if err != nil {
		t.Fatalf("audit of a healthy database: %v\n%s", err, out)
	}
	var doc auditDoc
	decodeObject(t, out, &doc, "ok", "findings")
	if !doc.OK || doc.Findings == nil || len(doc.Findings) != 0 {
		t.Errorf("healthy audit = %+v, want ok and an empty findings array:\n%s", doc, out)
	}

	id := company["id"].(string)
	if _, err := s.pool.Exec(context.Background(), `UPDATE companies SET legal_name = 'Tampered' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	out, err = runCommand(t, s, "audit", "verify", "-o", "json")
	if err == nil || errors.Is(err, errUsage) {
		t.Errorf("audit after tampering = %v, want a failure that exits 1", err)
	}
	doc = auditDoc{}
	decodeObject(t, out, &doc, "ok", "findings")
	if doc.OK || len(doc.Findings) == 0 || doc.Findings[0].Table != "companies" || doc.Findings[0].ID != id || doc.Findings[0].Problem == "" {
		t.Errorf("audit after tampering = %+v, want a finding for companies %s", doc, id)
	}
}

func TestHealthcheckOfTheService(t *testing.T) {
	s := newService(t)
	if out, err := runCommand(t, s, "healthcheck", "--url", s.url+"/readyz"); err != nil || !strings.Contains(out, `"status":"ok"`) {
		t.Errorf("healthcheck of a ready service = %q, %v", out, err)
	}
}
