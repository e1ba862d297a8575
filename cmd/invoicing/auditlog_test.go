package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/audit"
	"github.com/invoicing/invoicing/events"
)

var auditorKey = ed25519.NewKeyFromSeed([]byte("auditor-test-key-auditor-test-ke"))

// sealedService runs the service with a sealer that seals every batch and
// signs with auditorKey, creates some data, and waits until every event is
// chained.
func sealedService(t *testing.T) *service {
	t.Helper()
	s := newService(t, func(c *config) {
		c.Audit = auditConfig{SealEvery: 1, SealInterval: time.Minute, SigningKey: auditorKey}
	})
	b := newBilling(t, s, "audited", prefixedCompany)
	id := b.create(t, "audit-invoice-1", b.invoiceBody(t, nil))["id"].(string)
	b.mustChange(t, b.issue(t, id, "audit-issue-1"))
	deadline := time.Now().Add(20 * time.Second)
	for {
		var unchained int
		err := s.pool.QueryRow(context.Background(),
			`SELECT count(*) FROM events e WHERE NOT EXISTS (SELECT 1 FROM audit_chain c WHERE c.event_id = e.event_id)`).Scan(&unchained)
		if err != nil {
			t.Fatal(err)
		}
		if unchained == 0 {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events still unchained", unchained)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// cliOut runs the program and returns its standard output and error.
func cliOut(getenv func(string) string, args ...string) (string, error) {
	out, _, err := runCLI(getenv, args...)
	return out, err
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestAnExportVerifiesOfflineWithItsSeal(t *testing.T) {
	s := sealedService(t)
	seal, err := cliOut(s.env(), "audit", "seal")
	if err != nil {
		t.Fatal(err)
	}
	export, err := cliOut(s.env(), "events", "export")
	if err != nil {
		t.Fatal(err)
	}
	sealPath, exportPath := writeFile(t, "seal.json", seal), writeFile(t, "export.jsonl", export)
	pub := base64.StdEncoding.EncodeToString(auditorKey.Public().(ed25519.PublicKey))
	// No DATABASE_URL: offline.
	if out, err := cliOut(noEnv, "audit", "verify-log", "--from-export", exportPath, "--seal", sealPath, "--public-key", pub); err != nil {
		t.Fatalf("an untouched export: %v\n%s", err, out)
	}
	runVerifyScript(t, 0, exportPath, sealPath)

	// One changed letter in one event of the export.
	lines := strings.Split(export, "\n")
	lines[1] = strings.Replace(lines[1], `"Globex Corp"`, `"Globex Corq"`, 1)
	tampered := writeFile(t, "tampered.jsonl", strings.Join(lines, "\n"))
	out, err := cliOut(noEnv, "audit", "verify-log", "--from-export", tampered, "--seal", sealPath)
	if !errors.Is(err, errLogTampered) || !strings.Contains(out, "seq 2: changed") {
		t.Fatalf("a tampered export: %v\n%s\nwant seq 2 named as changed", err, out)
	}
	runVerifyScript(t, 1, tampered, sealPath)
	forged := strings.Replace(seal, `"seq": `, `"seq": 1`, 1)
	if out, err := cliOut(noEnv, "audit", "verify-log", "--from-export", exportPath, "--seal", writeFile(t, "forged.json", forged)); err == nil {
		t.Fatalf("a seal with a bad signature was accepted:\n%s", out)
	}
}

// runVerifyScript runs the auditors' Python script from docs, so that what
// the README tells them stays true.
func runVerifyScript(t *testing.T, wantExit int, args ...string) {
	t.Helper()
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 is not installed: docs/verify-export.py not exercised")
		return
	}
	cmd := exec.Command(python, append([]string{"../../docs/verify-export.py"}, args...)...)
	out, err := cmd.CombinedOutput()
	var exitErr *exec.ExitError
	code := 0
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != wantExit {
		t.Fatalf("verify-export.py %v exited %d, want %d:\n%s", args, code, wantExit, out)
	}
}

func TestVerifyLogNamesTamperingEvenAfterARebuild(t *testing.T) {
	s := sealedService(t)
	seal, err := cliOut(s.env(), "audit", "seal")
	if err != nil {
		t.Fatal(err)
	}
	sealPath := writeFile(t, "seal.json", seal)
	// A superuser rewrites the customer's event, then rebuilds the read
	// models from the altered log, so the API serves it consistently.
	ctx := context.Background()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`SET session_replication_role = replica`,
		`UPDATE events SET data = replace(data::text, 'Globex Corp', 'Globex Corq')::json WHERE event_type = 'CustomerCreated'`,
		`RESET session_replication_role`} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	conn.Release()
	if out, err := cliOut(s.env(), "projections", "rebuild"); err != nil {
		t.Fatalf("rebuild: %v\n%s", err, out)
	}
	if out, err := cliOut(s.env(), "audit", "verify"); err != nil {
		t.Fatalf("the read models agree with the altered log, yet audit verify says: %v\n%s", err, out)
	}
	out, err := cliOut(s.env(), "audit", "verify-log", "--seal", sealPath)
	if !errors.Is(err, errLogTampered) || !strings.Contains(out, "seq 2: changed") {
		t.Fatalf("verify-log after tampering and a rebuild: %v\n%s\nwant seq 2 named as changed", err, out)
	}
}

func TestEventsReadFindsAnEntitysStreams(t *testing.T) {
	s := sealedService(t)
	var company, invoice string
	if err := s.pool.QueryRow(context.Background(), `SELECT company_id::text, id::text FROM invoices LIMIT 1`).Scan(&company, &invoice); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string][]string{
		invoice: {events.TypeInvoiceDrafted, events.TypeInvoiceIssued},
		company: {events.TypeCompanyCreated, events.TypeInvoiceNumberAssigned},
	} {
		out, err := cliOut(s.env(), "events", "read", "--entity", id)
		if err != nil {
			t.Fatalf("events read --entity %s: %v", id, err)
		}
		lines := decodeLines(t, out)
		var types []string
		for _, l := range lines {
			types = append(types, l.Type)
			if l.Seq == nil || l.Chain == nil {
				t.Errorf("line %s has no chain link: %+v", l.ID, l)
			}
		}
		if strings.Join(types, ",") != strings.Join(want, ",") {
			t.Errorf("events read --entity %s: types %v, want %v", id, types, want)
		}
	}
	if _, err := cliOut(s.env(), "events", "read", "--entity", "not-a-uuid"); !errors.Is(err, errUsage) {
		t.Errorf("a malformed id: %v, want a usage error", err)
	}
}

// sealCLI runs `audit seal` and decodes the seal it prints.
func sealCLI(t *testing.T, getenv func(string) string) (audit.Seal, string) {
	t.Helper()
	out, errOut, err := runCLI(getenv, "audit", "seal")
	if err != nil {
		t.Fatalf("audit seal: %v\n%s", err, errOut)
	}
	var seal audit.Seal
	if err := json.Unmarshal([]byte(out), &seal); err != nil {
		t.Fatalf("audit seal printed no seal: %v\n%s", err, out)
	}
	return seal, errOut
}

func eventCount(t *testing.T, s *service) uint64 {
	t.Helper()
	var n uint64
	if err := s.pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// withEnv adds variables to getenv's.
func withEnv(getenv func(string) string, vars map[string]string) func(string) string {
	return func(k string) string {
		if v, ok := vars[k]; ok {
			return v
		}
		return getenv(k)
	}
}

// The sealer seals its first batch, then once a minute or per 1,000
// events: `audit seal` does not wait for it, but seals what the log holds.
func TestAuditSealCoversAnEventAppendedAMomentBefore(t *testing.T) {
	s := newService(t, func(c *config) {
		c.Audit = auditConfig{SealEvery: audit.DefaultSealEvery, SealInterval: audit.DefaultSealInterval, SigningKey: auditorKey}
	})
	env := withEnv(s.env(), map[string]string{"AUDIT_SIGNING_KEY": base64.StdEncoding.EncodeToString(auditorKey.Seed())})
	b := newBilling(t, s, "sealed-now", prefixedCompany)
	id := b.create(t, "seal-now-invoice-1", b.invoiceBody(t, nil))["id"].(string)
	b.mustChange(t, b.issue(t, id, "seal-now-issue-1")) // a moment before
	seal, errOut := sealCLI(t, env)
	if want := eventCount(t, s); seal.Seq != want {
		t.Fatalf("audit seal right after the writes covers seq %d of %d events", seal.Seq, want)
	}
	if seal.Signature == "" || errOut != "" {
		t.Fatalf("a seal with AUDIT_SIGNING_KEY set: %+v, stderr %q; want it signed, and no warning", seal, errOut)
	}
	sealJSON, err := json.Marshal(seal)
	if err != nil {
		t.Fatal(err)
	}
	pub := base64.StdEncoding.EncodeToString(auditorKey.Public().(ed25519.PublicKey))
	if out, err := cliOut(s.env(), "audit", "verify-log", "--seal", writeFile(t, "seal.json", string(sealJSON)), "--public-key", pub); err != nil {
		t.Fatalf("verify-log against the new seal: %v\n%s", err, out)
	}
	// Without the service's key, a new seal is refused rather than stored
	// unsigned beside signed ones.
	s.createCompany(t, b.tok, "seal-now-company-2", minimalCompany)
	if _, errOut, err := runCLI(s.env(), "audit", "seal"); err == nil || !strings.Contains(err.Error(), "AUDIT_SIGNING_KEY") {
		t.Fatalf("audit seal without the key after signed seals: %v\n%s; want an error naming AUDIT_SIGNING_KEY", err, errOut)
	}
}

func TestAuditSealWarnsWhenTheSealIsUnsigned(t *testing.T) {
	s := newService(t)
	s.createCompany(t, token(t, "unsigned"), "unsigned-company-1", minimalCompany)
	seal, errOut := sealCLI(t, s.env())
	if seal.Signature != "" || seal.Seq != eventCount(t, s) {
		t.Fatalf("audit seal without a key = %+v; want an unsigned seal of every event", seal)
	}
	if !strings.Contains(errOut, "warning: this seal is unsigned") || !strings.Contains(errOut, "AUDIT_SIGNING_KEY") {
		t.Fatalf("stderr %q; want a warning that names AUDIT_SIGNING_KEY", errOut)
	}
}
