package main

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The write side of issue 21 for companies and customers, as its author
// tests it: merge patches, If-Match, archiving, the directory across two
// instances. The broad acceptance suite lives in the records_*_test.go
// files.

// recordWrite sends a write to an existing record: a PATCH (as a merge
// patch) when body is not "" and method is PATCH, else a POST.
func (s *service) recordWrite(t *testing.T, method, path, tok, key, body string, headers map[string]string) response {
	t.Helper()
	req := request{method: method, path: path, token: tok, key: key, body: body, headers: headers}
	if method == http.MethodPatch {
		req.contentType = "application/merge-patch+json"
	}
	return s.do(t, req)
}

// mustRecordWrite checks a write's answer: 200, its ETag naming the version, and
// a GET right after it serving the same record and ETag.
func (s *service) mustRecordWrite(t *testing.T, res response, path, tok string) map[string]any {
	t.Helper()
	mustStatus(t, res, http.StatusOK)
	rec := res.object(t)
	if tag := fmt.Sprintf(`W/"%s.%v"`, rec["id"], rec["version"]); res.header.Get("ETag") != tag {
		t.Fatalf("ETag %q, want %q", res.header.Get("ETag"), tag)
	}
	got := s.get(t, path, tok)
	mustStatus(t, got, http.StatusOK)
	if compactJSON(t, got.body) != compactJSON(t, res.body) || got.header.Get("ETag") != res.header.Get("ETag") {
		t.Fatalf("GET after the write differs:\nwrite: %s\nGET:   %s", res.body, got.body)
	}
	return rec
}

func TestCompanyMergePatch(t *testing.T) {
	s := newService(t)
	tok := token(t, "e1-patch")
	co := s.createCompany(t, tok, "e1-key-co-1", `{"legal_name":"Acme GmbH","trading_name":"Acme",
		"address":{"line_1":"Hauptstr. 1","line_2":"Hinterhaus","city":"Berlin","postal_code":"10115","country_code":"DE"},
		"default_currency":"EUR","default_payment_terms_days":14,"default_language":"de",
		"identifiers":[{"scheme":"vat","value":"DE1"}],"invoice_number_prefix":"A-"}`)
	path := "/v1/companies/" + co["id"].(string)
	patch := `{"trading_name":null,"address":{"line_2":null,"city":"Potsdam"},"default_payment_terms_days":null,
		"default_language":null,"identifiers":null,"invoice_number_prefix":null,"email":"billing@acme.example"}`
	first := s.recordWrite(t, http.MethodPatch, path, tok, "e1-key-patch-1", patch, nil)
	got := s.mustRecordWrite(t, first, path, tok)
	want := map[string]any{"version": float64(2), "default_payment_terms_days": float64(30), "default_language": "en",
		"invoice_number_prefix": "", "email": "billing@acme.example"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
	if _, ok := got["trading_name"]; ok {
		t.Errorf("trading_name still there: %s", first.body)
	}
	if addr := got["address"].(map[string]any); addr["city"] != "Potsdam" || addr["line_2"] != nil || addr["line_1"] != "Hauptstr. 1" {
		t.Errorf("address = %v", addr)
	}
	if ids := got["identifiers"].([]any); len(ids) != 0 {
		t.Errorf("identifiers = %v, want []", ids)
	}
	if got["updated_at"] == got["created_at"] || got["created_at"] != co["created_at"] {
		t.Errorf("created_at %v, updated_at %v (created %v)", got["created_at"], got["updated_at"], co["created_at"])
	}

	// The replay: the first answer, marked; the same key with another patch.
	replay := s.recordWrite(t, http.MethodPatch, path, tok, "e1-key-patch-1", patch, nil)
	mustStatus(t, replay, http.StatusOK)
	if replay.header.Get("Idempotent-Replayed") != "true" || string(replay.body) != string(first.body) {
		t.Errorf("replay: %s %s, want the first answer marked", replay.header.Get("Idempotent-Replayed"), replay.body)
	}
	mustCode(t, s.recordWrite(t, http.MethodPatch, path, tok, "e1-key-patch-1", `{"email":null}`, nil), http.StatusConflict, "idempotency_key_reused")

	// A patch that changes nothing appends nothing; plain JSON is accepted.
	same := s.do(t, request{method: http.MethodPatch, path: path, token: tok, key: "e1-key-patch-2", body: `{"address":{"city":"Potsdam"}}`})
	if s.mustRecordWrite(t, same, path, tok)["version"] != float64(2) {
		t.Errorf("a patch changing nothing: %s, want version 2", same.body)
	}
}

func TestRecordPatchRefusals(t *testing.T) {
	s := newService(t)
	tok := token(t, "e1-refusals")
	co := s.createCompany(t, tok, "e1-key-co-r", minimalCompany)
	cu := s.createCustomer(t, tok, co["id"].(string), "e1-key-cu-r", minimalCustomer)
	companyPath := "/v1/companies/" + co["id"].(string)
	customerPath := companyPath + "/customers/" + cu["id"].(string)
	for i, tc := range []struct {
		path, patch string
		paths       []string
	}{
		{companyPath, `{"legal_name":null}`, []string{"legal_name"}},
		{companyPath, `{"address":null}`, []string{"address"}},
		{companyPath, `{"address":{"country_code":"de","city":null}}`, []string{"address.city", "address.country_code"}},
		{companyPath, `{"colour":"red","id":"x","version":3,"archived_at":null}`, []string{"archived_at", "colour", "id", "version"}},
		{companyPath, `{"default_payment_terms_days":366,"invoice_number_prefix":"A B"}`, []string{"default_payment_terms_days", "invoice_number_prefix"}},
		{companyPath, `{"legal_name":"a\u0000b"}`, []string{"legal_name"}},
		// Unknown and read-only fields are answered first, alone: what
		// the rest does depends on the record (docs/decisions.md).
		{customerPath, `{"name":null,"company_id":"x"}`, []string{"company_id"}},
		{customerPath, `{"name":null}`, []string{"name"}},
		{customerPath, `{"identifiers":[{"scheme":"VAT"}]}`, []string{"identifiers[0].scheme", "identifiers[0].value"}},
		{customerPath, `{"address":{"line_1":"x\u0007"}}`, []string{"address.line_1"}},
	} {
		res := s.recordWrite(t, http.MethodPatch, tc.path, tok, fmt.Sprint("e1-key-refused-", i), tc.patch, nil)
		mustCode(t, res, http.StatusUnprocessableEntity, "validation_failed")
		if got := detailPaths(t, res); !slices.Equal(got, tc.paths) {
			t.Errorf("%s: paths %v, want %v", tc.patch, got, tc.paths)
		}
	}
	for _, p := range []string{companyPath, customerPath} {
		if v := s.get(t, p, tok).object(t)["version"]; v != float64(1) {
			t.Errorf("%s: version %v after refused patches, want 1", p, v)
		}
	}
	mustCode(t, s.do(t, request{method: http.MethodPatch, path: companyPath, token: tok, key: "e1-key-415", body: `{}`,
		contentType: "application/json-patch+json"}), http.StatusUnsupportedMediaType, "unsupported_media_type")
	mustCode(t, s.recordWrite(t, http.MethodPatch, companyPath, tok, "e1-key-400", `[]`, nil), http.StatusBadRequest, "malformed_request")
	mustCode(t, s.recordWrite(t, http.MethodPatch, companyPath, tok, "", `{}`, nil), http.StatusBadRequest, "malformed_request")
	mustCode(t, s.recordWrite(t, http.MethodPatch, companyPath, token(t, "e1-other"), "e1-key-404", `{}`, nil), http.StatusNotFound, "not_found")
}

func TestArchiveStateTableAndArchivedParents(t *testing.T) {
	s := newService(t)
	b := newBilling(t, s, "e1-key-archive", prefixedCompany)
	companyPath := "/v1/companies/" + b.companyID
	customerPath := companyPath + "/customers/" + b.customerID
	draft := b.create(t, "e1-key-draft-1", b.invoiceBody(t, nil))["id"].(string)
	issued := b.create(t, "e1-key-draft-2", b.invoiceBody(t, nil))["id"].(string)
	b.mustChange(t, b.issue(t, issued, "e1-key-issue-2"))

	archived := s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, customerPath+"/archive", b.tok, "e1-key-arch-cu", "", nil), customerPath, b.tok)
	if archived["archived_at"] == nil || archived["version"] != float64(2) {
		t.Fatalf("archived customer: %v", archived)
	}
	replay := s.recordWrite(t, http.MethodPost, customerPath+"/archive", b.tok, "e1-key-arch-cu", "", nil)
	if replay.status != http.StatusOK || replay.header.Get("Idempotent-Replayed") != "true" || replay.header.Get("ETag") == "" {
		t.Errorf("archive replay: %d %v", replay.status, replay.header)
	}
	mustCode(t, s.recordWrite(t, http.MethodPost, customerPath+"/archive", b.tok, "e1-key-arch-cu-2", "", nil), http.StatusConflict, "invalid_state")
	mustCode(t, s.recordWrite(t, http.MethodPatch, customerPath, b.tok, "e1-key-patch-archived", `{"name":"X"}`, nil), http.StatusConflict, "invalid_state")
	res := s.post(t, b.path(""), b.tok, "e1-key-draft-3", b.invoiceBody(t, nil))
	mustCode(t, res, http.StatusConflict, "invalid_state")
	if got := detailPaths(t, res); !slices.Equal(got, []string{"customer_id"}) {
		t.Errorf("draft for an archived customer: details %v, want customer_id", got)
	}
	// The customer's invoices keep their lifecycle.
	b.mustChange(t, b.void(t, issued, "e1-key-void-2", "archived customer"))
	b.mustChange(t, b.issue(t, draft, "e1-key-issue-1"))
	list := s.get(t, companyPath+"/customers", b.tok).object(t)["data"].([]any)
	archivedList := s.get(t, companyPath+"/customers?archived=true", b.tok).object(t)["data"].([]any)
	if len(list) != 0 || len(archivedList) != 1 {
		t.Errorf("lists: %d active, %d archived; want 0 and 1", len(list), len(archivedList))
	}
	mustCode(t, s.get(t, companyPath+"/customers?archived=yes", b.tok), http.StatusUnprocessableEntity, "validation_failed")

	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, companyPath+"/archive", b.tok, "e1-key-arch-co", `{}`, nil), companyPath, b.tok)
	res = s.post(t, companyPath+"/customers", b.tok, "e1-key-cu-new", minimalCustomer)
	mustCode(t, res, http.StatusConflict, "invalid_state")
	if got := detailPaths(t, res); !slices.Equal(got, []string{"company_id"}) {
		t.Errorf("customer under an archived company: details %v, want company_id", got)
	}
	res = s.post(t, b.path(""), b.tok, "e1-key-draft-4", b.invoiceBody(t, nil))
	mustCode(t, res, http.StatusConflict, "invalid_state")
	if got := detailPaths(t, res); !slices.Equal(got, []string{"company_id"}) {
		t.Errorf("invoice under an archived company: details %v, want company_id", got)
	}
	// A create made before the company was archived still replays.
	replay = s.post(t, b.path(""), b.tok, "e1-key-draft-1", b.invoiceBody(t, nil))
	if replay.status != http.StatusCreated || replay.header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay of a create after archiving: %d %s", replay.status, replay.body)
	}
	if got := s.get(t, "/v1/companies?archived=true", b.tok).object(t)["data"].([]any); len(got) != 1 {
		t.Errorf("archived companies: %d, want 1", len(got))
	}
	restored := s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, companyPath+"/unarchive", b.tok, "e1-key-unarch-co", "", nil), companyPath, b.tok)
	if restored["archived_at"] != nil || restored["version"] != float64(3) {
		t.Errorf("restored company: %v", restored)
	}
	mustCode(t, s.recordWrite(t, http.MethodPost, companyPath+"/unarchive", b.tok, "e1-key-unarch-co-2", "", nil), http.StatusConflict, "invalid_state")
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, customerPath+"/unarchive", b.tok, "e1-key-unarch-cu", "", nil), customerPath, b.tok)
	b.create(t, "e1-key-draft-5", b.invoiceBody(t, nil))
}

// TestConcurrentPatchesLoseNothing: sixteen PATCHes of one company at once,
// without If-Match, each setting its own field (two share the payment
// terms: a company has fifteen patchable fields), give sixteen events and
// every value; with one shared If-Match, exactly one wins.
func TestConcurrentPatchesLoseNothing(t *testing.T) {
	s := newService(t)
	tok := token(t, "e1-race")
	co := s.createCompany(t, tok, "e1-key-co-race", minimalCompany)
	path := "/v1/companies/" + co["id"].(string)
	patches := []string{`{"legal_name":"L"}`, `{"trading_name":"T"}`, `{"default_currency":"USD"}`, `{"default_language":"fr"}`,
		`{"default_payment_terms_days":7}`, `{"email":"a@b.example"}`, `{"external_reference":"R"}`,
		`{"identifiers":[{"scheme":"vat","value":"V"}]}`, `{"invoice_number_prefix":"P-"}`, `{"address":{"line_1":"L1"}}`,
		`{"address":{"line_2":"L2"}}`, `{"address":{"city":"C"}}`, `{"address":{"postal_code":"PC"}}`,
		`{"address":{"region":"RG"}}`, `{"address":{"country_code":"FR"}}`, `{"default_payment_terms_days":8}`}
	statuses := raceRecordPatches(t, s, path, tok, "e1-key-race-", patches, nil)
	if n := countStatus(statuses, http.StatusOK); n != 16 {
		t.Fatalf("%d of 16 PATCHes answered 200: %v", n, statuses)
	}
	got := s.get(t, path, tok).object(t)
	addr := mustJSON(t, got["address"])
	if got["version"] != float64(17) || got["legal_name"] != "L" || got["trading_name"] != "T" || got["default_currency"] != "USD" ||
		got["default_language"] != "fr" || got["email"] != "a@b.example" || got["external_reference"] != "R" ||
		got["invoice_number_prefix"] != "P-" || len(got["identifiers"].([]any)) != 1 ||
		addr != `{"city":"C","country_code":"FR","line_1":"L1","line_2":"L2","postal_code":"PC","region":"RG"}` ||
		(got["default_payment_terms_days"] != float64(7) && got["default_payment_terms_days"] != float64(8)) {
		t.Fatalf("after 16 PATCHes: %v", got)
	}

	tag := s.get(t, path, tok).header.Get("ETag")
	distinct := make([]string, 16)
	for i := range distinct {
		distinct[i] = fmt.Sprintf(`{"legal_name":"Winner %d"}`, i)
	}
	statuses = raceRecordPatches(t, s, path, tok, "e1-key-match-", distinct, map[string]string{"If-Match": tag})
	if countStatus(statuses, http.StatusOK) != 1 || countStatus(statuses, http.StatusPreconditionFailed) != 15 {
		t.Fatalf("with one If-Match: %v, want one 200 and fifteen 412", statuses)
	}
	if v := s.get(t, path, tok).object(t)["version"]; v != float64(18) {
		t.Errorf("version %v, want 18", v)
	}
	// A stale tag is 412 whatever the write; * holds.
	mustCode(t, s.recordWrite(t, http.MethodPost, path+"/archive", tok, "e1-key-stale", "", map[string]string{"If-Match": tag}),
		http.StatusPreconditionFailed, "precondition_failed")
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, path+"/archive", tok, "e1-key-any", "", map[string]string{"If-Match": "*"}), path, tok)
}

// raceRecordPatches sends the patches at once, each with its own key, and returns the
// statuses.
func raceRecordPatches(t *testing.T, s *service, path, tok, keyPrefix string, patches []string, headers map[string]string) []int {
	statuses := make([]int, len(patches))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, p := range patches {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			res := s.recordWrite(t, http.MethodPatch, path, tok, fmt.Sprint(keyPrefix, i), p, headers)
			statuses[i] = res.status
			if res.status != http.StatusOK && res.status != http.StatusPreconditionFailed {
				t.Errorf("%s: %d %s", p, res.status, res.body)
			}
		}()
	}
	close(start)
	wg.Wait()
	return statuses
}

func countStatus(xs []int, x int) int {
	n := 0
	for _, y := range xs {
		if y == x {
			n++
		}
	}
	return n
}

// TestDraftsTakeTheUpdatedSnapshotOnEveryInstance: an update answered by
// one instance is what the next draft on another instance freezes, and
// what the next issue there numbers with; the draft before keeps its
// snapshots byte for byte.
func TestDraftsTakeTheUpdatedSnapshotOnEveryInstance(t *testing.T) {
	a := newService(t)
	other := newService(t, func(c *config) { c.DatabaseURL = a.dbURL })
	b := newBilling(t, a, "e1-key-two", prefixedCompany)
	onOther := b
	onOther.s = other
	before := onOther.create(t, "e1-key-two-1", b.invoiceBody(t, nil))
	companyPath := "/v1/companies/" + b.companyID
	customerPath := companyPath + "/customers/" + b.customerID
	a.mustRecordWrite(t, a.recordWrite(t, http.MethodPatch, companyPath, b.tok, "e1-key-two-co", `{"legal_name":"Acme SE","invoice_number_prefix":"NEW-"}`, nil), companyPath, b.tok)
	a.mustRecordWrite(t, a.recordWrite(t, http.MethodPatch, customerPath, b.tok, "e1-key-two-cu", `{"name":"Globex Inc"}`, nil), customerPath, b.tok)

	after := onOther.create(t, "e1-key-two-2", b.invoiceBody(t, nil))
	if after["issuer"].(map[string]any)["legal_name"] != "Acme SE" || after["customer"].(map[string]any)["name"] != "Globex Inc" ||
		after["customer_name"] != "Globex Inc" {
		t.Errorf("a draft after the update on the other instance: issuer %v, customer %v", after["issuer"], after["customer"])
	}
	issued := onOther.mustChange(t, onOther.issue(t, after["id"].(string), "e1-key-two-issue"))
	if !strings.HasPrefix(issued["number"].(string), "NEW-") {
		t.Errorf("number %v, want the new prefix", issued["number"])
	}
	again := a.get(t, b.path("/"+before["id"].(string)), b.tok).object(t)
	if mustJSON(t, again["issuer"]) != mustJSON(t, before["issuer"]) || mustJSON(t, again["customer"]) != mustJSON(t, before["customer"]) ||
		again["customer_name"] != before["customer_name"] {
		t.Errorf("the draft before the update changed: %v, was %v", again, before)
	}
}

// TestRecordChangesAreExportedChainedRebuiltAndVerified: the new events go
// through export, the audit chain and its seal, a rebuild of every read
// model (which serves the same bodies) and audit verify.
func TestRecordChangesAreExportedChainedRebuiltAndVerified(t *testing.T) {
	s := sealedService(t) // a company, a customer, an issued invoice, all chained
	tok := token(t, "audited")
	var companyID, customerID string
	if err := s.pool.QueryRow(context.Background(), `SELECT company_id::text, id::text FROM customers LIMIT 1`).Scan(&companyID, &customerID); err != nil {
		t.Fatal(err)
	}
	companyPath := "/v1/companies/" + companyID
	customerPath := companyPath + "/customers/" + customerID
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPatch, companyPath, tok, "e1-key-audit-1", `{"legal_name":"Acme SE"}`, nil), companyPath, tok)
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPatch, customerPath, tok, "e1-key-audit-2", `{"email":"a@b.example"}`, nil), customerPath, tok)
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, customerPath+"/archive", tok, "e1-key-audit-3", "", nil), customerPath, tok)
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, companyPath+"/archive", tok, "e1-key-audit-4", "", nil), companyPath, tok)
	s.mustRecordWrite(t, s.recordWrite(t, http.MethodPost, companyPath+"/unarchive", tok, "e1-key-audit-5", "", nil), companyPath, tok)
	before := map[string]string{}
	for _, p := range []string{companyPath, customerPath, companyPath + "/customers?archived=true", "/v1/companies"} {
		before[p] = string(s.get(t, p, tok).body)
	}

	export, err := cliOut(s.env(), "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"CompanyUpdated", "CustomerUpdated", "CustomerArchived", "CompanyArchived", "CompanyUnarchived"} {
		if !strings.Contains(export, `"type":"`+typ+`"`) {
			t.Errorf("the export has no %s", typ)
		}
	}
	waitAllChained(t, s)
	seal, err := cliOut(s.env(), "audit", "seal")
	if err != nil {
		t.Fatal(err)
	}
	if out, err := cliOut(s.env(), "audit", "verify-log", "--seal", writeFile(t, "seal.json", seal)); err != nil {
		t.Fatalf("verify-log: %v\n%s", err, out)
	}
	if out, err := cliOut(s.env(), "projections", "rebuild"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if out, err := cliOut(s.env(), "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
	for p, body := range before {
		if got := string(s.get(t, p, tok).body); got != body {
			t.Errorf("GET %s after a rebuild:\n%s\nwas\n%s", p, got, body)
		}
	}
}

// waitAllChained waits until the audit chain holds every event.
func waitAllChained(t *testing.T, s *service) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var unchained int
		err := s.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.event_id = e.event_id)`).Scan(&unchained)
		if err != nil {
			t.Fatal(err)
		}
		if unchained == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still unchained", unchained)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
