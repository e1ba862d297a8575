package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHugePagesAreTakenFreeOrReservedAndGivenBack, on files shaped as
// /proc/meminfo and /proc/sys/vm/nr_hugepages.
func TestHugePagesAreTakenFreeOrReservedAndGivenBack(t *testing.T) {
	cases := []struct {
		name            string
		meminfo         string // "" for none
		total           string // vm.nr_hugepages; "" for none
		need            int
		use             bool
		duringRun, back string // vm.nr_hugepages after decide and after Release
	}{
		{name: "enough free", meminfo: "HugePages_Total:     100\nHugePages_Free:       90\n", total: "100", need: 72,
			use: true, duringRun: "100", back: "100"},
		{name: "too few free: reserved and given back", meminfo: "HugePages_Free:       10\n", total: "20", need: 72,
			use: true, duringRun: "82", back: "20"},
		{name: "free but promised to another mapping", meminfo: "HugePages_Free:       80\nHugePages_Rsvd:       70\n", total: "80", need: 72,
			use: true, duringRun: "142", back: "80"},
		{name: "too few free, vm.nr_hugepages unknown", meminfo: "HugePages_Free:        0\n", need: 72},
		{name: "no huge pages on the machine", meminfo: "MemTotal: 1 kB\n", total: "0", need: 72, duringRun: "0", back: "0"},
		{name: "no /proc/meminfo", total: "0", need: 72, duringRun: "0", back: "0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			h := &hugePages{meminfo: filepath.Join(dir, "meminfo"), nrHugePages: filepath.Join(dir, "nr_hugepages")}
			write(t, h.meminfo, c.meminfo)
			write(t, h.nrHugePages, c.total)
			use, err := h.decide(c.need)
			if err != nil || use != c.use {
				t.Fatalf("decide(%d) = %v, %v; want %v (%s)", c.need, use, err, c.use, h.Note)
			}
			if c.use != !strings.HasPrefix(h.Note, "none") {
				t.Errorf("note %q with use = %v", h.Note, use)
			}
			if got := read(t, h.nrHugePages); got != c.duringRun {
				t.Errorf("vm.nr_hugepages %q during the run, want %q", got, c.duringRun)
			}
			if err := h.Release(); err != nil {
				t.Fatal(err)
			}
			if got := read(t, h.nrHugePages); got != c.back {
				t.Errorf("vm.nr_hugepages %q after Release, want %q", got, c.back)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if content == "" {
		return
	}
	if err := os.WriteFile(path, []byte(content+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// read returns a file's content without its newline, "" when missing.
func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return ""
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}
