package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEnsurePostgresDecides runs deploy/ensure-postgres.sh (used by make run,
// make test and .ci/run) against fake machines: a PATH holding only fake
// id, apt-get and sudo, and a fake /usr/lib/postgresql. Nothing is
// installed for real.
func TestEnsurePostgresDecides(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	envBin, err := exec.LookPath("env")
	if err != nil {
		t.Skip("no env")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "deploy", "ensure-postgres.sh"))
	if err != nil {
		t.Fatal(err)
	}
	// fakeServer puts executable initdb, postgres and pg_ctl in dir.
	fakeServer := func(t *testing.T, dir string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"initdb", "postgres", "pg_ctl"} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	tests := []struct {
		name     string
		uid      string // what the fake id -u prints
		tools    []string
		present  bool   // the fake lib dir holds a server
		pgBin    string // "valid", "invalid" or ""
		dryRun   bool
		wantOK   bool
		wantLog  string // the fake tools' calls, in order
		wantSays string
	}{
		{name: "installed", uid: "1000", present: true, wantOK: true},
		{name: "PG_BIN set", uid: "1000", pgBin: "valid", wantOK: true},
		{name: "PG_BIN wrong", uid: "0", tools: []string{"apt-get"}, pgBin: "invalid", wantSays: "PG_BIN="},
		{name: "missing, root: apt-get", uid: "0", tools: []string{"apt-get", "sudo"}, wantOK: true,
			wantLog: "apt-get update -qq\napt-get install -y -qq --no-install-recommends postgresql\n", wantSays: "installed"},
		{name: "missing, not root: sudo apt-get", uid: "1000", tools: []string{"apt-get", "sudo"}, wantOK: true,
			wantLog: "sudo env DEBIAN_FRONTEND=noninteractive apt-get update -qq\napt-get update -qq\n" +
				"sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql\napt-get install -y -qq --no-install-recommends postgresql\n"},
		{name: "missing, not root, no sudo", uid: "1000", tools: []string{"apt-get"}, wantSays: "apt-get install -y postgresql"},
		{name: "missing, no apt-get", uid: "0", wantSays: "no apt-get"},
		{name: "missing, dry run", uid: "1000", tools: []string{"apt-get", "sudo"}, dryRun: true, wantOK: true, wantSays: "would run: sudo env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, lib, log := filepath.Join(dir, "bin"), filepath.Join(dir, "lib"), filepath.Join(dir, "calls")
			if err := os.MkdirAll(bin, 0o755); err != nil {
				t.Fatal(err)
			}
			write := func(name, body string) {
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!"+bash+"\n"+body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write("id", "echo "+tt.uid+"\n")
			if err := os.Symlink(envBin, filepath.Join(bin, "env")); err != nil {
				t.Fatal(err)
			}
			for _, tool := range tt.tools {
				switch tool {
				case "apt-get":
					// Installing creates the server binaries, as the package would.
					write("apt-get", `echo "apt-get $*" >> '`+log+`'
if [[ "$1" == install ]]; then
  /bin/mkdir -p '`+lib+`/15/bin' && for f in initdb postgres pg_ctl; do printf '#!/bin/sh\n' > '`+lib+`/15/bin/'$f; /bin/chmod +x '`+lib+`/15/bin/'$f; done
fi
`)
				case "sudo":
					write("sudo", `echo "sudo $*" >> '`+log+`'; exec "$@"`+"\n")
				}
			}
			if tt.present {
				fakeServer(t, filepath.Join(lib, "15", "bin"))
			}
			env := []string{"PATH=" + bin, "POSTGRES_LIB_DIR=" + lib}
			switch tt.pgBin {
			case "valid":
				fakeServer(t, filepath.Join(dir, "pgbin"))
				env = append(env, "PG_BIN="+filepath.Join(dir, "pgbin"))
			case "invalid":
				env = append(env, "PG_BIN="+filepath.Join(dir, "nowhere"))
			}
			args := []string{script}
			if tt.dryRun {
				args = append(args, "--dry-run")
			}
			cmd := exec.Command(bash, args...)
			cmd.Env = env
			out, err := cmd.CombinedOutput()
			if (err == nil) != tt.wantOK {
				t.Fatalf("exit %v, want ok=%v:\n%s", err, tt.wantOK, out)
			}
			if !strings.Contains(string(out), tt.wantSays) {
				t.Errorf("output lacks %q:\n%s", tt.wantSays, out)
			}
			if !tt.wantOK && strings.Count(strings.TrimSpace(string(out)), "\n") != 0 {
				t.Errorf("a refusal should be one line:\n%s", out)
			}
			calls, _ := os.ReadFile(log)
			if string(calls) != tt.wantLog {
				t.Errorf("calls:\n%s\nwant:\n%s", calls, tt.wantLog)
			}
		})
	}
}
