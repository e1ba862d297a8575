package pgcluster

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ownerFile, in each temporary directory, holds the PID of the process
// that owns the cluster.
const ownerFile = "owner.pid"

// removeStale deletes the temporary directories of clusters whose process
// was killed before it could stop them (a test's -timeout panic, SIGKILL).
// The prefix pgtest- predates this package; it is kept so that directories
// left by older binaries are found too.
// The kernel has already killed their postmasters (see sysProcAttr).
func removeStale() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pgtest-*")) // constant, valid pattern
	for _, dir := range dirs {
		if stale(dir) {
			removeSegment(dir)
			_ = os.RemoveAll(dir) // best effort: it may belong to another user
		}
	}
}

// stale reports whether dir was left by a dead process and holds no
// running postmaster. A directory without an owner file is left alone: it is
// being created, or it is not ours.
func stale(dir string) bool {
	owner, ok := readPID(filepath.Join(dir, ownerFile))
	if !ok || alive(owner) {
		return false
	}
	postmaster, ok := readPID(filepath.Join(dir, "data", "postmaster.pid"))
	return !ok || !alive(postmaster)
}

// readPID reads the PID on the first line of path.
func readPID(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	first, _, _ := strings.Cut(string(b), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(first))
	return pid, err == nil && pid > 0
}

// alive reports whether a process with this PID exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
