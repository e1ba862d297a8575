package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// ErrUsage is returned for a missing or unknown subcommand, a bad flag, -h,
// or out-of-range settings; the command exits 2 on it.
var ErrUsage = errors.New("usage: bench service|scale [flags]; bench service -h for the flags")

// Main runs the subcommand args[0] ("service" or "scale") with the flags
// after it. Defaults of the main knobs come from getenv (BENCH_CLIENTS,
// BENCH_DURATION, BENCH_N), so that `make bench BENCH_DURATION=3s` works;
// results go to stdout, flag help to stderr.
func Main(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return ErrUsage
	}
	switch args[0] {
	case "service":
		return runServiceCommand(ctx, args[1:], getenv, stdout, stderr)
	case "scale":
		return runScaleCommand(ctx, args[1:], getenv, stdout, stderr)
	}
	return ErrUsage
}

// settings is a repeatable -pg flag.
type settings []string

func (s *settings) String() string     { return strings.Join(*s, " ") }
func (s *settings) Set(v string) error { *s = append(*s, v); return nil }

func envInt(getenv func(string) string, name string, def int) int {
	if v, err := strconv.Atoi(getenv(name)); err == nil {
		return v
	}
	return def
}

func envDuration(getenv func(string) string, name string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(getenv(name)); err == nil {
		return v
	}
	return def
}

// DefaultScaleClients is how many clients the loaded reads of bench-scale
// run: issue 25's latency targets at a million invoices are at 8 clients.
const DefaultScaleClients = 8

func runServiceCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench service", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := serviceBenchConfig{Out: stdout}
	var pg settings
	var readModels string
	fs.StringVar(&cfg.Repo, "repo", ".", "module root holding ./cmd/invoicing")
	fs.IntVar(&cfg.Clients, "clients", envInt(getenv, "BENCH_CLIENTS", 16), "closed-loop clients of every phase, pgbench -c too (env BENCH_CLIENTS)")
	fs.DurationVar(&cfg.Duration, "duration", envDuration(getenv, "BENCH_DURATION", 10*time.Second), "length of every measured phase (env BENCH_DURATION)")
	fs.DurationVar(&cfg.Warmup, "warmup", 2*time.Second, "unmeasured run before every phase")
	fs.IntVar(&cfg.Scale, "scale", 10, "pgbench -i scale of the select-only baseline (10: 1M accounts, ~160 MB)")
	fs.IntVar(&cfg.Companies, "companies", 4, "companies seeded through the API")
	fs.IntVar(&cfg.Customers, "customers", 25, "customers per company")
	fs.DurationVar(&cfg.LagPoll, "lag-poll", 2*time.Millisecond, "checkpoint poll period: the resolution of the projection lag")
	fs.StringVar(&readModels, "read-models", "invoices", "checkpoints the projection lag waits for: the read models that show an InvoiceDrafted, which a create waits for")
	fs.StringVar(&cfg.LogLevel, "log-level", "info", "LOG_LEVEL of the service")
	fs.IntVar(&cfg.StatsTop, "pg-stats", 0, "if > 0, preload pg_stat_statements and print this many top statements per service phase")
	fs.StringVar(&cfg.ServiceBin, "service-bin", "", "a built invoicing binary to use instead of go build")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work directory (service log, pgbench logs)")
	fs.StringVar(&cfg.DBParams, "db-params", "", "query parameters added to the service's DATABASE_URL, e.g. pool_max_conns=16 (default none: the service's own pool size)")
	fs.Var((*settings)(&cfg.ServiceEnv), "service-env", "an extra KEY=VALUE setting of serve, e.g. AUDIT_SEALER=off (repeatable)")
	cfg.Server.register(fs)
	fs.Var(&pg, "pg", "extra PostgreSQL setting name=value (repeatable)")
	if err := fs.Parse(args); err != nil {
		return ErrUsage
	}
	if cfg.Clients < 1 || cfg.Duration <= 0 || cfg.Companies < 1 || cfg.Customers < 1 || cfg.LagPoll <= 0 {
		return fmt.Errorf("%w: -clients, -companies, -customers must be ≥ 1, -duration and -lag-poll > 0", ErrUsage)
	}
	if err := cfg.Server.check(); err != nil {
		return err
	}
	cfg.PgSettings = pg
	cfg.ReadModels = strings.Split(readModels, ",")
	// Bounded: the 12 phases (2 pgbench, 10 service), their warm-ups, the
	// build, the start-ups and the setups.
	limit := 12*(cfg.Duration+cfg.Warmup) + 10*time.Minute
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	return runServiceBench(ctx, cfg)
}

func runScaleCommand(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench scale", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := scaleConfig{Out: stdout}
	var pg settings
	var readModels string
	fs.StringVar(&cfg.Repo, "repo", ".", "module root holding ./cmd/invoicing")
	fs.IntVar(&cfg.Invoices, "n", envInt(getenv, "BENCH_N", 1_000_000), "invoices to generate (env BENCH_N)")
	fs.IntVar(&cfg.Companies, "companies", 30, "companies; the first holds -big-share of the invoices")
	fs.Float64Var(&cfg.BigShare, "big-share", 0.4, "share of the invoices in the first company")
	fs.IntVar(&cfg.Customers, "customers", 1000, "customers, spread over the companies in proportion to their invoices")
	fs.IntVar(&cfg.Clients, "clients", envInt(getenv, "BENCH_SCALE_CLIENTS", DefaultScaleClients), "clients of the loaded latency runs (env BENCH_SCALE_CLIENTS)")
	fs.IntVar(&cfg.Requests, "requests", 2000, "requests per case at -clients")
	fs.IntVar(&cfg.SerialRequests, "serial-requests", 300, "requests per case at 1 client")
	fs.IntVar(&cfg.WarmupRequests, "warmup-requests", 200, "unmeasured requests per case at -clients before its runs, as make bench warms every phase: a pool connection's first use of a statement prepares it on a backend whose caches are cold")
	fs.IntVar(&cfg.DeepPage, "deep-page", 1000, "deepest cursor page followed in the big company (also 10 and 100)")
	fs.DurationVar(&cfg.Idle, "idle", 10*time.Second, "idle window for CPU and background statements")
	fs.BoolVar(&cfg.Analyze, "analyze", true, "VACUUM ANALYZE the read models, the events and the audit chain after the catch-up, as autovacuum would in time")
	fs.StringVar(&readModels, "read-models", "companies,customers,invoices", "checkpoints the catch-up waits for")
	fs.StringVar(&cfg.LogLevel, "log-level", "info", "LOG_LEVEL of the service")
	fs.StringVar(&cfg.ServiceBin, "service-bin", "", "a built invoicing binary to use instead of go build")
	fs.BoolVar(&cfg.Keep, "keep", false, "keep the work directory (service log)")
	fs.StringVar(&cfg.DBParams, "db-params", "", "query parameters added to the service's DATABASE_URL, e.g. pool_max_conns=16")
	fs.Var((*settings)(&cfg.ServiceEnv), "service-env", "an extra KEY=VALUE setting of serve, e.g. GOGC=200 (repeatable)")
	cfg.Server.register(fs)
	fs.Var(&pg, "pg", "extra PostgreSQL setting name=value (repeatable)")
	fs.IntVar(&cfg.StatsTop, "pg-stats", 0, "if > 0, preload pg_stat_statements and print this many top statements of the catch-up")
	if err := fs.Parse(args); err != nil {
		return ErrUsage
	}
	if cfg.Invoices < 1 || cfg.Companies < 2 || cfg.Customers < cfg.Companies || cfg.BigShare <= 0 || cfg.BigShare >= 1 {
		return fmt.Errorf("%w: want -n ≥ 1, -companies ≥ 2, -customers ≥ -companies, 0 < -big-share < 1", ErrUsage)
	}
	if err := cfg.Server.check(); err != nil {
		return err
	}
	cfg.PgSettings = pg
	cfg.ReadModels = strings.Split(readModels, ",")
	// Bounded: generous for 1M on a slow disk, and every wait inside has
	// its own limit too.
	ctx, cancel := context.WithTimeout(ctx, 90*time.Minute)
	defer cancel()
	return runScaleBench(ctx, cfg)
}
