package einvoice

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The CEN check: EN16931_VALIDATOR names a runner that takes files and
// prints "PASS FILE (…)" or "FAIL FILE: RULE: text | RULE: text" per file
// (the one in the repository's CI is CEN's release 1.3.16 artefacts run
// with Saxon-HE; see docs/operations.md, "E-invoices"). Without it the tests that need it
// skip, saying so.

// cenResult is the CEN check's verdict on one file.
type cenResult struct {
	pass  bool
	line  string
	rules map[string]bool
}

func cenValidator(t *testing.T) string {
	t.Helper()
	v := os.Getenv("EN16931_VALIDATOR")
	if v == "" {
		t.Skip("EN16931_VALIDATOR is not set: the CEN EN 16931 check (validate.sh FILE...) is not run; .ci/run sets it")
	}
	return v
}

// runCEN runs the CEN check once over files (it compiles its stylesheets
// per file, about a second each: batch).
func runCEN(t *testing.T, files []string) map[string]cenResult {
	t.Helper()
	out, err := exec.Command(cenValidator(t), files...).CombinedOutput()
	if _, ok := err.(*exec.ExitError); err != nil && !ok {
		t.Fatalf("run %s: %v\n%s", os.Getenv("EN16931_VALIDATOR"), err, out)
	}
	results := map[string]cenResult{}
	for _, line := range strings.Split(string(out), "\n") {
		verdict, rest, _ := strings.Cut(line, " ")
		if verdict != "PASS" && verdict != "FAIL" {
			continue
		}
		file, problems, _ := strings.Cut(rest, ": ")
		file, _, _ = strings.Cut(file, " (")
		r := cenResult{pass: verdict == "PASS", line: line, rules: map[string]bool{}}
		for _, p := range strings.Split(problems, "|") {
			if id, _, ok := strings.Cut(strings.TrimSpace(p), ":"); ok {
				r.rules[id] = true
			}
		}
		results[file] = r
	}
	for _, f := range files {
		if _, ok := results[f]; !ok {
			t.Fatalf("the CEN check printed no verdict for %s:\n%s", f, out)
		}
	}
	return results
}

// examplesDir is the folder of CEN's example invoices: EN16931_EXAMPLES,
// or examples/ beside the runner EN16931_VALIDATOR names.
func examplesDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("EN16931_EXAMPLES")
	if dir == "" && os.Getenv("EN16931_VALIDATOR") != "" {
		dir = filepath.Join(filepath.Dir(os.Getenv("EN16931_VALIDATOR")), "examples")
	}
	if dir == "" {
		t.Skip("neither EN16931_EXAMPLES nor EN16931_VALIDATOR is set: CEN's example invoices are not read")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("CEN's examples folder %s: %v", dir, err)
	}
	return dir
}

// writeFiles writes each document into dir and returns the paths in the
// order of names.
func writeFiles(t *testing.T, dir string, names []string, docs map[string][]byte) []string {
	t.Helper()
	var paths []string
	for _, n := range names {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, docs[n], 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths
}
