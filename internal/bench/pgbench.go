package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// pgbenchResult is one pgbench run.
type pgbenchResult struct {
	TPS     float64         // as pgbench reports it, without initial connection time
	Latency []time.Duration // per transaction, from --log
	Output  string          // pgbench's stdout and stderr
}

// pgbench runs pgbench from binDir against db on 127.0.0.1:port as user
// postgres. args are the workload's own (-c, -T, -f or -S ...); the
// per-transaction log goes to logDir, from which the latencies are read.
func pgbench(ctx context.Context, binDir string, port int, db, logDir, name string, args ...string) (pgbenchResult, error) {
	prefix := filepath.Join(logDir, "pgbench-log-"+name)
	full := append([]string{"-h", "127.0.0.1", "-p", strconv.Itoa(port), "-U", "postgres",
		"--log", "--log-prefix=" + prefix}, args...)
	full = append(full, db)
	out, err := runTool(ctx, filepath.Join(binDir, "pgbench"), full...)
	res := pgbenchResult{Output: out}
	if err != nil {
		return res, fmt.Errorf("pgbench %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	if res.TPS, err = parsePgbenchTPS(out); err != nil {
		return res, err
	}
	logs, _ := filepath.Glob(prefix + ".*")
	for _, l := range logs {
		f, err := os.Open(l)
		if err != nil {
			return res, err
		}
		lat, err := parsePgbenchLog(f)
		f.Close()
		if err != nil {
			return res, fmt.Errorf("%s: %w", l, err)
		}
		res.Latency = append(res.Latency, lat...)
	}
	return res, nil
}

// pgbenchInit runs `pgbench -i -s scale -q` on db.
func pgbenchInit(ctx context.Context, binDir string, port int, db string, scale int) error {
	out, err := runTool(ctx, filepath.Join(binDir, "pgbench"), "-h", "127.0.0.1", "-p", strconv.Itoa(port),
		"-U", "postgres", "-i", "-q", "-s", strconv.Itoa(scale), db)
	if err != nil {
		return fmt.Errorf("pgbench -i: %w\n%s", err, out)
	}
	return nil
}

func runTool(ctx context.Context, name string, args ...string) (string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "PGAPPNAME=pgbench")
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	return buf.String(), err
}

var tpsLine = regexp.MustCompile(`(?m)^tps = ([0-9.]+) \(without initial connection time\)`)

func parsePgbenchTPS(out string) (float64, error) {
	m := tpsLine.FindStringSubmatch(out)
	if m == nil {
		return 0, fmt.Errorf("pgbench printed no tps line:\n%s", out)
	}
	return strconv.ParseFloat(m[1], 64)
}

// parsePgbenchLog reads a per-transaction log (pgbench --log): each line is
// "client_id transaction_no time script_no time_epoch time_us [lag]", time
// being the latency in microseconds.
func parsePgbenchLog(r io.Reader) ([]time.Duration, error) {
	var out []time.Duration
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 {
			continue
		}
		us, err := strconv.ParseInt(f[2], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("latency %q: %w", f[2], err)
		}
		out = append(out, time.Duration(us)*time.Microsecond)
	}
	return out, sc.Err()
}
