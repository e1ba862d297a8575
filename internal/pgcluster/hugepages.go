package pgcluster

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// hugePagesSetting asks decide whether the server's shared memory goes in
// huge pages and returns the huge_pages setting that says so. "on" rather
// than PostgreSQL's default "try": a server that cannot have them then
// fails to start instead of running silently on 4 kB pages.
func (s *Cluster) hugePagesSetting(decide func(need int) (bool, error)) (string, error) {
	need, err := s.sharedMemoryInHugePages()
	if err != nil {
		return "", err
	}
	if need <= 0 {
		return "huge_pages=off", nil
	}
	use, err := decide(need)
	if err != nil {
		return "", fmt.Errorf("huge pages: %w", err)
	}
	if use {
		return "huge_pages=on", nil
	}
	return "huge_pages=off", nil
}

// sharedMemoryInHugePages runs `postgres -C shared_memory_size_in_huge_pages`
// on the stopped cluster with its settings: the count PostgreSQL's
// documentation gives for reserving them (vm.nr_hugepages), or -1 where the
// server has no huge pages.
func (s *Cluster) sharedMemoryInHugePages() (int, error) {
	args := []string{"-D", filepath.Join(s.dir, "data"), "-C", "shared_memory_size_in_huge_pages"}
	for _, setting := range s.settings {
		args = append(args, "-c", setting)
	}
	var out, errOut bytes.Buffer
	cmd := s.command(s.cred, filepath.Join(s.bin, "postgres"), args...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	exited, err := startLocked(cmd)
	if err != nil {
		return 0, fmt.Errorf("starting postgres -C: %w", err)
	}
	<-exited
	if !cmd.ProcessState.Success() {
		return 0, fmt.Errorf("postgres -C shared_memory_size_in_huge_pages: %v\n%s", cmd.ProcessState, errOut.Bytes())
	}
	need, err := strconv.Atoi(strings.TrimSpace(out.String()))
	if err != nil {
		return 0, fmt.Errorf("postgres -C shared_memory_size_in_huge_pages: %w", err)
	}
	return need, nil
}
