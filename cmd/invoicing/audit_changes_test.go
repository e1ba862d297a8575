package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"time"
)

// Issue 21, acceptance: every new event (updates, archives, restores,
// revisions, an issue that moved its dates) is exported, chained, sealed
// and verified, online and offline (verify-log and docs/verify-export.py),
// with text a canonical encoding could get wrong (non-ASCII, HTML
// characters, nested nulls).
func TestEveryChangeIsExportedChainedAndVerifiedOffline(t *testing.T) {
	s := sealedService(t)
	b := newBilling(t, s, "audited-changes", fullCompany)
	company := "/v1/companies/" + b.companyID
	customer := company + "/customers/" + b.customerID
	draft := b.path("/" + b.create(t, "audited-changes-draft", b.invoiceBody(t, nil))["id"].(string))
	for i, w := range []struct{ method, path, body string }{
		{http.MethodPatch, company, `{"legal_name":"Smith & Söhne <\"Nord\">","address":{"line_2":null,"city":"Köln"},"identifiers":null}`},
		{http.MethodPatch, customer, `{"name":"Ünïcödé 東京 😀","email":null}`},
		{http.MethodPost, customer + "/archive", ""},
		{http.MethodPost, customer + "/unarchive", `{}`},
		{http.MethodPost, company + "/archive", ""},
		{http.MethodPost, company + "/unarchive", ""},
		{http.MethodPatch, draft, `{"notes":"Tab\tand\nnewline ✓","lines":[{"description":"Ärger","quantity":"0.333","unit_amount_minor":1,"tax_rate_bps":1}]}`},
		{http.MethodPost, draft + "/issue", `{"issue_date":"2026-11-26"}`},
		{http.MethodPost, draft + "/void", `{"reason":"Storniert – falscher Kunde"}`},
	} {
		req := request{method: w.method, path: w.path, token: b.tok, key: "audited-changes-" + string(rune('a'+i)), body: w.body}
		if w.method == http.MethodPatch {
			req.contentType = mergePatchType
		}
		mustStatus(t, s.do(t, req), http.StatusOK)
	}
	export, err := cliOut(s.env(), "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"CompanyUpdated", "CompanyArchived", "CompanyUnarchived", "CustomerUpdated",
		"CustomerArchived", "CustomerUnarchived", "InvoiceRevised", "InvoiceIssued", "InvoiceVoided"} {
		if !strings.Contains(export, `"type":"`+typ+`"`) {
			t.Errorf("the export has no %s", typ)
		}
	}
	waitChained(t, s)
	seal, err := cliOut(s.env(), "audit", "seal")
	if err != nil {
		t.Fatal(err)
	}
	if export, err = cliOut(s.env(), "events", "export"); err != nil {
		t.Fatal(err)
	}
	sealPath, exportPath := writeFile(t, "seal.json", seal), writeFile(t, "export.jsonl", export)
	pub := base64.StdEncoding.EncodeToString(auditorKey.Public().(ed25519.PublicKey))
	if out, err := cliOut(s.env(), "audit", "verify-log", "--seal", sealPath); err != nil {
		t.Fatalf("verify-log: %v\n%s", err, out)
	}
	if out, err := cliOut(noEnv, "audit", "verify-log", "--from-export", exportPath, "--seal", sealPath, "--public-key", pub); err != nil {
		t.Fatalf("verify-log of the export, offline: %v\n%s", err, out)
	}
	runVerifyScript(t, 0, exportPath, sealPath)
	if out, err := cliOut(s.env(), "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}

// waitChained waits until the audit chain holds every event.
func waitChained(t *testing.T, s *service) {
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
