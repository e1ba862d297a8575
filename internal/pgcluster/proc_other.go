//go:build !linux

package pgcluster

import "syscall"

// sysProcAttr runs a child as cred (when not nil). Outside Linux there is no
// parent-death signal: a program killed before it stops its cluster may leave a
// postmaster running.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}

// removeSegment does nothing outside Linux.
func removeSegment(string) {}
