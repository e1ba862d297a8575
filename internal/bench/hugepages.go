package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// hugePages puts the benchmark's PostgreSQL in huge pages: it takes the
// machine's free ones, or reserves them for the run (Linux's
// vm.nr_hugepages, which root may raise) and gives them back at the end.
//
// Why: each PostgreSQL backend maps the shared buffers itself, and its first
// touch of each 4 kB page is a page fault. On this project's machine (a
// virtual machine whose page faults cost about 19 µs each) a list's first
// read of 105 buffers on a connection took 241 faults and 4–5 ms, against
// 0.1–0.4 ms once mapped; pgbench's new connections paid the same. In 2 MB
// pages the 128 MB of shared buffers are 64 faults (docs/benchmarks.md,
// "Issue 25, fourteenth session").
//
// A run killed before its end leaves its pages reserved (vm.nr_hugepages
// shows them); the next run finds them free and takes them.
type hugePages struct {
	meminfo, nrHugePages string // /proc/meminfo, /proc/sys/vm/nr_hugepages
	reserved             bool   // nrHugePages was raised from before
	before               int
	Note                 string // what was done, for the report
}

func machineHugePages() *hugePages {
	return &hugePages{meminfo: "/proc/meminfo", nrHugePages: "/proc/sys/vm/nr_hugepages"}
}

// decide answers pgcluster.Options.HugePages: true once need pages are
// free for the server.
func (h *hugePages) decide(need int) (bool, error) {
	free, err := freeHugePages(h.meminfo)
	if err != nil {
		h.Note = fmt.Sprintf("none (%v); the shared memory in 4 kB pages", err)
		return false, nil
	}
	if free >= need {
		h.Note = fmt.Sprintf("%d, of the machine's %d free", need, free)
		return true, nil
	}
	total, err := readCount(h.nrHugePages)
	if err != nil {
		h.Note = fmt.Sprintf("none (%d free, %d needed, and %v); the shared memory in 4 kB pages", free, need, err)
		return false, nil
	}
	if err := h.raise(total, total+need-free); err != nil {
		h.Note = fmt.Sprintf("none (%d free, %d needed: %v); the shared memory in 4 kB pages", free, need, err)
		return false, h.Release()
	}
	h.Note = fmt.Sprintf("%d, reserved for this run (vm.nr_hugepages %d → %d)", need, total, total+need-free)
	return true, nil
}

// raise sets vm.nr_hugepages from total to n and reads back what the
// kernel made of it: it allocates only the pages it finds memory for.
func (h *hugePages) raise(total, n int) error {
	if err := os.WriteFile(h.nrHugePages, []byte(strconv.Itoa(n)+"\n"), 0); err != nil {
		return fmt.Errorf("vm.nr_hugepages not raised: %w", err)
	}
	h.reserved, h.before = true, total
	got, err := readCount(h.nrHugePages)
	if err != nil {
		return err
	}
	if got < n {
		return fmt.Errorf("the kernel found memory for %d of %d", got-total, n-total)
	}
	return nil
}

// Release gives back the pages decide reserved; the kernel frees those a
// server still holds when it exits.
func (h *hugePages) Release() error {
	if !h.reserved {
		return nil
	}
	h.reserved = false
	if err := os.WriteFile(h.nrHugePages, []byte(strconv.Itoa(h.before)+"\n"), 0); err != nil {
		return fmt.Errorf("giving back the huge pages (vm.nr_hugepages to %d): %w", h.before, err)
	}
	return nil
}

// freeHugePages reads from a /proc/meminfo the huge pages neither in use
// nor promised to a mapping: HugePages_Free less HugePages_Rsvd.
func freeHugePages(meminfo string) (int, error) {
	b, err := os.ReadFile(meminfo)
	if err != nil {
		return 0, err
	}
	var free, reserved int
	found := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		name, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "HugePages_Free" && name != "HugePages_Rsvd") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil {
			return 0, fmt.Errorf("%s in %s: %w", name, meminfo, err)
		}
		if name == "HugePages_Free" {
			free, found = n, true
		} else {
			reserved = n
		}
	}
	if !found {
		return 0, errors.New("no HugePages_Free in " + meminfo)
	}
	return free - reserved, nil
}

func readCount(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}
