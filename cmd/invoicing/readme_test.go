package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// readmeSession returns the shell block under "## A first session".
func readmeSession(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "## A first session")
	_, block, ok2 := strings.Cut(section, "```sh\n")
	block, _, ok3 := strings.Cut(block, "```")
	if !ok || !ok2 || !ok3 {
		t.Fatal("README.md has no shell block under '## A first session'")
	}
	return block
}

// TestREADMESessionWorks runs the README's first session, verbatim but for
// the address, against the service with make run's development secret.
func TestREADMESessionWorks(t *testing.T) {
	const makeRunSecret = "dev-only-insecure-hs256-secret-0123456789abcdef"
	s := newService(t, func(c *config) { c.Auth.HS256Secret = makeRunSecret })
	script := strings.Replace(readmeSession(t), "API=localhost:8080", "API="+strings.TrimPrefix(s.url, "http://"), 1)
	if !strings.Contains(script, "API="+strings.TrimPrefix(s.url, "http://")) {
		t.Fatal("the README session no longer sets API=localhost:8080")
	}
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("README session failed: %v\n%s", err, out)
	}
	for _, want := range []string{`"legal_name":"Acme GmbH"`, `"next_cursor":null`, `"status":"draft"`, `"total_minor":17850`} {
		if !strings.Contains(string(out), want) {
			t.Errorf("README session output lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(string(out), `"error"`) {
		t.Errorf("README session met an error:\n%s", out)
	}
}
