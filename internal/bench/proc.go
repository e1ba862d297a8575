package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of the CPU times in /proc/PID/stat: USER_HZ, 100 on
// every Linux architecture Go supports (getconf CLK_TCK).
const clockTick = 10 * time.Millisecond

// procStat is what the harness reads of /proc/PID/stat.
type procStat struct {
	ppid            int
	utime, stime    time.Duration // the process's own CPU
	cutime, cstime  time.Duration // of its children it has waited for
	faults, cfaults int64         // page faults, minor and major: its own, its waited-for children's
}

// readStat parses /proc/PID/stat. The command name (field 2) may hold spaces
// and parentheses, so fields are counted from the last ')'.
func readStat(pid int) (procStat, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return procStat{}, err
	}
	return parseStat(b)
}

func parseStat(b []byte) (procStat, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procStat{}, fmt.Errorf("/proc stat: no command name")
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); field k is f[k-3].
	if len(f) < 20 {
		return procStat{}, fmt.Errorf("/proc stat: %d fields", len(f)+2)
	}
	num := func(k int) int64 {
		n, _ := strconv.ParseInt(f[k-3], 10, 64)
		return n
	}
	return procStat{
		ppid:    int(num(4)),
		faults:  num(10) + num(12),
		cfaults: num(11) + num(13),
		utime:   time.Duration(num(14)) * clockTick,
		stime:   time.Duration(num(15)) * clockTick,
		cutime:  time.Duration(num(16)) * clockTick,
		cstime:  time.Duration(num(17)) * clockTick,
	}, nil
}

// processCPU returns the CPU time (user + system) pid has used so far.
func processCPU(pid int) (time.Duration, error) {
	s, err := readStat(pid)
	if err != nil {
		return 0, err
	}
	return s.utime + s.stime, nil
}

// treeUsage returns the CPU time used so far by pid and its children, the
// exited ones (reaped into pid's cutime and cstime) and the running ones
// alike, and their page faults: for a postmaster, the whole PostgreSQL
// server. Differences of two readings are exact up to children exiting
// between the scan and the read.
func treeUsage(pid int) (cpu time.Duration, faults int64, err error) {
	root, err := readStat(pid)
	if err != nil {
		return 0, 0, err
	}
	cpu = root.utime + root.stime + root.cutime + root.cstime
	faults = root.faults + root.cfaults
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		child, err := strconv.Atoi(filepath.Base(d))
		if err != nil || child == pid {
			continue
		}
		s, err := readStat(child)
		if err != nil || s.ppid != pid {
			continue
		}
		cpu += s.utime + s.stime
		faults += s.faults
	}
	return cpu, faults, nil
}

// selfCPU returns the CPU time this process (the load generator) has used,
// and separately what its waited-for children (pgbench) used.
func selfCPU() (self, children time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		self = tv(ru.Utime) + tv(ru.Stime)
	}
	if syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru) == nil {
		children = tv(ru.Utime) + tv(ru.Stime)
	}
	return self, children
}

func tv(t syscall.Timeval) time.Duration {
	return time.Duration(t.Sec)*time.Second + time.Duration(t.Usec)*time.Microsecond
}

// memory is a process's resident set, from /proc/PID/status, in bytes.
type memory struct {
	RSS  int64 // VmRSS: now
	Peak int64 // VmHWM: the high-water mark since the process started
}

// readMemory reads VmRSS and VmHWM of pid.
func readMemory(pid int) (memory, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	defer f.Close()
	return parseStatus(f)
}

func parseStatus(f io.Reader) (memory, error) {
	var m memory
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		fields := strings.Fields(v)
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		n, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "VmRSS":
			m.RSS = n << 10
		case "VmHWM":
			m.Peak = n << 10
		}
	}
	if err := sc.Err(); err != nil {
		return memory{}, err
	}
	if m.Peak == 0 {
		return memory{}, fmt.Errorf("/proc status: no VmHWM")
	}
	return m, nil
}

// usage is CPU used during a stretch of wall time, per party.
type usage struct {
	Wall     time.Duration
	Service  time.Duration // the service process
	Postgres time.Duration // postmaster and every backend
	// PostgresFaults are the page faults of the postmaster and every
	// backend. With the shared memory in 4 kB pages most are a backend's
	// first touch of one of its pages, about 19 µs each on the benchmark's
	// machine (docs/benchmarks.md, issue 25's fourteenth session).
	PostgresFaults int64
	Client         time.Duration // this process (the load generator) and its children (pgbench)
	Machine        time.Duration // every CPU of the machine, busy (/proc/stat)
}

// others is the CPU the rest of the machine used meanwhile: other people's
// builds and tests on a shared machine.
func (u usage) others() time.Duration {
	return max(0, u.Machine-u.Service-u.Postgres-u.Client)
}

// machineBusy returns the busy CPU time of all CPUs since boot, from the
// first line of /proc/stat (user, nice, system, irq, softirq, steal).
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	return parseProcStat(b)
}

func parseProcStat(b []byte) time.Duration {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy int64
	for _, k := range []int{1, 2, 3, 6, 7, 8} { // user nice system (idle iowait) irq softirq steal
		n, _ := strconv.ParseInt(f[k], 10, 64)
		busy += n
	}
	return time.Duration(busy) * clockTick
}

// meter reads the CPU counters of the service, PostgreSQL and the harness
// at the start of a phase and, through stop, at its end.
type meter struct {
	servicePID, pgPID int
	start             time.Time
	svc, pg, cl, mach time.Duration
	pgFaults          int64
}

// startMeter takes the first reading; servicePID 0 means no service yet.
func startMeter(servicePID, pgPID int) *meter {
	m := &meter{servicePID: servicePID, pgPID: pgPID}
	m.svc, m.pg, m.cl, m.pgFaults = m.read()
	m.mach = machineBusy()
	m.start = time.Now()
	return m
}

func (m *meter) read() (svc, pg, cl time.Duration, pgFaults int64) {
	if m.servicePID != 0 {
		svc, _ = processCPU(m.servicePID)
	}
	pg, pgFaults, _ = treeUsage(m.pgPID)
	self, children := selfCPU()
	return svc, pg, self + children, pgFaults
}

// stop takes the second reading and returns the differences.
func (m *meter) stop() usage {
	mach := machineBusy()
	svc, pg, cl, pgFaults := m.read()
	return usage{Wall: time.Since(m.start), Service: svc - m.svc, Postgres: pg - m.pg, PostgresFaults: pgFaults - m.pgFaults,
		Client: cl - m.cl, Machine: mach - m.mach}
}

// perSecond renders a count over the wall time.
func (u usage) perSecond(n int64) float64 {
	if u.Wall <= 0 {
		return 0
	}
	return float64(n) / u.Wall.Seconds()
}

// cores renders CPU time as cores busy over the wall time (1.00 = one core).
func (u usage) cores(cpu time.Duration) float64 {
	if u.Wall <= 0 {
		return 0
	}
	return cpu.Seconds() / u.Wall.Seconds()
}
