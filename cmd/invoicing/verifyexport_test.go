package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// TestVerifyExportScriptUsage holds docs/verify-export.py's command line to
// its usage text: --help answers without reading a file, and a wrong
// command line or an unreadable file is a usage error (2), never a
// traceback. What it computes is tested on real exports beside verify-log.
func TestVerifyExportScriptUsage(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed: docs/verify-export.py not exercised")
	}
	for _, c := range []struct {
		args     []string
		wantExit int
		want     string
	}{
		{[]string{"--help"}, 0, "usage: verify-export.py [-h] EXPORT.jsonl [SEAL.json]"},
		{[]string{"-h"}, 0, "SEAL.json"},
		{nil, 2, "usage: verify-export.py"},
		{[]string{"a.jsonl", "seal.json", "extra"}, 2, "unrecognized arguments: extra"},
		{[]string{"/nonexistent/export.jsonl"}, 2, "No such file"},
	} {
		out, err := exec.Command(python, append([]string{"../../docs/verify-export.py"}, c.args...)...).CombinedOutput()
		code := 0
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			code = exitErr.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.wantExit || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "Traceback") {
			t.Errorf("verify-export.py %q exited %d; want %d and output with %q:\n%s", c.args, code, c.wantExit, c.want, out)
		}
	}
}
