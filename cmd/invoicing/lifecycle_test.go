package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

const prefixedCompany = `{"legal_name":"Acme GmbH","address":{"line_1":"Hauptstr. 1","city":"Berlin","postal_code":"10115","country_code":"DE"},"default_currency":"EUR","invoice_number_prefix":"INV-"}`

func (b billing) issue(t *testing.T, id, key string) response {
	t.Helper()
	if key != "" {
		key = "lifecycle-" + key
	}
	return b.s.do(t, request{method: http.MethodPost, path: b.path("/" + id + "/issue"), token: b.tok, key: key})
}

func (b billing) void(t *testing.T, id, key, reason string) response {
	t.Helper()
	return b.s.post(t, b.path("/"+id+"/void"), b.tok, "lifecycle-"+key, mustJSON(t, map[string]any{"reason": reason}))
}

// issueOn issues the invoice id on date (the body {"issue_date": date}).
func (b billing) issueOn(t *testing.T, id, key, date string) response {
	t.Helper()
	return b.s.post(t, b.path("/"+id+"/issue"), b.tok, "lifecycle-"+key, mustJSON(t, map[string]any{"issue_date": date}))
}

// mustChange checks a lifecycle answer: 200, and a GET right after it
// serves the same invoice.
func (b billing) mustChange(t *testing.T, res response) map[string]any {
	t.Helper()
	mustStatus(t, res, http.StatusOK)
	inv := res.object(t)
	got := b.s.get(t, b.path("/"+inv["id"].(string)), b.tok)
	mustStatus(t, got, http.StatusOK)
	if compactJSON(t, got.body) != compactJSON(t, res.body) {
		t.Fatalf("GET after 200 differs:\n200: %s\nGET: %s", res.body, got.body)
	}
	return inv
}

func mustCode(t *testing.T, res response, status int, code string) {
	t.Helper()
	mustStatus(t, res, status)
	if got := errorCode(t, res); got != code {
		t.Fatalf("code = %q, want %q; body %s", got, code, res.body)
	}
}

func TestIssueThenVoidFollowsTheStateTable(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "lifecycle", prefixedCompany)
	draft := b.create(t, "draft-key-draft-1", b.invoiceBody(t, nil))
	id := draft["id"].(string)

	issued := b.mustChange(t, b.issue(t, id, "issue-1"))
	if issued["status"] != "issued" || issued["number"] != "INV-000001" || issued["version"] != 2.0 ||
		issued["issued_at"] == nil || issued["updated_at"] != issued["issued_at"] || issued["voided_at"] != nil {
		t.Fatalf("issued invoice: %v", issued)
	}
	for _, field := range []string{"issuer", "customer", "lines", "total_minor", "created_at", "issue_date", "due_date"} {
		if mustJSON(t, issued[field]) != mustJSON(t, draft[field]) {
			t.Errorf("%s changed on issue: %v -> %v", field, draft[field], issued[field])
		}
	}
	mustCode(t, b.issue(t, id, "issue-2"), http.StatusConflict, "invalid_state")
	voided := b.mustChange(t, b.void(t, id, "void-1", "wrong customer"))
	if voided["status"] != "void" || voided["number"] != "INV-000001" || voided["void_reason"] != "wrong customer" || voided["version"] != 3.0 {
		t.Fatalf("voided invoice: %v", voided)
	}
	mustCode(t, b.void(t, id, "void-2", "again"), http.StatusConflict, "invalid_state")
	mustCode(t, b.issue(t, id, "issue-3"), http.StatusConflict, "invalid_state")

	// Replays answer the first body, whatever happened since.
	if r := b.issue(t, id, "issue-1"); r.status != http.StatusOK || mustJSON(t, r.object(t)) != mustJSON(t, issued) {
		t.Fatalf("replayed issue: %d %s, want the first body", r.status, r.body)
	}
	if r := b.void(t, id, "void-1", "wrong customer"); r.status != http.StatusOK || mustJSON(t, r.object(t)) != mustJSON(t, voided) {
		t.Fatalf("replayed void: %d %s", r.status, r.body)
	}
	mustCode(t, b.void(t, id, "void-1", "another reason"), http.StatusConflict, "idempotency_key_reused")

	// Rebuilds and audits follow the lifecycle events.
	if out, err := runCommand(t, s, "audit", "verify"); err != nil {
		t.Fatalf("audit verify after issue and void: %v\n%s", err, out)
	}
	if out, err := runCommand(t, s, "projections", "rebuild", "invoices"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if got := s.get(t, b.path("/"+id), b.tok); mustJSON(t, got.object(t)) != mustJSON(t, voided) {
		t.Fatalf("after a rebuild the invoice reads %s, want %v", got.body, voided)
	}
}

func TestAVoidedDraftNeverGetsANumber(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "drafts", minimalCompany)
	first := b.create(t, "draft-key-d-1", b.invoiceBody(t, nil))["id"].(string)
	second := b.create(t, "draft-key-d-2", b.invoiceBody(t, nil))["id"].(string)
	voided := b.mustChange(t, b.void(t, first, "void-d-1", "duplicate"))
	if voided["number"] != nil || voided["issued_at"] != nil || voided["version"] != 2.0 {
		t.Fatalf("voided draft: %v", voided)
	}
	mustCode(t, b.issue(t, first, "issue-d-1"), http.StatusConflict, "invalid_state")
	if got := b.mustChange(t, b.issue(t, second, "issue-d-2"))["number"]; got != "000001" {
		t.Fatalf("the first issued number is %v, want 000001 (no prefix set)", got)
	}
}

func TestLifecycleRequestsAreValidated(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "checks", minimalCompany)
	id := b.create(t, "draft-key-v-1", b.invoiceBody(t, nil))["id"].(string)
	other := newBilling(t, s, "someone-else", minimalCompany)
	for _, tt := range []struct {
		name         string
		res          response
		status       int
		code, detail string
	}{
		{"a void without reason", s.post(t, b.path("/"+id+"/void"), b.tok, "lifecycle-v-void-1", `{}`), 422, "validation_failed", "reason"},
		{"an empty reason", b.void(t, id, "v-void-2", ""), 422, "validation_failed", "reason"},
		{"a reason of 501 characters", b.void(t, id, "v-void-3", strings.Repeat("x", 501)), 422, "validation_failed", "reason"},
		{"a NUL in the reason", b.void(t, id, "v-void-4", "a\x00b"), 422, "validation_failed", "reason"},
		{"an issue body with a field", s.post(t, b.path("/"+id+"/issue"), b.tok, "lifecycle-v-issue-1", `{"number":"7"}`), 422, "validation_failed", "number"},
		{"no idempotency key", b.issue(t, id, ""), 400, "malformed_request", ""},
		{"an unknown invoice", b.issue(t, "01a20588-7ee3-7d5f-b3e9-b847ee0b78f7", "v-issue-2"), 404, "not_found", ""},
		{"another account's invoice", other.issue(t, id, "v-issue-3"), 404, "not_found", ""},
		{"a malformed invoice id", b.issue(t, "not-a-uuid", "v-issue-4"), 422, "validation_failed", "invoice_id"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			mustCode(t, tt.res, tt.status, tt.code)
			if tt.detail != "" && !slices.Equal(detailPaths(t, tt.res), []string{tt.detail}) {
				t.Fatalf("details %q, want [%q]", detailPaths(t, tt.res), tt.detail)
			}
		})
	}
	if got := b.s.get(t, b.path("/"+id), b.tok).object(t); got["status"] != "draft" || got["version"] != 1.0 {
		t.Fatalf("refused requests changed the invoice: %v", got)
	}
}

func TestListsFilterByTheNewStates(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "states", minimalCompany)
	var ids []string
	for i := range 5 {
		ids = append(ids, b.create(t, fmt.Sprint("draft-key-st-", i), b.invoiceBody(t, nil))["id"].(string))
	}
	b.mustChange(t, b.issue(t, ids[0], "st-issue-0"))
	b.mustChange(t, b.issue(t, ids[1], "st-issue-1"))
	b.mustChange(t, b.void(t, ids[1], "st-void-1", "r"))
	b.mustChange(t, b.void(t, ids[2], "st-void-2", "r"))
	for status, want := range map[string][]string{"draft": {ids[3], ids[4]}, "issued": {ids[0]}, "void": {ids[1], ids[2]}} {
		page := b.s.get(t, b.path("?status="+status), b.tok).object(t)
		var got []string
		for _, item := range page["data"].([]any) {
			inv := item.(map[string]any)
			if inv["status"] != status {
				t.Errorf("?status=%s lists a %v invoice", status, inv["status"])
			}
			got = append(got, inv["id"].(string))
		}
		if !slices.Equal(got, want) {
			t.Errorf("?status=%s = %v, want %v", status, got, want)
		}
	}
}

// TestConcurrentIssuesThroughTwoInstancesNumberGaplessly: 64 drafts of one
// company issued at once, half through each of two service instances on
// one database, get the numbers 1..64 exactly once each.
func TestConcurrentIssuesThroughTwoInstancesNumberGaplessly(t *testing.T) {
	a := newService(t)
	b2 := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	b := newBilling(t, a, "gapless", prefixedCompany)
	const n = 64
	ids := make([]string, n)
	for i := range ids {
		ids[i] = b.create(t, fmt.Sprint("draft-key-g-", i), b.invoiceBody(t, nil))["id"].(string)
	}
	numbers := make([]string, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			via := b.alternate(b2, i)
			res := via.issue(t, id, fmt.Sprint("g-issue-", i))
			if res.status != http.StatusOK {
				t.Errorf("issue %d: %d %s", i, res.status, res.body)
				return
			}
			numbers[i], _ = res.object(t)["number"].(string)
		}()
	}
	wg.Wait()
	sort.Strings(numbers)
	for i, got := range numbers {
		if want := fmt.Sprintf("INV-%06d", i+1); got != want {
			t.Fatalf("sorted numbers[%d] = %q, want %q (all: %v)", i, got, want, numbers)
		}
	}
}

// failIssuesSQL makes PostgreSQL refuse every InvoiceIssued append: the
// fault falls exactly between the two steps of an issue (the number is
// reserved in the numbering stream, the invoice is not issued).
const failIssuesSQL = `
CREATE FUNCTION fail_issues() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.event_type = 'InvoiceIssued' THEN RAISE EXCEPTION 'injected crash before InvoiceIssued'; END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER fail_issues BEFORE INSERT ON events FOR EACH ROW EXECUTE FUNCTION fail_issues();`

// The crashed issue names an issue_date, which moves the draft's due date
// from terms: whoever completes its reservation (its own retry, or the
// company's next issue) issues the invoice with those dates, as the
// reservation records them. A draft revised (or voided) meanwhile lapses
// the reservation: its number goes to the next issue, without a gap.
func TestACrashBetweenNumberAndIssueLeavesNoGap(t *testing.T) {
	for _, then := range []string{"the client retries", "the next issue completes it", "the draft is voided instead", "the draft is revised instead"} {
		t.Run(then, func(t *testing.T) {
			first := newService(t)
			b := newBilling(t, first, "crash", prefixedCompany)
			crashed := b.create(t, "draft-key-c-1", b.invoiceBody(t, nil))["id"].(string)
			next := b.create(t, "draft-key-c-2", b.invoiceBody(t, nil))["id"].(string)
			execSQL(t, first, failIssuesSQL)
			mustStatus(t, b.issueOn(t, crashed, "c-issue-1", "2025-03-01"), http.StatusInternalServerError)
			execSQL(t, first, `DROP TRIGGER fail_issues ON events`)

			b.s = newService(t, func(c *config) { c.DatabaseURL = first.dbURL }) // a restart
			want := map[string]string{next: "INV-000002", crashed: "INV-000001"}
			switch then {
			case "the client retries":
				b.mustChange(t, b.issueOn(t, crashed, "c-issue-1", "2025-03-01"))
			case "the draft is voided instead":
				b.mustChange(t, b.void(t, crashed, "c-void-1", "cancelled"))
				want = map[string]string{next: "INV-000001", crashed: ""}
			case "the draft is revised instead": // the reservation lapses; its number goes to the next issue
				crashedPath := b.path("/" + crashed)
				b.s.mustWrite(t, crashedPath, b.tok, b.s.patch(t, crashedPath, b.tok, "revise-c-revise-1", `{"issue_date":"2025-04-01"}`, nil))
				want = map[string]string{next: "INV-000001", crashed: "INV-000002"}
			}
			b.mustChange(t, b.issue(t, next, "c-issue-2"))
			if then == "the draft is revised instead" {
				b.mustChange(t, b.issue(t, crashed, "c-issue-3"))
			}
			for id, number := range want {
				got := b.s.get(t, b.path("/"+id), b.tok).object(t)
				if got["number"] != nil && got["number"] != number || got["number"] == nil && number != "" {
					t.Errorf("invoice %s has number %v, want %q", id, got["number"], number)
				}
				issue, due := "2025-01-15", "2025-02-14"
				switch {
				case id == crashed && then == "the draft is revised instead":
					issue, due = "2025-04-01", "2025-05-01"
				case id == crashed && number != "":
					issue, due = "2025-03-01", "2025-03-31"
				}
				if got["issue_date"] != issue || got["due_date"] != due {
					t.Errorf("invoice %s is dated %v, due %v; want %s, %s", id, got["issue_date"], got["due_date"], issue, due)
				}
			}
		})
	}
}

func execSQL(t *testing.T, s *service, sql string) {
	t.Helper()
	if _, err := s.pool.Exec(context.Background(), sql); err != nil {
		t.Fatal(err)
	}
}
