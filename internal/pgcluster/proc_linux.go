package pgcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// sysProcAttr runs a child as cred (when not nil) and has the kernel SIGKILL
// it if this process dies first, so a killed program leaves no postmaster.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}

// removeSegment removes the small System V shared memory segment a killed
// postmaster leaves behind; its id is on line 7 of postmaster.pid.
func removeSegment(dir string) {
	b, err := os.ReadFile(filepath.Join(dir, "data", "postmaster.pid"))
	if err != nil {
		return
	}
	lines := strings.Split(string(b), "\n")
	if len(lines) < 7 {
		return
	}
	fields := strings.Fields(lines[6]) // "<key> <shmid>"
	if len(fields) != 2 {
		return
	}
	id, err := strconv.Atoi(fields[1])
	if err != nil {
		return
	}
	const ipcRMID = 0
	_, _, _ = syscall.Syscall(syscall.SYS_SHMCTL, uintptr(id), ipcRMID, 0) // best effort
}
