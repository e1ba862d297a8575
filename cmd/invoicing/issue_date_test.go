package main

import (
	"net/http"
	"slices"
	"testing"
)

// issueOn issues the invoice id on date (the body {"issue_date": date}).
func (b billing) issueOn(t *testing.T, id, key, date string) response {
	t.Helper()
	return b.s.post(t, b.path("/"+id+"/issue"), b.tok, "lifecycle-"+key, mustJSON(t, map[string]any{"issue_date": date}))
}

// An issue may name the day it is issued on: a due date from the company's
// payment terms (30 days) moves with it, one the client sent stays, and
// must not fall before the new date.
func TestIssueOnADayMovesADueDateFromTerms(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "issue-date", prefixedCompany)
	fromTerms := b.create(t, "draft-key-id-1", b.invoiceBody(t, nil))["id"].(string)
	clientDue := b.create(t, "draft-key-id-2", b.invoiceBody(t, map[string]any{"due_date": "2025-02-01"}))["id"].(string)
	sameDay := b.create(t, "draft-key-id-3", b.invoiceBody(t, nil))["id"].(string)

	tests := []struct {
		name, id, date string
		issue, due     string
	}{
		{"a due date from terms moves with the issue date", fromTerms, "2026-11-26", "2026-11-26", "2026-12-26"},
		{"a client's due date stays", clientDue, "2025-01-20", "2025-01-20", "2025-02-01"},
		{"the drafted day changes nothing", sameDay, "2025-01-15", "2025-01-15", "2025-02-14"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key := "id-issue-" + string(rune('a'+i))
			inv := b.mustChange(t, b.issueOn(t, tt.id, key, tt.date))
			if inv["status"] != "issued" || inv["issue_date"] != tt.issue || inv["due_date"] != tt.due || inv["version"] != 2.0 {
				t.Fatalf("issued invoice: issue_date %v, due_date %v, status %v, version %v; want %s, %s, issued, 2",
					inv["issue_date"], inv["due_date"], inv["status"], inv["version"], tt.issue, tt.due)
			}
			replay := b.issueOn(t, tt.id, key, tt.date)
			mustStatus(t, replay, http.StatusOK)
			if replay.header.Get("Idempotent-Replayed") != "true" || compactJSON(t, replay.body) != compactJSON(t, b.s.get(t, b.path("/"+tt.id), b.tok).body) {
				t.Fatalf("replay: %v %s", replay.header, replay.body)
			}
		})
	}
}

func TestIssueDateIsValidated(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "issue-date-checks", prefixedCompany)
	clientDue := b.create(t, "draft-key-iv-1", b.invoiceBody(t, map[string]any{"due_date": "2025-02-01"}))["id"].(string)
	farTerms := newBilling(t, s, "issue-date-far", companyWith(t, "default_payment_terms_days", 365))
	far := farTerms.create(t, "draft-key-iv-2", farTerms.invoiceBody(t, nil))["id"].(string)
	for _, tt := range []struct {
		name string
		res  response
	}{
		{"after the client's due date", b.issueOn(t, clientDue, "iv-1", "2025-02-02")},
		{"not a date", b.issueOn(t, clientDue, "iv-2", "2025-02-30")},
		{"year 0", b.issueOn(t, clientDue, "iv-3", "0000-01-01")},
		{"not a string", s.post(t, b.path("/"+clientDue+"/issue"), b.tok, "lifecycle-iv-4", `{"issue_date":20250120}`)},
		{"the due date from terms would pass 9999-12-31", farTerms.issueOn(t, far, "iv-5", "9999-06-01")},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mustCode(t, tt.res, http.StatusUnprocessableEntity, "validation_failed")
			if got := detailPaths(t, tt.res); !slices.Equal(got, []string{"issue_date"}) {
				t.Fatalf("details %q, want [issue_date]", got)
			}
		})
	}
	for _, inv := range []struct {
		b  billing
		id string
	}{{b, clientDue}, {farTerms, far}} {
		if got := s.get(t, inv.b.path("/"+inv.id), inv.b.tok).object(t); got["status"] != "draft" || got["version"] != 1.0 {
			t.Fatalf("a refused issue changed the invoice: %v", got)
		}
	}
}
