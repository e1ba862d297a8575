//go:build !linux

package pgtest

import "syscall"

// sysProcAttr runs a child as cred (when not nil). Outside Linux there is no
// parent-death signal: a test binary killed before Main returns may leave a
// postmaster running.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}

// removeSegment does nothing outside Linux.
func removeSegment(string) {}
