package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgcluster"
)

// machine describes where and under which load a run happened.
func machine() string {
	mem := "?"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
				var kb int64
				fmt.Sscan(f[1], &kb)
				mem = fmt.Sprintf("%.1f GiB", float64(kb)/(1<<20))
			}
		}
	}
	return fmt.Sprintf("%d CPUs (runtime.NumCPU), %s memory, %s/%s, %s; load average %s",
		runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, runtime.Version(), loadAvg())
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// serverOptions are how the harness runs PostgreSQL beyond its settings.
type serverOptions struct {
	HugePages bool // its shared memory in huge pages (hugePages)
	// MallocTrim is glibc's MALLOC_TRIM_THRESHOLD_ in its environment, in
	// bytes; 0 leaves glibc's default (mallocTrimUsage).
	MallocTrim int
}

// register adds the flags that set o, the same in both commands.
func (o *serverOptions) register(fs *flag.FlagSet) {
	fs.BoolVar(&o.HugePages, "huge-pages", true, hugePagesUsage)
	fs.IntVar(&o.MallocTrim, "pg-malloc-trim", defaultMallocTrim, mallocTrimUsage)
}

// check says what is wrong with o's flags, as an ErrUsage.
func (o serverOptions) check() error {
	if o.MallocTrim < 0 {
		return fmt.Errorf("%w: -pg-malloc-trim must be ≥ 0", ErrUsage)
	}
	return nil
}

// hugePagesUsage is the -huge-pages flag.
const hugePagesUsage = "PostgreSQL's shared memory in huge pages: the machine's free ones, or reserved for the run (vm.nr_hugepages, as root) and given back; " +
	"false: 4 kB pages, each a page fault on every connection's first touch"

// mallocTrimUsage is the -pg-malloc-trim flag.
const mallocTrimUsage = "glibc's MALLOC_TRIM_THRESHOLD_ for PostgreSQL, bytes: a backend keeps up to this much freed memory " +
	"instead of giving it back to the kernel at each transaction's end and faulting it in again at the next; " +
	"0: glibc's default (128 KiB until a large block is freed)"

// defaultMallocTrim is -pg-malloc-trim's default, 32 MiB: above the
// projector's largest statements (batches of about 8 MB of arrays).
const defaultMallocTrim = 32 << 20

// serverEnv is the environment startPostgres adds for o.
func (o serverOptions) serverEnv() []string {
	if o.MallocTrim == 0 {
		return nil
	}
	return []string{fmt.Sprintf("MALLOC_TRIM_THRESHOLD_=%d", o.MallocTrim)}
}

// startPostgres starts the benchmark's server with default durability plus
// extra settings, its shared memory in huge pages when o asks and the
// machine has them or lets them be reserved (hugePages), and o's
// environment, and says so. Stop it with stopPostgres.
func startPostgres(out io.Writer, extra []string, o serverOptions) (*pgcluster.Cluster, *hugePages, error) {
	settings := append([]string{
		// Explicit although they are the defaults: the point of this
		// cluster, unlike the test one, is durable commits.
		"fsync=on", "synchronous_commit=on", "full_page_writes=on",
	}, extra...)
	pages := machineHugePages()
	decide := pages.decide
	if !o.HugePages {
		decide = func(int) (bool, error) { pages.Note = "off (-huge-pages=false)"; return false, nil }
	}
	env := o.serverEnv()
	c, err := pgcluster.StartWith(pgcluster.Options{Settings: settings, HugePages: decide, Env: env})
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("pgcluster: %w", err), pages.Release())
	}
	fmt.Fprintf(out, "postgres: pid %d, 127.0.0.1:%d, data %s, settings %s (others: PostgreSQL's defaults), environment %s\n",
		c.PID(), c.Port(), c.Dir(), strings.Join(settings, " "), cmp.Or(strings.Join(env, " "), "as the harness's"))
	fmt.Fprintf(out, "huge pages for its shared memory: %s\n", pages.Note)
	return c, pages, nil
}

// stopPostgres stops the server, then gives back the huge pages reserved
// for it.
func stopPostgres(c *pgcluster.Cluster, pages *hugePages) error {
	if err := c.Stop(); err != nil {
		return errors.Join(fmt.Errorf("stopping PostgreSQL: %w", err), pages.Release())
	}
	return pages.Release()
}

// serverInfo reads the server version and the settings that matter here.
func serverInfo(ctx context.Context, url string) string {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "?"
	}
	defer conn.Close(ctx)
	var v, fsync, sc, sb, huge, wal string
	err = conn.QueryRow(ctx, `SELECT current_setting('server_version'), current_setting('fsync'),
		current_setting('synchronous_commit'), current_setting('shared_buffers'), current_setting('huge_pages'),
		current_setting('max_wal_size')`).
		Scan(&v, &fsync, &sc, &sb, &huge, &wal)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("PostgreSQL %s, fsync=%s synchronous_commit=%s shared_buffers=%s huge_pages=%s max_wal_size=%s", v, fsync, sc, sb, huge, wal)
}

// execSQL runs statements on a fresh connection to url.
func execSQL(ctx context.Context, url string, stmts ...string) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range stmts {
		if _, err := conn.Exec(ctx, s); err != nil {
			return fmt.Errorf("%s: %w", s, err)
		}
	}
	return nil
}

// connect opens one connection named app (application_name), so that the
// harness's own statements can be told apart in the server log.
func connect(ctx context.Context, url, app string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, err
	}
	cfg.RuntimeParams["application_name"] = app
	return pgx.ConnectConfig(ctx, cfg)
}

// rssSampler records the highest VmRSS of a process while it runs.
type rssSampler struct {
	peak int64
	stop chan struct{}
	done chan struct{}
}

// sampleRSS polls pid's VmRSS every period until finish.
func sampleRSS(pid int, period time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			if m, err := readMemory(pid); err == nil {
				s.peak = max(s.peak, m.RSS)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// finish ends the sampling and returns the peak in bytes.
func (s *rssSampler) finish() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// nan marks a cell as not measured.
var nan = math.NaN()

// seconds renders a phase duration as pgbench's -T wants it: whole seconds,
// at least 1.
func seconds(d time.Duration) int { return max(1, int(math.Round(d.Seconds()))) }
