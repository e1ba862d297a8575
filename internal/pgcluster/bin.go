package pgcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// debianGlob is where Debian and Ubuntu install versioned server binaries.
const debianGlob = "/usr/lib/postgresql/*/bin"

// errNoBinaries explains exactly what is missing and the two ways out.
var errNoBinaries = errors.New("PostgreSQL server binaries (initdb, postgres) not found: " +
	"looked in $" + EnvBin + ", " + debianGlob + " and `pg_config --bindir`. " +
	"Install PostgreSQL (e.g. `apt-get install -y postgresql`), " +
	"or set " + EnvBin + " to the directory holding initdb and postgres, " +
	"or set " + envTestURL + " to an admin URL of a running server " +
	"(e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)")

// findBinDir returns a directory holding initdb and postgres: $PG_BIN, else
// the highest /usr/lib/postgresql/*/bin, else `pg_config --bindir`.
func findBinDir() (string, error) {
	if dir := os.Getenv(EnvBin); dir != "" {
		if !hasServer(dir) {
			return "", fmt.Errorf("%s=%s does not hold executable initdb and postgres: point it at "+
				"PostgreSQL's bin directory, unset it to search the usual places, or set %s", EnvBin, dir, envTestURL)
		}
		return dir, nil
	}
	dirs, _ := filepath.Glob(debianGlob) // the pattern is constant and valid
	sort.Slice(dirs, func(i, j int) bool { return versionLess(dirs[j], dirs[i]) })
	for _, dir := range dirs {
		if hasServer(dir) {
			return dir, nil
		}
	}
	if out, err := exec.Command("pg_config", "--bindir").Output(); err == nil {
		if dir := strings.TrimSpace(string(out)); hasServer(dir) {
			return dir, nil
		}
	}
	return "", errNoBinaries
}

// hasServer reports whether dir holds executable initdb and postgres.
func hasServer(dir string) bool {
	for _, name := range []string{"initdb", "postgres"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
			return false
		}
	}
	return true
}

// versionLess orders /usr/lib/postgresql/<version>/bin paths numerically by
// version, so that 15 sorts above 9.6.
func versionLess(a, b string) bool {
	va := versionParts(filepath.Base(filepath.Dir(a)))
	vb := versionParts(filepath.Base(filepath.Dir(b)))
	for i := 0; i < len(va) && i < len(vb); i++ {
		if va[i] != vb[i] {
			return va[i] < vb[i]
		}
	}
	return len(va) < len(vb)
}

func versionParts(s string) []int {
	var parts []int
	for _, f := range strings.Split(s, ".") {
		n, err := strconv.Atoi(f)
		if err != nil {
			n = -1 // not a version: sort it last
		}
		parts = append(parts, n)
	}
	return parts
}
