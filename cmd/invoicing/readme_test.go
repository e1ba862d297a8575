package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// readmeSession returns the shell block under "## A first session".
func readmeSession(t *testing.T) string {
	t.Helper()
	return readmeBlock(t, "## A first session")
}

// readmeBlock returns the first shell block under heading.
func readmeBlock(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n"+heading+"\n")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatalf("README.md has no shell block under %q", heading)
	}
	return block
}

// curlRecorder stands in for curl on the session's PATH: it runs the real
// curl and appends each exchange to $README_CALLS as two lines, "status
// method URL" and the body (the service's bodies are one line, ending in a
// line feed; the header lines curl -i puts before it are left out), while
// the session sees curl's usual output. So the session's text stays
// verbatim, and the test still sees every answer, those the session only
// captures into variables included.
const curlRecorder = `#!/usr/bin/env bash
out="$(mktemp)"
"$README_REAL_CURL" "$@" -o "$out" -w '%{http_code} %{method} %{url_effective}\n' >>"$README_CALLS"
rc=$?
body="$out.body"
if head -c5 "$out" | grep -q '^HTTP/'; then sed '1,/^\r\{0,1\}$/d' "$out" >"$body"; else cp "$out" "$body"; fi
cat "$body" >>"$README_CALLS"
if [ ! -s "$body" ] || [ -n "$(tail -c1 "$body")" ]; then printf '\n' >>"$README_CALLS"; fi
cat "$out"
rm -f "$out" "$body"
exit "$rc"
`

// exchange is one HTTP call the README session made.
type exchange struct {
	status int
	method string
	path   string // with the query, without scheme and host
	body   map[string]any
}

// runREADMESession runs script with bash, curl recorded, and returns what
// it printed and every exchange in order.
func runREADMESession(t *testing.T, script, base string) (string, []exchange) {
	t.Helper()
	realCurl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("curl is not installed: the README session needs it")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "curl"), []byte(curlRecorder), 0o755); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(dir, "calls")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"),
		"README_REAL_CURL="+realCurl, "README_CALLS="+log)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README session failed: %v\n%s", err, out)
	}
	recorded, err := os.ReadFile(log)
	if err != nil {
		t.Fatalf("the README session made no HTTP call: %v\n%s", err, out)
	}
	return string(out), parseExchanges(t, string(recorded), base)
}

// parseExchanges reads curlRecorder's log.
func parseExchanges(t *testing.T, log, base string) []exchange {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(log, "\n"), "\n")
	if len(lines)%2 != 0 {
		t.Fatalf("the recorded calls are not status/body pairs:\n%s", log)
	}
	var calls []exchange
	for i := 0; i < len(lines); i += 2 {
		var x exchange
		var url string
		if _, err := fmt.Sscanf(lines[i], "%d %s %s", &x.status, &x.method, &url); err != nil {
			t.Fatalf("recorded call %q: %v", lines[i], err)
		}
		x.path = strings.TrimPrefix(url, base)
		if lines[i+1] != "" {
			if err := json.NewDecoder(bytes.NewReader([]byte(lines[i+1]))).Decode(&x.body); err != nil {
				t.Fatalf("%s %s answered %d with a body that is no JSON object: %v\n%s", x.method, x.path, x.status, err, lines[i+1])
			}
		}
		calls = append(calls, x)
	}
	return calls
}

// readmeStep is what the README promises for one call of its session.
type readmeStep struct {
	name   string
	method string
	path   string // a regular expression for the path and query
	status int
	fields map[string]any // top-level fields and their values, compared as %v
	check  func(t *testing.T, body map[string]any, ids map[string]string)
}

const uuidRE = `[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`

// readmeSteps is the README's first session, call by call: a company, a
// customer, two drafts, the drafts a page at a time, then the first draft
// issued, voided and read back.
func readmeSteps() []readmeStep {
	company := `/v1/companies/` + uuidRE
	invoice := company + `/invoices/` + uuidRE
	draft := map[string]any{"status": "draft", "number": nil, "total_minor": 17850, "version": 1}
	return []readmeStep{
		{name: "create a company", method: "POST", path: `/v1/companies`, status: 201,
			fields: map[string]any{"legal_name": "Acme GmbH", "invoice_number_prefix": "INV-"},
			check:  remember("company")},
		{name: "get the company", method: "GET", path: company, status: 200, fields: map[string]any{"legal_name": "Acme GmbH"}, check: sameID("company")},
		{name: "create a customer", method: "POST", path: company + `/customers`, status: 201, fields: map[string]any{"name": "Globex Corp"}, check: remember("customer")},
		{name: "draft an invoice", method: "POST", path: company + `/invoices`, status: 201, fields: draft, check: remember("first draft")},
		{name: "draft another", method: "POST", path: company + `/invoices`, status: 201, fields: draft, check: remember("second draft")},
		{name: "list drafts", method: "GET", path: company + `/invoices\?status=draft&limit=1`, status: 200, check: page("first draft", true)},
		{name: "list the next page", method: "GET", path: company + `/invoices\?status=draft&limit=1&after=[A-Za-z0-9_-]+`, status: 200, check: page("second draft", false)},
		{name: "issue", method: "POST", path: invoice + `/issue`, status: 200,
			fields: map[string]any{"status": "issued", "number": "INV-000001", "version": 2}, check: sameID("first draft")},
		{name: "void", method: "POST", path: invoice + `/void`, status: 200,
			fields: map[string]any{"status": "void", "number": "INV-000001", "void_reason": "Sent to the wrong customer", "version": 3},
			check:  sameID("first draft")},
		{name: "get the invoice", method: "GET", path: invoice, status: 200,
			fields: map[string]any{"status": "void", "number": "INV-000001", "void_reason": "Sent to the wrong customer", "version": 3},
			check:  sameID("first draft")},
	}
}

// remember records the answer's id under name.
func remember(name string) func(*testing.T, map[string]any, map[string]string) {
	return func(t *testing.T, body map[string]any, ids map[string]string) {
		ids[name] = fmt.Sprint(body["id"])
	}
}

// sameID checks that the answer is the resource remembered under name.
func sameID(name string) func(*testing.T, map[string]any, map[string]string) {
	return func(t *testing.T, body map[string]any, ids map[string]string) {
		if got := fmt.Sprint(body["id"]); got != ids[name] {
			t.Errorf("answered with id %s; want the %s, %s", got, name, ids[name])
		}
	}
}

// page checks a list page holding exactly the draft remembered under name,
// with a next cursor when more is to come.
func page(name string, more bool) func(*testing.T, map[string]any, map[string]string) {
	return func(t *testing.T, body map[string]any, ids map[string]string) {
		data, _ := body["data"].([]any)
		if len(data) != 1 {
			t.Fatalf("page holds %d invoices; want 1", len(data))
		}
		row, _ := data[0].(map[string]any)
		if row["id"] != ids[name] || row["status"] != "draft" {
			t.Errorf("page holds %v (%v); want the %s, %s, as a draft", row["id"], row["status"], name, ids[name])
		}
		pagination, _ := body["pagination"].(map[string]any)
		cursor, ok := pagination["next_cursor"]
		if !ok || (cursor != nil) != more {
			t.Errorf("next_cursor = %v; want one: %v", cursor, more)
		}
	}
}

// TestREADMESessionWorks runs the README's first session, then its
// "Changing records" walk-through in the same shell, verbatim but for the
// address, against the service with make run's development secret, and
// holds each of their calls to what the README says it answers.
func TestREADMESessionWorks(t *testing.T) {
	const makeRunSecret = "dev-only-insecure-hs256-secret-0123456789abcdef"
	s := newService(t, func(c *config) { c.Auth.HS256Secret = makeRunSecret })
	script := strings.Replace(readmeSession(t), "API=localhost:8080", "API="+strings.TrimPrefix(s.url, "http://"), 1)
	if !strings.Contains(script, "API="+strings.TrimPrefix(s.url, "http://")) {
		t.Fatal("the README session no longer sets API=localhost:8080")
	}
	script += readmeBlock(t, "## Changing records") + readmeBlock(t, "## Credit notes and payments")
	out, calls := runREADMESession(t, script, s.url)
	if strings.Contains(out, `"error"`) {
		t.Errorf("README session met an error:\n%s", out)
	}
	steps := append(append(readmeSteps(), changingRecordsSteps(time.Now())...), settlementSteps()...)
	if len(calls) != len(steps) {
		t.Errorf("the README session made %d calls; want %d:\n%s", len(calls), len(steps), out)
	}
	ids := map[string]string{}
	for i := range min(len(calls), len(steps)) {
		t.Run(fmt.Sprintf("%d %s", i+1, steps[i].name), func(t *testing.T) {
			checkStep(t, steps[i], calls[i], ids)
		})
	}
}

// changingRecordsSteps is the README's "Changing records", call by call,
// run on the day today: the customer patched, archived and listed among the
// archived, the remaining draft found, read, revised and issued today.
func changingRecordsSteps(today time.Time) []readmeStep {
	company := `/v1/companies/` + uuidRE
	customer := company + `/customers/` + uuidRE
	invoice := company + `/invoices/` + uuidRE
	day := today.Format(time.DateOnly)
	due := today.AddDate(0, 0, 30).Format(time.DateOnly)
	return []readmeStep{
		{name: "patch the customer", method: "PATCH", path: customer, status: 200,
			fields: map[string]any{"name": "Globex Corp", "version": 2, "archived_at": nil},
			check: both(sameID("customer"), func(t *testing.T, body map[string]any, _ map[string]string) {
				addr, _ := body["address"].(map[string]any)
				if addr["line_1"] != "742 Evergreen Terrace" || addr["postal_code"] != "12346" || addr["city"] != "Springfield" {
					t.Errorf("address = %v; want the new line_1 and postal_code, the city kept", addr)
				}
			})},
		{name: "archive the customer", method: "POST", path: customer + `/archive`, status: 200, fields: map[string]any{"version": 3},
			check: both(sameID("customer"), func(t *testing.T, body map[string]any, _ map[string]string) {
				if body["archived_at"] == nil {
					t.Error("archived_at is null after an archive")
				}
			})},
		{name: "list the archived customers", method: "GET", path: company + `/customers\?archived=true`, status: 200, check: listOf("customer")},
		{name: "find the remaining draft", method: "GET", path: company + `/invoices\?status=draft`, status: 200, check: listOf("second draft")},
		{name: "get the draft and its ETag", method: "GET", path: invoice, status: 200, fields: map[string]any{"version": 1}, check: sameID("second draft")},
		{name: "revise the draft's lines", method: "PATCH", path: invoice, status: 200,
			fields: map[string]any{"status": "draft", "version": 2, "subtotal_minor": 30000, "tax_minor": 5700, "total_minor": 35700},
			check:  sameID("second draft")},
		{name: "issue it dated today", method: "POST", path: invoice + `/issue`, status: 200,
			fields: map[string]any{"status": "issued", "number": "INV-000002", "version": 3, "issue_date": day, "due_date": due},
			check:  sameID("second draft")},
	}
}

// settlementSteps is the README's "Credit notes and payments": the invoice
// issued today credited for one hour and paid the rest, then found among
// the paid ones, with its credit note.
func settlementSteps() []readmeStep {
	company := `/v1/companies/` + uuidRE
	invoice := company + `/invoices/` + uuidRE
	return []readmeStep{
		{name: "credit an hour", method: "POST", path: invoice + `/credit_notes`, status: 201,
			fields: map[string]any{"number": "CN-000001", "invoice_number": "INV-000002", "total_minor": 11900},
			check: func(t *testing.T, body map[string]any, ids map[string]string) {
				if body["invoice_id"] != ids["second draft"] {
					t.Errorf("invoice_id = %v; want the second draft, %s", body["invoice_id"], ids["second draft"])
				}
				ids["credit note"], _ = body["id"].(string)
			}},
		{name: "pay what is due", method: "POST", path: invoice + `/payments`, status: 201,
			fields: map[string]any{"amount_credited_minor": 11900, "amount_paid_minor": 23800, "amount_due_minor": 0,
				"payment_status": "paid", "version": 5},
			check: sameID("second draft")},
		{name: "list the paid invoices", method: "GET", path: company + `/invoices\?payment_status=paid`, status: 200, check: listOf("second draft")},
		{name: "list the invoice's credit notes", method: "GET", path: company + `/credit_notes\?invoice_id=` + uuidRE, status: 200, check: listOf("credit note")},
	}
}

// both runs two checks.
func both(a, b func(*testing.T, map[string]any, map[string]string)) func(*testing.T, map[string]any, map[string]string) {
	return func(t *testing.T, body map[string]any, ids map[string]string) {
		a(t, body, ids)
		b(t, body, ids)
	}
}

// listOf checks a list page holding exactly the record remembered under name.
func listOf(name string) func(*testing.T, map[string]any, map[string]string) {
	return func(t *testing.T, body map[string]any, ids map[string]string) {
		data, _ := body["data"].([]any)
		if len(data) != 1 {
			t.Fatalf("the list holds %d items; want only the %s", len(data), name)
		}
		if row, _ := data[0].(map[string]any); row["id"] != ids[name] {
			t.Errorf("the list holds %v; want the %s, %s", row["id"], name, ids[name])
		}
	}
}

// checkStep holds one recorded call to its step.
func checkStep(t *testing.T, step readmeStep, call exchange, ids map[string]string) {
	if call.method != step.method || !regexp.MustCompile(`^`+step.path+`$`).MatchString(call.path) || call.status != step.status {
		t.Fatalf("call %s %s answered %d; want %s %s answering %d\n%v", call.method, call.path, call.status,
			step.method, step.path, step.status, call.body)
	}
	for field, want := range step.fields {
		if got, ok := call.body[field]; !ok || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v; want %v", field, got, want)
		}
	}
	step.check(t, call.body, ids)
}
