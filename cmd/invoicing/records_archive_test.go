package main

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
)

// Issue 21, item 3: archive and restore companies and customers; lists hide
// archived records, archived=true lists them; nothing new under an archived
// parent; invoices already made keep their lifecycle.

// archivable is one kind of record that can be archived.
type archivable struct {
	kind, list string
	record     func(t *testing.T, s *service, tok string) string // creates one, returns its path
}

func archivables(t *testing.T, s *service, tok string) []archivable {
	companyID := s.createCompany(t, tok, "archive-parent", minimalCompany)["id"].(string)
	customers := "/v1/companies/" + companyID + "/customers"
	n := 0
	return []archivable{
		{"company", "/v1/companies", func(t *testing.T, s *service, tok string) string {
			n++
			return "/v1/companies/" + s.createCompany(t, tok, fmt.Sprint("archive-company-", n), companyWith(t, "external_reference", fmt.Sprint("arch-", n)))["id"].(string)
		}},
		{"customer", customers, func(t *testing.T, s *service, tok string) string {
			n++
			return customers + "/" + s.createCustomer(t, tok, companyID, fmt.Sprint("archive-customer-", n), customerWith(t, "external_reference", fmt.Sprint("arch-", n)))["id"].(string)
		}},
	}
}

func TestArchiveAndRestoreFollowTheStateTable(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	for _, a := range archivables(t, s, tok) {
		t.Run(a.kind, func(t *testing.T) {
			path := a.record(t, s, tok)
			active := s.get(t, path, tok).object(t)
			archiveReq := request{method: http.MethodPost, path: path + "/archive", token: tok, key: "state-archive-" + a.kind}
			first := s.do(t, archiveReq)
			archived := s.mustWrite(t, path, tok, first)
			if archived["archived_at"] == nil || archived["archived_at"] != archived["updated_at"] {
				t.Errorf("archived: archived_at %v updated_at %v; want both the archive's time", archived["archived_at"], archived["updated_at"])
			}
			checkChanged(t, active, archived, map[string]any{"archived_at": archived["archived_at"]})

			mustFail(t, s.action(t, path, "archive", tok, "state-archive-again-"+a.kind, "", nil), http.StatusConflict, "invalid_state")
			restored := s.mustWrite(t, path, tok, s.action(t, path, "unarchive", tok, "state-unarchive-"+a.kind, `{}`, nil))
			checkChanged(t, archived, restored, map[string]any{"archived_at": nil})
			mustFail(t, s.action(t, path, "unarchive", tok, "state-unarchive-again-"+a.kind, "", nil), http.StatusConflict, "invalid_state")

			// A replay answers the first answer, whatever happened since.
			s.mustReplay(t, archiveReq, first)
			// Archived again, restored again: each an event.
			again := s.mustWrite(t, path, tok, s.action(t, path, "archive", tok, "state-archive-2-"+a.kind, "", nil))
			if again["version"] != 4.0 {
				t.Errorf("version after archive, restore, archive = %v, want 4", again["version"])
			}
		})
	}
}

func TestArchiveRequestRules(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	for _, a := range archivables(t, s, tok) {
		t.Run(a.kind, func(t *testing.T) {
			path := a.record(t, s, tok)
			mustFail(t, s.action(t, path, "archive", tok, "", "", nil), http.StatusBadRequest, "malformed_request")
			mustFail(t, s.action(t, path, "archive", tok, "rules-archive-1-"+a.kind, `{"reason":"x"}`, nil), http.StatusUnprocessableEntity, "validation_failed", "reason")
			mustFail(t, s.action(t, path, "archive", token(t, "globex"), "rules-archive-2-"+a.kind, "", nil), http.StatusNotFound, "not_found")
			if got := s.get(t, path, tok).object(t); got["archived_at"] != nil || got["version"] != 1.0 {
				t.Errorf("refused archives changed the record: %v", got)
			}
		})
	}
}

func TestListsHideArchivedRecordsAndArchivedTrueListsThem(t *testing.T) {
	s := newService(t)
	tok := token(t, "acme")
	for _, a := range archivables(t, s, tok) {
		t.Run(a.kind, func(t *testing.T) {
			before := ids(s.listed(t, a.list, tok, nil))
			var paths, all []string
			for range 4 {
				p := a.record(t, s, tok)
				paths = append(paths, p)
				all = append(all, s.get(t, p, tok).object(t)["id"].(string))
			}
			var records []map[string]any
			for i, p := range paths {
				rec := s.get(t, p, tok).object(t)
				if i%2 == 1 {
					rec = s.mustWrite(t, p, tok, s.action(t, p, "archive", tok, fmt.Sprint("list-archive-", a.kind, i), "", nil))
				}
				records = append(records, rec)
			}
			active := append(slices.Clone(before), all[0], all[2])
			archived := []string{all[1], all[3]}
			for _, tt := range []struct {
				name    string
				filters url.Values
				want    []string
			}{
				{"no filter", nil, active},
				{"archived=false", url.Values{"archived": {"false"}}, active},
				{"archived=true", url.Values{"archived": {"true"}}, archived},
				{"an archived one's external_reference", url.Values{"external_reference": {records[1]["external_reference"].(string)}}, nil},
				{"an archived one's external_reference, archived=true", url.Values{"external_reference": {records[1]["external_reference"].(string)}, "archived": {"true"}}, archived[:1]},
				{"an active one's external_reference, archived=true", url.Values{"external_reference": {records[0]["external_reference"].(string)}, "archived": {"true"}}, nil},
			} {
				t.Run(tt.name, func(t *testing.T) {
					items := s.listed(t, a.list, tok, tt.filters)
					if got := ids(items); !slices.Equal(got, tt.want) {
						t.Errorf("listed %v, want %v", got, tt.want)
					}
					for _, it := range items {
						if want := find(records, it["id"].(string)); want != nil && mustJSON(t, it) != mustJSON(t, want) {
							t.Errorf("listed %v\nwant %v", it, want)
						}
					}
				})
			}
			for _, limit := range []int{1, 2} {
				if got := s.walk(t, a.list, tok, limit, url.Values{"archived": {"true"}}); !slices.Equal(got, archived) {
					t.Errorf("archived=true a page of %d at a time: %v, want %v", limit, got, archived)
				}
			}
			for i, p := range paths { // GET serves either
				if got := s.get(t, p, tok).object(t); mustJSON(t, got) != mustJSON(t, records[i]) {
					t.Errorf("GET %s = %v, want %v", p, got, records[i])
				}
			}
			for _, bad := range []string{"yes", "1", "TRUE", ""} {
				res := s.get(t, a.list+"?archived="+bad, tok)
				mustFail(t, res, http.StatusUnprocessableEntity, "validation_failed", "archived")
			}
			// Restored, a record is listed again.
			s.mustWrite(t, paths[1], tok, s.action(t, paths[1], "unarchive", tok, "list-unarchive-"+a.kind, "", nil))
			if got := ids(s.listed(t, a.list, tok, nil)); !slices.Equal(got, append(slices.Clone(before), all[0], all[1], all[2])) {
				t.Errorf("after a restore the list is %v", got)
			}
		})
	}
}

func TestNothingNewUnderAnArchivedParent(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "archived-parents", minimalCompany)
	company := "/v1/companies/" + b.companyID
	customer := company + "/customers/" + b.customerID
	other := s.createCustomer(t, b.tok, b.companyID, "archived-parents-other", customerWith(t, "name", "Initech"))["id"].(string)
	draft := b.create(t, "archived-parents-draft", b.invoiceBody(t, nil))["id"].(string)
	otherDraft := b.create(t, "archived-parents-draft-2", b.invoiceBody(t, map[string]any{"customer_id": other}))["id"].(string)

	// An archived customer: no draft for it, no revision moving a draft to
	// it, no patch of it; a draft already made for it can still be revised.
	s.mustWrite(t, customer, b.tok, s.action(t, customer, "archive", b.tok, "archived-parents-cu", "", nil))
	mustFail(t, s.post(t, b.path(""), b.tok, "archived-parents-new-draft", b.invoiceBody(t, nil)), http.StatusConflict, "invalid_state", "customer_id")
	mustFail(t, s.patch(t, b.path("/"+otherDraft), b.tok, "archived-parents-move", `{"customer_id":"`+b.customerID+`"}`, nil), http.StatusConflict, "invalid_state", "customer_id")
	mustFail(t, s.patch(t, customer, b.tok, "archived-parents-patch-cu", `{"name":"Renamed"}`, nil), http.StatusConflict, "invalid_state")
	s.mustWrite(t, b.path("/"+draft), b.tok, s.patch(t, b.path("/"+draft), b.tok, "archived-parents-revise", `{"notes":"still a draft"}`, nil))

	// An archived company: no customer, no invoice, no patch under it.
	s.mustWrite(t, company, b.tok, s.action(t, company, "archive", b.tok, "archived-parents-co", "", nil))
	mustFail(t, s.post(t, company+"/customers", b.tok, "archived-parents-new-cu", minimalCustomer), http.StatusConflict, "invalid_state", "company_id")
	mustFail(t, s.post(t, b.path(""), b.tok, "archived-parents-new-inv", b.invoiceBody(t, map[string]any{"customer_id": other})), http.StatusConflict, "invalid_state", "company_id")
	mustFail(t, s.patch(t, company, b.tok, "archived-parents-patch-co", `{"legal_name":"Renamed"}`, nil), http.StatusConflict, "invalid_state")

	// Restored, both take changes again.
	s.mustWrite(t, company, b.tok, s.action(t, company, "unarchive", b.tok, "archived-parents-co-back", "", nil))
	s.mustWrite(t, customer, b.tok, s.action(t, customer, "unarchive", b.tok, "archived-parents-cu-back", "", nil))
	s.mustWrite(t, company, b.tok, s.patch(t, company, b.tok, "archived-parents-patch-co-2", `{"legal_name":"Renamed"}`, nil))
	s.mustWrite(t, customer, b.tok, s.patch(t, customer, b.tok, "archived-parents-patch-cu-2", `{"name":"Renamed"}`, nil))
	b.create(t, "archived-parents-new-draft-2", b.invoiceBody(t, nil))
}

// TestInvoicesOfArchivedRecordsKeepTheirLifecycle: an issued invoice of an
// archived customer of an archived company can still be voided, and a
// draft still issued.
func TestInvoicesOfArchivedRecordsKeepTheirLifecycle(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "archived-lifecycle", prefixedCompany)
	issued := b.create(t, "archived-lifecycle-1", b.invoiceBody(t, nil))["id"].(string)
	draft := b.create(t, "archived-lifecycle-2", b.invoiceBody(t, nil))["id"].(string)
	b.mustChange(t, b.issue(t, issued, "archived-issue-1"))
	customer := "/v1/companies/" + b.companyID + "/customers/" + b.customerID
	s.mustWrite(t, customer, b.tok, s.action(t, customer, "archive", b.tok, "archived-lifecycle-cu", "", nil))

	voided := b.mustChange(t, b.void(t, issued, "archived-void-1", "customer left"))
	if voided["status"] != "void" || voided["number"] != "INV-000001" {
		t.Fatalf("voided invoice of an archived customer: %v", voided)
	}
	company := "/v1/companies/" + b.companyID
	s.mustWrite(t, company, b.tok, s.action(t, company, "archive", b.tok, "archived-lifecycle-co", "", nil))
	if got := b.mustChange(t, b.issue(t, draft, "archived-issue-2")); got["number"] != "INV-000002" {
		t.Fatalf("a draft under an archived company issued as %v", got["number"])
	}
	b.mustChange(t, b.void(t, draft, "archived-void-2", "company closed"))
}

// TestNoArchivedValueGives5xx: whatever bytes the archived parameter holds,
// the lists answer 200 or 422, never a 5xx.
func TestNoArchivedValueGives5xx(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "archived-param", minimalCompany)
	values := []string{"true", "false", "", "%00", "%FF", "true%00", "tru%C3%A9", "True", "0", "null", "%ED%A0%80"}
	for _, list := range []string{"/v1/companies", "/v1/companies/" + b.companyID + "/customers"} {
		for _, v := range values {
			res := s.get(t, list+"?archived="+v, b.tok)
			if res.status != http.StatusOK && res.status != http.StatusUnprocessableEntity {
				t.Errorf("GET %s?archived=%s: %d %s", list, v, res.status, res.body)
			}
		}
		mustFail(t, s.get(t, list+"?archived=true&archived=false", b.tok), http.StatusUnprocessableEntity, "validation_failed", "archived")
	}
}

// TestARebuildFoldsUpdatesAndArchives: after patches, archives and
// restores, rebuilt read models serve the same records and lists.
func TestARebuildFoldsUpdatesAndArchives(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "rebuild-records", fullCompany)
	company := "/v1/companies/" + b.companyID
	customers := company + "/customers"
	customer := customers + "/" + b.customerID
	archivedCu := customers + "/" + s.createCustomer(t, b.tok, b.companyID, "rebuild-records-cu-2", fullCustomer)["id"].(string)
	archivedCo := "/v1/companies/" + s.createCompany(t, b.tok, "rebuild-records-co-2", fullCompany)["id"].(string)
	s.mustWrite(t, company, b.tok, s.patch(t, company, b.tok, "rebuild-records-1", `{"legal_name":"Rebuilt GmbH","address":{"line_2":null}}`, nil))
	s.mustWrite(t, customer, b.tok, s.patch(t, customer, b.tok, "rebuild-records-2", `{"email":"x@example.com","identifiers":null}`, nil))
	for i, p := range []string{archivedCu, archivedCo, customer} {
		s.mustWrite(t, p, b.tok, s.action(t, p, "archive", b.tok, fmt.Sprint("rebuild-records-archive-", i), "", nil))
	}
	s.mustWrite(t, customer, b.tok, s.action(t, customer, "unarchive", b.tok, "rebuild-records-unarchive", "", nil))
	reads := []string{company, customer, archivedCu, archivedCo, "/v1/companies?limit=100", "/v1/companies?archived=true&limit=100",
		customers + "?limit=100", customers + "?archived=true&limit=100", customers + "?external_reference=crm-1&limit=100"}
	before := map[string]string{}
	for _, r := range reads {
		before[r] = string(s.get(t, r, b.tok).body)
	}
	if out, err := runCommand(t, s, "projections", "rebuild"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	for _, r := range reads {
		if got := string(s.get(t, r, b.tok).body); got != before[r] {
			t.Errorf("after a rebuild GET %s =\n%s\nwant\n%s", r, got, before[r])
		}
	}
}
