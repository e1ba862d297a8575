package main

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// noEnv is an empty environment: a command that ran instead of printing its
// help would fail for want of DATABASE_URL or AUTH_HS256_SECRET.
func noEnv(string) string { return "" }

// runCLI runs the program and returns its output and error.
func runCLI(getenv func(string) string, args ...string) (stdout, stderr string, err error) {
	var out, errOut bytes.Buffer
	err = run(context.Background(), args, getenv, &out, &errOut)
	return out.String(), errOut.String(), err
}

// commandPaths lists the path of every visible command of the tree, the
// root's included (as an empty path).
func commandPaths(cmd *cobra.Command, path []string) [][]string {
	paths := [][]string{path}
	for _, sub := range cmd.Commands() {
		if sub.Hidden {
			continue
		}
		paths = append(paths, commandPaths(sub, append(slices.Clone(path), sub.Name()))...)
	}
	return paths
}

func TestEveryCommandHasHelpListingItsFlags(t *testing.T) {
	root := newRootCmd(noEnv)
	paths := commandPaths(root, nil)
	for _, want := range [][]string{{"serve"}, {"dev-token"}, {"events", "read"}, {"events", "export"},
		{"projections", "status"}, {"projections", "rebuild"}, {"projections", "retry"}, {"audit", "verify"},
		{"version"}, {"healthcheck"}, {"einvoice", "validate"}, {"completion", "bash"}, {"help"}} {
		if !slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, want) }) {
			t.Errorf("the command tree lacks %q", want)
		}
	}
	for _, path := range paths {
		for _, helpFlag := range []string{"--help", "-h"} {
			args := append(slices.Clone(path), helpFlag)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				cmd, _, err := root.Find(path)
				if err != nil {
					t.Fatal(err)
				}
				out, errOut, err := runCLI(noEnv, args...)
				if err != nil || errOut != "" {
					t.Fatalf("err = %v, stderr %q; want help and exit 0", err, errOut)
				}
				if !strings.Contains(out, "Usage:") || !strings.Contains(out, strings.Join(append([]string{"invoicing"}, path...), " ")) {
					t.Errorf("output is not the help of %q:\n%s", path, out)
				}
				for _, name := range flagNames(cmd) {
					if !strings.Contains(out, "--"+name) {
						t.Errorf("help does not list --%s:\n%s", name, out)
					}
				}
				if cmd.HasAvailableSubCommands() && strings.Contains(out, cmd.CommandPath()+" [flags]") {
					t.Errorf("a group's help offers to run it alone:\n%s", out)
				}
			})
		}
	}
}

// flagNames lists the flags cmd accepts, its own and inherited, with the
// help flag cobra adds when it runs.
func flagNames(cmd *cobra.Command) []string {
	names := []string{"help"}
	add := func(f *pflag.Flag) {
		if !f.Hidden && !slices.Contains(names, f.Name) {
			names = append(names, f.Name)
		}
	}
	cmd.NonInheritedFlags().VisitAll(add)
	cmd.InheritedFlags().VisitAll(add)
	return names
}

func TestHelpShowsTheCommandsOwnFlags(t *testing.T) {
	tests := []struct {
		args       []string
		want, not  []string
		wantStdout bool
	}{
		{args: []string{"events", "read", "--help"}, want: []string{"--stream"}, not: []string{"--follow", "--from", "--type", "--account"}},
		{args: []string{"events", "export", "--help"}, want: []string{"--from", "--type", "--account", "--follow"}, not: []string{"--stream"}},
		{args: []string{"projections", "status", "--help"}, want: []string{"--output"}},
		{args: []string{"audit", "verify", "--help"}, want: []string{"--output"}},
		{args: []string{"dev-token", "--help"}, want: []string{"--org", "--sub", "--scope", "--ttl"}},
		{args: []string{"healthcheck", "--help"}, want: []string{"--url", "--timeout", "http://127.0.0.1:8080/readyz"}},
		{args: []string{"help", "events", "export"}, want: []string{"--follow"}},
		{args: []string{"--help"}, want: []string{"serve", "dev-token", "events", "projections", "audit", "version", "healthcheck", "completion", "--version"}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, _, err := runCLI(noEnv, tt.args...)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("help lacks %s:\n%s", w, out)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out, n) {
					t.Errorf("help names another command's %s:\n%s", n, out)
				}
			}
		})
	}
}

func TestUsageErrorsAreOneLineAndExit2(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "missing command"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"serv"}, "did you mean serve?"},
		{[]string{"--bogus"}, "unknown flag: --bogus"},
		{[]string{"events"}, "events: missing command, one of: export, read"},
		{[]string{"events", "bogus"}, `events: unknown command "bogus"`},
		{[]string{"events", "read"}, "give exactly one of --stream and --entity"},
		{[]string{"events", "read", "--stream", "s", "--entity", "01a20588-7ee3-7d5f-b3e9-b847ee0b78f7"}, "give exactly one of --stream and --entity"},
		{[]string{"events", "read", "--stream"}, "flag needs an argument: --stream"},
		{[]string{"events", "read", "--follow"}, "unknown flag: --follow"},
		{[]string{"events", "export", "--from", "12"}, `invalid argument "12" for "--from"`},
		{[]string{"events", "export", "stream-1"}, `takes no arguments, got "stream-1"`},
		{[]string{"projections"}, "projections: missing command"},
		{[]string{"projections", "status", "companies"}, "projections status: takes no arguments"},
		{[]string{"projections", "status", "--output", "yaml"}, "want text or json"},
		{[]string{"projections", "rebuild", "nope"}, `no projection named "nope"`},
		{[]string{"projections", "retry", "companies", "nope"}, `no projection named "nope"`},
		{[]string{"audit"}, "audit: missing command, one of: seal, verify, verify-log"},
		{[]string{"audit", "verify", "-o", "xml"}, "want text or json"},
		{[]string{"dev-token"}, "--org is required"},
		{[]string{"dev-token", "--org", "acme", "--ttl", "soon"}, `invalid argument "soon" for "--ttl"`},
		{[]string{"serve", "now"}, `serve: takes no arguments, got "now"`},
		{[]string{"serve", "--port", "80"}, "unknown flag: --port"},
		{[]string{"version", "--short"}, "unknown flag: --short"},
		{[]string{"healthcheck", "--url", "ftp://example.com"}, "want an http:// or https:// URL"},
		{[]string{"healthcheck", "--timeout", "0s"}, "want a positive duration"},
		{[]string{"help", "bogus"}, `no command "bogus"`},
		{[]string{"completion"}, "completion: missing command"},
		{[]string{"einvoice", "validate"}, "requires at least 1 arg(s)"},
		{[]string{"completion", "tcsh"}, `unknown command "tcsh"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			out, errOut, err := runCLI(noEnv, tt.args...)
			if !errors.Is(err, errUsage) {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if msg := err.Error(); strings.Contains(msg, "\n") || !strings.Contains(msg, tt.want) || !strings.HasSuffix(msg, "--help')") {
				t.Errorf("err = %q, want one line with %q pointing at --help", msg, tt.want)
			}
			if out != "" || errOut != "" {
				t.Errorf("a usage error printed stdout %q, stderr %q; main prints the one line", out, errOut)
			}
		})
	}
}

func TestFailuresThatAreNotUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"dev-token", "--org", "acme"},    // AUTH_HS256_SECRET unset
		{"projections", "status"},         // DATABASE_URL unset
		{"audit", "verify", "-o", "json"}, // DATABASE_URL unset
		{"serve"},                         // configuration incomplete
	} {
		if _, _, err := runCLI(noEnv, args...); err == nil || errors.Is(err, errUsage) {
			t.Errorf("%q = %v, want a failure that exits 1", args, err)
		}
	}
}

// TestExitCodes runs main in a child process (this test binary, re-entered
// through INVOICING_TEST_MAIN) and checks the exit statuses: 0 for help, 2
// for a usage error, 1 for a failure.
func TestExitCodes(t *testing.T) {
	if args := os.Getenv("INVOICING_TEST_MAIN"); args != "" {
		os.Args = append([]string{"invoicing"}, strings.Fields(args)...)
		main()
		os.Exit(0)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	tests := []struct {
		args string
		code int
	}{
		{"serve --help", 0},
		{"version", 0},
		{"events read", 2},
		{"projections status --output yaml", 2},
		{"bogus", 2},
		{"dev-token --org acme", 1}, // AUTH_HS256_SECRET unset
	}
	for _, tt := range tests {
		cmd := exec.Command(exe, "-test.run=^TestExitCodes$")
		cmd.Env = []string{"INVOICING_TEST_MAIN=" + tt.args, "HOME=" + os.TempDir()}
		out, _ := cmd.CombinedOutput()
		if got := cmd.ProcessState.ExitCode(); got != tt.code {
			t.Errorf("invoicing %s exited %d, want %d:\n%s", tt.args, got, tt.code, out)
		}
		if tt.code == 2 && strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
			t.Errorf("invoicing %s printed more than one line:\n%s", tt.args, out)
		}
	}
}

func TestDescribeBuild(t *testing.T) {
	withVCS := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/invoicing/invoicing", Version: "(devel)"},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"}, {Key: "vcs.modified", Value: "true"}}}
	noVCS := &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Path: "github.com/invoicing/invoicing", Version: "(devel)"}}
	tests := []struct {
		name                       string
		info                       *debug.BuildInfo
		stampedVersion, stampedRev string
		want                       buildVersion
	}{
		{"go build in a checkout", withVCS, "", "",
			buildVersion{Version: "(devel)", Revision: "0123456789abcdef0123456789abcdef01234567", Modified: true, GoVersion: "go1.26.0"}},
		{"make build after a tag", noVCS, "v1.2.0-3-gabc1234-dirty", "abc1234def5678abc1234def5678abc1234def56",
			buildVersion{Version: "v1.2.0-3-gabc1234-dirty", Revision: "abc1234def5678abc1234def5678abc1234def56", Modified: true, GoVersion: "go1.26.0"}},
		{"version stamped alone, described after a tag", noVCS, "v1.2.0-3-gabc1234", "",
			buildVersion{Version: "v1.2.0-3-gabc1234", Revision: "abc1234", GoVersion: "go1.26.0"}},
		{"version stamped alone, no tags (git describe --always)", noVCS, "e4bcdf7-dirty", "",
			buildVersion{Version: "e4bcdf7-dirty", Revision: "e4bcdf7", Modified: true, GoVersion: "go1.26.0"}},
		{"exactly a tag", noVCS, "v1.2.0", "",
			buildVersion{Version: "v1.2.0", GoVersion: "go1.26.0"}},
		{"go install module@version", &debug.BuildInfo{GoVersion: "go1.26.0", Main: debug.Module{Version: "v1.3.0"}}, "", "",
			buildVersion{Version: "v1.3.0", GoVersion: "go1.26.0"}},
		{"no build information at all", nil, "", "", buildVersion{Version: "(devel)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeBuild(tt.info, tt.stampedVersion, tt.stampedRev); got != tt.want {
				t.Errorf("describeBuild = %+v, want %+v", got, tt.want)
			}
		})
	}
	s := describeBuild(withVCS, "", "").String()
	if want := "invoicing (devel)\nrevision: 0123456789abcdef0123456789abcdef01234567 (modified)\ngo: go1.26.0"; s != want {
		t.Errorf("String() =\n%s\nwant\n%s", s, want)
	}
	if s := describeBuild(noVCS, "", "").String(); !strings.Contains(s, "revision: unknown") {
		t.Errorf("without any revision String() = %q, want it to say the revision is unknown", s)
	}
}

// TestVersionPrintsTheStampedRevision sets the ldflags variables as make
// build does (a test binary has no VCS settings) and runs both spellings.
func TestVersionPrintsTheStampedRevision(t *testing.T) {
	oldVersion, oldRevision := version, revision
	t.Cleanup(func() { version, revision = oldVersion, oldRevision })
	version, revision = "v9.9.9-1-gdeadbee", "deadbeefcafe0123456789abcdef0123456789ab"
	for _, args := range [][]string{{"version"}, {"--version"}, {"-v"}} {
		out, _, err := runCLI(noEnv, args...)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(out, "invoicing v9.9.9-1-gdeadbee\n") || !strings.Contains(out, "revision: deadbeefcafe0123456789abcdef0123456789ab\n") {
			t.Errorf("%q printed %q, want the version and the revision", args, out)
		}
	}
	version, revision = "", ""
	if out, _, err := runCLI(noEnv, "version"); err != nil || !strings.HasPrefix(out, "invoicing ") || !strings.Contains(out, "revision: ") {
		t.Errorf("unstamped version = %q, %v; want a version line and a revision line", out, err)
	}
}

func TestReadyzURL(t *testing.T) {
	tests := map[string]string{
		":8080":            "http://127.0.0.1:8080/readyz",
		"0.0.0.0:9000":     "http://127.0.0.1:9000/readyz",
		"[::]:8080":        "http://127.0.0.1:8080/readyz",
		"127.0.0.1:0":      "http://127.0.0.1:0/readyz",
		"localhost:8081":   "http://localhost:8081/readyz",
		"[::1]:8080":       "http://[::1]:8080/readyz",
		"api.internal:443": "http://api.internal:443/readyz",
	}
	for addr, want := range tests {
		if got := readyzURL(addr); got != want {
			t.Errorf("readyzURL(%q) = %q, want %q", addr, got, want)
		}
	}
}

func TestHealthcheck(t *testing.T) {
	status := http.StatusOK
	var slow time.Duration
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/readyz" {
			http.NotFound(w, r)
			return
		}
		time.Sleep(slow)
		w.WriteHeader(status)
		w.Write([]byte(`{"status":"ok"}`))
	}))
	defer srv.Close()
	// The default URL comes from HTTP_ADDR.
	env := func(k string) string { return map[string]string{"HTTP_ADDR": srv.Listener.Addr().String()}[k] }
	if out, _, err := runCLI(env, "healthcheck"); err != nil || !strings.Contains(out, "200") {
		t.Errorf("healthcheck of a ready server = %q, %v; want exit 0", out, err)
	}
	status = http.StatusServiceUnavailable
	if _, _, err := runCLI(env, "healthcheck"); err == nil || errors.Is(err, errUsage) || !strings.Contains(err.Error(), "503") {
		t.Errorf("healthcheck of an unready server = %v; want a failure naming 503", err)
	}
	status, slow = http.StatusOK, 500*time.Millisecond
	if _, _, err := runCLI(env, "healthcheck", "--timeout", "50ms"); err == nil || errors.Is(err, errUsage) {
		t.Errorf("healthcheck of a server slower than --timeout = %v; want a failure", err)
	}
	slow = 0
	if _, _, err := runCLI(noEnv, "healthcheck", "--url", srv.URL+"/elsewhere"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("healthcheck --url of a 404 = %v; want a failure", err)
	}
	addr := srv.Listener.Addr().String()
	srv.Close()
	if _, _, err := runCLI(noEnv, "healthcheck", "--url", "http://"+addr+"/readyz"); err == nil || errors.Is(err, errUsage) {
		t.Errorf("healthcheck of a closed port = %v; want a failure", err)
	}
}
