// Package archtest checks that dependencies point one way, as the package
// table of README.md and docs/design.md describe them: transport →
// command/query → events, projections → events, audit → events, webhook → events, einvoice → events (used by transport and cmd only),
// wiring (telemetry, the benchmark) only under cmd/, and that the domain
// knows nothing of HTTP or SQL.
package archtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/invoicing/invoicing/"

// Project packages, as paths relative to the module.
const (
	audit       = "audit"
	command     = "command"
	events      = "events"
	projections = "projections"
	query       = "query"
	transport   = "transport"
	benchLib    = "internal/bench"
	einvoice    = "einvoice"
	pdf         = "einvoice/pdf"
	webhook     = "webhook"
	public      = "publicevents"
	// telemetry is wiring: its home is under cmd/invoicing, and no package
	// outside cmd/ may import it wherever it sits.
	telemetry    = "cmd/invoicing/internal/telemetry"
	oldTelemetry = "internal/telemetry"
)

// rule bans a set of imports (direct or transitive) for the packages it
// applies to.
type rule struct {
	name    string
	applies func(pkg string) bool
	bans    []string
}

// is applies to pkg itself only; under to pkg and the packages below it.
func is(pkg string) func(string) bool { return func(p string) bool { return p == pkg } }

func under(pkg string) func(string) bool {
	return func(p string) bool { return p == pkg || strings.HasPrefix(p, pkg+"/") }
}

func outside(prefixes ...string) func(string) bool {
	return func(p string) bool {
		for _, prefix := range prefixes {
			if under(prefix)(p) {
				return false
			}
		}
		return true
	}
}

// anyOf applies to the packages under any of pkgs.
func anyOf(pkgs ...string) func(string) bool {
	return func(p string) bool { return !outside(pkgs...)(p) }
}

func project(pkgs ...string) []string {
	out := make([]string, len(pkgs))
	for i, p := range pkgs {
		out[i] = module + p
	}
	return out
}

var sqlAndHTTP = []string{"github.com/jackc/pgx", "net/http"}

func rules() []rule {
	return []rule{
		{"the shared domain is a leaf: events imports no project package", is(events), append([]string{strings.TrimSuffix(module, "/")}, sqlAndHTTP...)},
		{"public event names follow events alone: publicevents imports no other project package, SQL or HTTP", under(public),
			append(project(command, query, projections, transport, audit, einvoice, "events/pgstore", "events/esdb"), sqlAndHTTP...)},
		{"the write side knows no SQL, HTTP, read side, audit or adapter", under(command),
			append(project(query, projections, transport, audit, "events/pgstore", "events/esdb"), sqlAndHTTP...)},
		{"the read side never imports projections, the write side or audit", under(query), append(project(projections, command, transport, audit), "net/http")},
		{"projections know no HTTP, commands, queries or the audit log", under(projections), append(project(command, query, transport, audit), "net/http")},
		{"the audit log follows events alone: no read models, commands or HTTP", under(audit), append(project(projections, command, query, transport), "net/http")},
		{"webhook delivery follows the log alone: no commands, read models or HTTP handlers (cmd injects what it needs)", under(webhook),
			project(command, query, projections, transport, audit, einvoice)},
		{"transport reaches stores only through command and query", under(transport),
			project(projections, audit, "events/pgstore", "events/esdb", "internal/pgmigrate")},
		{"documents are renderings at the edge: nothing below transport and cmd imports einvoice",
			anyOf(events, command, query, projections, audit), project(einvoice)},
		{"einvoice renders values: no store, read model, command, HTTP or SQL", under(einvoice),
			append(project(command, query, projections, transport, audit, "events/pgstore", "events/esdb"), sqlAndHTTP...)},
		{"telemetry is wiring: only commands under cmd/ import it", outside("cmd", oldTelemetry), project(telemetry, oldTelemetry)},
		{"the benchmark is a tool: nothing but its command imports it", outside("cmd/bench", benchLib), project(benchLib)},
		{"the test helper is for tests: no package's build imports it", outside("internal/pgtest"), project("internal/pgtest")},
		{"only the edges (transport, cmd) render PDFs: not even einvoice imports einvoice/pdf", outside(transport, "cmd", pdf), project(pdf)},
		{"throwaway clusters are for tests and the benchmark", outside("internal/pgcluster", "internal/pgtest", benchLib, "cmd/bench"), project("internal/pgcluster")},
	}
}

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

// violations lists, sorted, every import of all that a rule bans.
func violations(all map[string][]string, rules []rule) []string {
	var out []string
	for _, r := range rules {
		for pkg, ds := range all {
			if !r.applies(pkg) {
				continue
			}
			for _, d := range ds {
				for _, ban := range r.bans {
					if d == ban || strings.HasPrefix(d, ban+"/") {
						out = append(out, pkg+" imports "+d+": "+r.name)
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func TestDependenciesPointOneWay(t *testing.T) {
	for _, v := range violations(deps(t), rules()) {
		t.Error(v)
	}
}

// TestEachRuleCatchesItsArrow breaks each arrow on a made-up import graph,
// so a rule that could never fire (a typo in a path) fails here.
func TestEachRuleCatchesItsArrow(t *testing.T) {
	broken := map[string][]string{
		events:          {module + command},
		command:         {module + audit},
		query:           {module + projections},
		projections:     {module + audit},
		audit:           {module + projections},
		transport:       {module + "events/pgstore"},
		"internal/x":    {module + telemetry},
		"projections/y": {module + benchLib},
		"command/z":     {module + "internal/pgtest"},
		"transport/w":   {module + "internal/pgcluster"},
		"audit/v":       {module + einvoice},
		"webhook/u":     {module + query},
		"einvoice/pdf":  {module + query},
		"einvoice/w":    {module + pdf},
		public:          {module + transport},
	}
	got := violations(broken, rules())
	for _, r := range rules() {
		found := false
		for _, v := range got {
			found = found || strings.HasSuffix(v, ": "+r.name)
		}
		if !found {
			t.Errorf("rule %q caught nothing in a graph that breaks it", r.name)
		}
	}
}

// TestNoToolsAtTheTopLevel keeps the top level for the product's packages:
// the benchmark lives in internal/bench with its command under cmd/.
func TestNoToolsAtTheTopLevel(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"bench", "tools"} {
		if _, err := os.Stat(filepath.Join(root, dir)); err == nil {
			t.Errorf("%s/ is at the top level: tools live under internal/ with their command under cmd/", dir)
		} else if !os.IsNotExist(err) {
			t.Errorf("stat %s: %v", dir, err)
		}
	}
}
