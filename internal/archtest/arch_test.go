// Package archtest checks that dependencies point one way:
// transport → command/query → events, projections → events, and that the
// domain knows nothing of HTTP or SQL.
package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/invoicing/invoicing/"

// deps returns each module package's transitive dependencies.
func deps(t *testing.T) map[string][]string {
	t.Helper()
	out, err := exec.Command("go", "list", "-e", "-f", `{{.ImportPath}} {{join .Deps " "}}`, module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		m[strings.TrimPrefix(fields[0], module)] = fields[1:]
	}
	return m
}

func TestDependenciesPointOneWay(t *testing.T) {
	forbidden := []struct {
		pkg   string
		rule  string
		bans  []string
		exact bool
	}{
		{"events", "the shared domain is a leaf", []string{module + "command", module + "query", module + "projections", module + "transport", "github.com/jackc/pgx", "net/http"}, true},
		{"command", "the write side knows no SQL, HTTP, read side or adapter", []string{module + "query", module + "projections", module + "transport", module + "events/pgstore", module + "events/esdb", "github.com/jackc/pgx", "net/http"}, false},
		{"query", "the read side never imports projections or the write side", []string{module + "projections", module + "command", module + "transport", "net/http"}, false},
		{"projections", "projections know no HTTP, commands or queries", []string{module + "command", module + "query", module + "transport", "net/http"}, false},
		{"transport", "transport reaches stores only through command and query", []string{module + "projections", module + "events/pgstore", module + "events/esdb", module + "internal/pgmigrate"}, false},
	}
	all := deps(t)
	for _, f := range forbidden {
		for pkg, ds := range all {
			if pkg != f.pkg && !(strings.HasPrefix(pkg, f.pkg+"/") && !f.exact) {
				continue
			}
			for _, d := range ds {
				for _, ban := range f.bans {
					if d == ban || strings.HasPrefix(d, ban+"/") {
						t.Errorf("%s imports %s: %s", pkg, d, f.rule)
					}
				}
			}
		}
	}
}
