package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// update rewrites the golden files from what the tests see:
//
//	go test ./cmd/invoicing -run TestName -update
//
// Review the diff of testdata/ before committing it.
var update = flag.Bool("update", false, "rewrite testdata/*.golden from the bodies the tests see")

// assertGolden compares a JSON document with testdata/<name>.golden, after
// indenting it and normalising what changes from run to run (normalise).
func assertGolden(t *testing.T, name string, body []byte) {
	t.Helper()
	var indented bytes.Buffer
	if err := json.Indent(&indented, body, "", "  "); err != nil {
		t.Fatalf("%s: not JSON: %v\n%s", name, err, body)
	}
	got := normalise(indented.String()) + "\n"
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s", path)
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run the test with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update to accept it):\n%s", name, path, lineDiff(string(want), got))
	}
}

// The values that differ between runs, each replaced by a numbered
// placeholder in order of first appearance, so that a golden file still
// shows which values are equal (an invoice's company_id is the company's
// id; updated_at equals created_at).
var volatile = []struct {
	kind    string
	pattern *regexp.Regexp
}{
	{"uuid", regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)},
	{"time", regexp.MustCompile(`\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?Z`)},
	// A request fingerprint: hex SHA-256.
	{"sha256", regexp.MustCompile(`"[0-9a-f]{64}"`)},
	// A stream's or an idempotency key's hash: base64url SHA-256, alone
	// or after a stream kind ("invoice-…").
	{"hash", regexp.MustCompile(`"(?:[a-z]+-)?[A-Za-z0-9_-]{43}"`)},
}

// normalise replaces the volatile values of s by placeholders such as
// <uuid-1> and <time-2>.
func normalise(s string) string {
	for _, v := range volatile {
		seen := map[string]string{}
		s = v.pattern.ReplaceAllStringFunc(s, func(m string) string {
			inner, quoted := strings.CutPrefix(m, `"`)
			inner = strings.TrimSuffix(inner, `"`)
			prefix := ""
			if v.kind == "hash" {
				if i := strings.IndexByte(inner, '-'); i >= 0 && len(inner) > 43 {
					prefix, inner = inner[:i+1], inner[i+1:]
				}
			}
			p, ok := seen[inner]
			if !ok {
				p = fmt.Sprintf("<%s-%d>", v.kind, len(seen)+1)
				seen[inner] = p
			}
			if quoted {
				return `"` + prefix + p + `"`
			}
			return p
		})
	}
	return s
}

// lineDiff shows the lines of want and got from the first that differs.
func lineDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	fmt.Fprintf(&b, "first difference at line %d\n", i+1)
	for j := i; j < len(w) && j < i+8; j++ {
		fmt.Fprintf(&b, "- %s\n", w[j])
	}
	for j := i; j < len(g) && j < i+8; j++ {
		fmt.Fprintf(&b, "+ %s\n", g[j])
	}
	return b.String()
}

func TestNormaliseNumbersVolatileValuesInOrder(t *testing.T) {
	in := `{"id":"0190a0c0-0000-7000-8000-00000000000b","company_id":"0190a0c0-0000-7000-8000-00000000000a",` +
		`"again":"0190a0c0-0000-7000-8000-00000000000b","created_at":"2025-03-01T09:30:00.123456Z",` +
		`"updated_at":"2025-03-01T09:30:00.123456Z","issued_at":"2025-03-01T10:00:00Z","issue_date":"2025-03-01",` +
		`"request_fingerprint":"` + strings.Repeat("ab", 32) + `","idempotency_key":"` + strings.Repeat("A-_b", 10) + `xyz",` +
		`"invoice_stream":"invoice-` + strings.Repeat("Q", 43) + `","name":"Acme"}`
	want := `{"id":"<uuid-1>","company_id":"<uuid-2>","again":"<uuid-1>","created_at":"<time-1>",` +
		`"updated_at":"<time-1>","issued_at":"<time-2>","issue_date":"2025-03-01",` +
		`"request_fingerprint":"<sha256-1>","idempotency_key":"<hash-1>",` +
		`"invoice_stream":"invoice-<hash-2>","name":"Acme"}`
	if got := normalise(in); got != want {
		t.Errorf("normalise =\n%s\nwant\n%s", got, want)
	}
}
