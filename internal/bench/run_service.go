package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgcluster"
)

// serviceBenchConfig is `make bench`: pgbench, then the service, on one
// server.
type serviceBenchConfig struct {
	Repo       string        // the module root, to build ./cmd/invoicing
	Clients    int           // closed-loop clients of every phase (pgbench -c too)
	Duration   time.Duration // of every measured phase
	Warmup     time.Duration // unmeasured run before every phase
	Scale      int           // pgbench -i -s for the select-only baseline
	Companies  int           // seeded through the API
	Customers  int           // per company
	LagPoll    time.Duration // checkpoint poll period (lag resolution)
	ReadModels []string      // checkpoints a create waits for
	LogLevel   string        // the service's LOG_LEVEL
	PgSettings []string      // extra -c settings
	Server     serverOptions // huge pages, environment (startPostgres)
	StatsTop   int           // >0: pg_stat_statements' top statements per phase
	Keep       bool          // keep the work directory (logs, binary)
	DBParams   string        // query parameters added to the service's DATABASE_URL
	ServiceEnv []string      // extra KEY=VALUE settings of serve, e.g. AUDIT_SEALER=off
	ServiceBin string        // a prebuilt service binary instead of go build
	Out        io.Writer
}

type phaseRow struct {
	name     string
	clients  int
	elapsed  time.Duration
	ok, errs int
	rate     float64
	lat      summary
	ratio    string
	use      usage
	rss      int64 // peak sampled VmRSS of the service, 0 when none
	errText  string
}

// runServiceBench runs the whole of `make bench` and prints its table.
func runServiceBench(ctx context.Context, cfg serviceBenchConfig) (err error) {
	out := cfg.Out
	fmt.Fprintf(out, "make bench: %d clients, %s per phase (warm-up %s), started %s\n", cfg.Clients, cfg.Duration, cfg.Warmup, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "machine: %s\n", machine())
	work, bin, cleanup, err := workDir(ctx, out, "invoicing-bench-", cfg.Repo, cfg.ServiceBin, cfg.Keep)
	if err != nil {
		return err
	}
	defer cleanup()

	settings := cfg.PgSettings
	if cfg.StatsTop > 0 {
		settings = append(settings, statementStatsSetting)
	}
	pg, pages, err := startPostgres(out, settings, cfg.Server)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := stopPostgres(pg, pages); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	fmt.Fprintf(out, "server: %s\n", serverInfo(ctx, pg.URL()))

	var rows []phaseRow
	ins, sel, err := runPgbenchPhases(ctx, cfg, pg, work)
	if err != nil {
		return err
	}
	rows = append(rows, ins, sel)

	svcRows, lag, hwm, stats, err := runServicePhases(ctx, cfg, pg, bin, work)
	if err != nil {
		return err
	}
	svcRows[0].ratio = fmtRatio(svcRows[0].rate, ins.rate)
	svcRows[1].ratio = fmtRatio(svcRows[1].rate, sel.rate)
	rows = append(rows, svcRows...)

	fmt.Fprintf(out, "\nload average at the end: %s\n\n", loadAvg())
	fmt.Fprint(out, serviceTable(rows).String())
	fmt.Fprintf(out, "\nprojection lag, append -> visible in the read models that show it (%s), over %d InvoiceDrafted events of the create phase:\n",
		strings.Join(cfg.ReadModels, ", "), lag.N)
	fmt.Fprintf(out, "  p50 %s ms, p99 %s ms, max %s ms (upper bounds: checkpoints polled every %s, %s on average; %d events never seen)\n",
		fmtMs(ms(lag.P50)), fmtMs(ms(lag.P99)), fmtMs(ms(lag.Max)), cfg.LagPoll, lag.interval.Round(10*time.Microsecond), lag.unseen)
	fmt.Fprintf(out, "service RSS: peak %0.1f MiB (VmHWM at the end of the run)\n", mib(hwm))
	fmt.Fprintf(out, "\ntargets (issues 10 and 25):\n%s", serviceTargets(rows, lag, hwm))
	if stats != "" {
		fmt.Fprintf(out, "\n%s", stats)
	}
	return nil
}

type lagSummary struct {
	summary
	unseen   int
	interval time.Duration // mean time between two checkpoint polls
}

func serviceTable(rows []phaseRow) *table {
	t := &table{Header: []string{"phase", "clients", "secs", "ok", "errors", "per s", "p50 ms", "p99 ms",
		"÷ pgbench", "svc cores", "pg cores", "pg faults/s", "client cores", "other cores", "svc RSS MiB"}}
	for _, r := range rows {
		rss := "-"
		if r.rss > 0 {
			rss = fmtF(mib(r.rss), 1)
		}
		svc := "-"
		if r.use.Service > 0 {
			svc = fmtF(r.use.cores(r.use.Service), 2)
		}
		t.add(r.name, fmt.Sprint(r.clients), fmtF(r.elapsed.Seconds(), 1), fmt.Sprint(r.ok), fmt.Sprint(r.errs),
			fmtF(r.rate, 0), fmtMs(ms(r.lat.P50)), fmtMs(ms(r.lat.P99)), r.ratio,
			svc, fmtF(r.use.cores(r.use.Postgres), 2), fmtF(r.use.perSecond(r.use.PostgresFaults), 0), fmtF(r.use.cores(r.use.Client), 2), fmtF(r.use.cores(r.use.others()), 2), rss)
	}
	return t
}

// serviceTargets compares with the targets; rows are INSERT,
// select-only, create, get, list.
func serviceTargets(rows []phaseRow, lag lagSummary, hwm int64) string {
	ins, sel, create, get, list := rows[0], rows[1], rows[2], rows[3], rows[4]
	var b strings.Builder
	check := func(what string, ok bool, got string) {
		mark := "MISS"
		if ok {
			mark = "ok  "
		}
		fmt.Fprintf(&b, "  %s %-44s %s\n", mark, what, got)
	}
	cpus := runtime.NumCPU()
	ceilingLine := func(r, baseline phaseRow, what string) {
		if c, ok := ceilingOf(r, baseline, cpus); ok {
			fmt.Fprintf(&b, "       %s\n", c.describe(what))
		}
	}
	cr, gr := create.rate/ins.rate, get.rate/sel.rate
	check("create ÷ pgbench INSERT ≥ 0.25", cr >= 0.25, fmt.Sprintf("%.3f", cr))
	ceilingLine(create, ins, "create")
	check("get ÷ pgbench select-only ≥ 0.45", gr >= 0.45, fmt.Sprintf("%.3f", gr))
	ceilingLine(get, sel, "get")
	check("list ≥ 3,000 req/s", list.rate >= 3000, fmt.Sprintf("%.0f req/s", list.rate))
	check("create p99 ≤ 25 ms", create.lat.P99 <= 25*time.Millisecond, fmtMs(ms(create.lat.P99))+" ms")
	check(fmt.Sprintf("get p99 ≤ 5 ms at %d clients", get.clients), get.lat.P99 <= 5*time.Millisecond, fmtMs(ms(get.lat.P99))+" ms")
	check("projection lag p99 ≤ 20 ms", lag.N > 0 && lag.P99 <= 20*time.Millisecond, fmtMs(ms(lag.P99))+" ms")
	check("service RSS ≤ 150 MiB", hwm <= 150<<20, fmt.Sprintf("%.1f MiB", mib(hwm)))
	return b.String()
}

// runPgbenchPhases measures PostgreSQL alone: a one-row INSERT and -S.
func runPgbenchPhases(ctx context.Context, cfg serviceBenchConfig, pg *pgcluster.Cluster, work string) (ins, sel phaseRow, err error) {
	out := cfg.Out
	const db = "pgbench"
	dbURL, err := pg.CreateDatabase(db)
	if err != nil {
		return ins, sel, err
	}
	fmt.Fprintf(out, "pgbench -i -s %d ...\n", cfg.Scale)
	if err := pgbenchInit(ctx, pg.BinDir(), pg.Port(), db, cfg.Scale); err != nil {
		return ins, sel, err
	}
	if err := execSQL(ctx, dbURL, `CREATE TABLE insert_bench (
		id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
		payload text NOT NULL,
		created_at timestamptz NOT NULL DEFAULT now())`, `VACUUM ANALYZE`); err != nil {
		return ins, sel, err
	}
	script := filepath.Join(work, "insert.sql")
	if err := os.WriteFile(script, []byte("INSERT INTO insert_bench (payload) VALUES ('one small row');\n"), 0o644); err != nil {
		return ins, sel, err
	}
	common := []string{"-n", "-M", "prepared", "-c", fmt.Sprint(cfg.Clients), "-j", fmt.Sprint(min(cfg.Clients, runtime.NumCPU()))}
	run := func(name, logName string, workload ...string) (phaseRow, error) {
		if cfg.Warmup > 0 {
			args := append(append(append([]string{}, common...), "-T", fmt.Sprint(seconds(cfg.Warmup))), workload...)
			if _, err := pgbench(ctx, pg.BinDir(), pg.Port(), db, work, logName+"-warmup", args...); err != nil {
				return phaseRow{}, err
			}
		}
		if err := execSQL(ctx, pg.URL(), "CHECKPOINT"); err != nil {
			return phaseRow{}, err
		}
		fmt.Fprintf(out, "%s: %d clients for %ds ...\n", name, cfg.Clients, seconds(cfg.Duration))
		args := append(append(append([]string{}, common...), "-T", fmt.Sprint(seconds(cfg.Duration))), workload...)
		meter := startMeter(0, pg.PID())
		res, err := pgbench(ctx, pg.BinDir(), pg.Port(), db, work, logName, args...)
		use := meter.stop()
		if err != nil {
			return phaseRow{}, err
		}
		return phaseRow{name: name, clients: cfg.Clients, elapsed: use.Wall, ok: len(res.Latency),
			rate: res.TPS, lat: summarize(res.Latency), ratio: "", use: use}, nil
	}
	if ins, err = run("pgbench INSERT (1 row)", "insert", "-f", script); err != nil {
		return ins, sel, err
	}
	if sel, err = run(fmt.Sprintf("pgbench -S (scale %d)", cfg.Scale), "select", "-S"); err != nil {
		return ins, sel, err
	}
	return ins, sel, nil
}

// created is an invoice the create phase made, for the get phase and the
// writes after it; seed is its lines' (newInvoiceRequest), 0 for a ref.
type created struct {
	company, invoice string
	seed             uint64
}

// seeded is what the service phases work on.
type seeded struct {
	companies []string
	customers [][]string // per company
	mu        sync.Mutex
	invoices  []created
	refs      []created // invoices with an external_reference: company and the reference
}

func runServicePhases(ctx context.Context, cfg serviceBenchConfig, pg *pgcluster.Cluster, bin, work string) (rows []phaseRow, lag lagSummary, hwm int64, stats string, err error) {
	out := cfg.Out
	dbURL, err := pg.CreateDatabase("invoicing")
	if err != nil {
		return nil, lag, 0, "", err
	}
	secret := randomHex(32)
	svc, err := startService(ctx, serviceConfig{Bin: bin, DatabaseURL: withParams(dbURL, cfg.DBParams), Secret: secret,
		LogLevel: cfg.LogLevel, LogPath: filepath.Join(work, "service.log"), Env: cfg.ServiceEnv})
	if err != nil {
		return nil, lag, 0, "", err
	}
	defer func() {
		if stopErr := svc.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	fmt.Fprintf(out, "service: pid %d on %s (LOG_LEVEL=%s, DATABASE_URL parameters %q, log %s)\n",
		svc.pid(), svc.Base, cfg.LogLevel, cfg.DBParams, svc.LogPath)
	token, err := devToken(ctx, bin, secret, "bench")
	if err != nil {
		return nil, lag, 0, "", err
	}
	client := newClient(svc.Base, token, cfg.Clients)
	defer client.Close()

	var statsOut strings.Builder
	var pgss *pgx.Conn
	if cfg.StatsTop > 0 {
		if pgss, err = connect(ctx, dbURL, "bench-harness"); err != nil {
			return nil, lag, 0, "", err
		}
		defer pgss.Close(context.Background())
		if _, err = pgss.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements"); err != nil {
			return nil, lag, 0, "", err
		}
	}

	s, err := seed(ctx, client, cfg.Companies, cfg.Customers, cfg.Clients)
	if err != nil {
		return nil, lag, 0, "", fmt.Errorf("seeding: %w", err)
	}
	fmt.Fprintf(out, "seeded %d companies with %d customers each\n", cfg.Companies, cfg.Customers)

	ctl, err := connect(ctx, dbURL, "bench-harness")
	if err != nil {
		return nil, lag, 0, "", err
	}
	defer ctl.Close(context.Background())

	// phase measures op for cfg.Duration, or until while says no more (nil:
	// always more).
	phaseWhile := func(name string, op op, warmup bool, while func() bool) (phaseRow, error) {
		if warmup && cfg.Warmup > 0 {
			runFor(ctx, cfg.Clients, cfg.Warmup, op)
		}
		if _, err := ctl.Exec(ctx, "CHECKPOINT"); err != nil {
			return phaseRow{}, err
		}
		if pgss != nil {
			if _, err := pgss.Exec(ctx, "SELECT pg_stat_statements_reset()"); err != nil {
				return phaseRow{}, err
			}
		}
		fmt.Fprintf(out, "%s: %d clients for %s ...\n", name, cfg.Clients, cfg.Duration)
		rss := sampleRSS(svc.pid(), 100*time.Millisecond)
		meter := startMeter(svc.pid(), pg.PID())
		res := runForWhile(ctx, cfg.Clients, cfg.Duration, while, op)
		use := meter.stop()
		peak := rss.finish()
		if pgss != nil {
			top, err := topStatements(ctx, pgss, cfg.StatsTop)
			if err != nil {
				return phaseRow{}, err
			}
			fmt.Fprintf(&statsOut, "pg_stat_statements, %s phase (top %d by total time):\n%s\n", name, cfg.StatsTop, top)
		}
		return phaseRow{name: name, clients: cfg.Clients, elapsed: res.Elapsed, ok: res.OK, errs: res.Failed,
			rate: res.rate(), lat: summarize(res.Latency), use: use, rss: peak, errText: res.errorSummary()}, nil
	}
	phase := func(name string, op op, warmup bool) (phaseRow, error) {
		return phaseWhile(name, op, warmup, nil)
	}

	// Create, with the lag sampler polling the checkpoints alongside.
	fromGP, _, err := lastEvent(ctx, ctl)
	if err != nil {
		return nil, lag, 0, "", err
	}
	createOp := s.createOp(client, cfg.Clients)
	if cfg.Warmup > 0 {
		// The warm-up's events are not measured: sample from after them.
		runFor(ctx, cfg.Clients, cfg.Warmup, createOp)
		if fromGP, _, err = lastEvent(ctx, ctl); err != nil {
			return nil, lag, 0, "", err
		}
	}
	sampConn, err := connect(ctx, dbURL, "bench-lag-sampler")
	if err != nil {
		return nil, lag, 0, "", err
	}
	defer sampConn.Close(context.Background())
	sampCtx, stopSampling := context.WithCancel(ctx)
	var samples []checkpointSample
	var sampErr error
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		samples, sampErr = sampleCheckpoints(sampCtx, sampConn, cfg.ReadModels, cfg.LagPoll)
	}()
	createRow, err := phase("create (invoice, 5 lines)", createOp, false) // warmed up above
	if err != nil {
		stopSampling()
		return nil, lag, 0, "", err
	}
	// Keep sampling until the read models have every event of the phase.
	_, last, err := lastEvent(ctx, ctl)
	if err == nil {
		err = waitCheckpoints(ctx, ctl, cfg.ReadModels, last, 30*time.Second)
	}
	time.Sleep(3 * cfg.LagPoll)
	stopSampling()
	<-sampled
	if err != nil {
		return nil, lag, 0, "", err
	}
	if sampErr != nil {
		return nil, lag, 0, "", fmt.Errorf("checkpoint sampler: %w", sampErr)
	}
	appended, err := appendedSince(ctx, ctl, "InvoiceDrafted", fromGP)
	if err != nil {
		return nil, lag, 0, "", err
	}
	lags, unseen := projectionLags(samples, appended)
	lag = lagSummary{summary: summarize(lags), unseen: unseen}
	if n := len(samples); n > 1 {
		lag.interval = samples[n-1].At.Sub(samples[0].At) / time.Duration(n-1)
	}

	getRow, err := phase("get invoice", s.getOp(client, cfg.Clients), true)
	if err != nil {
		return nil, lag, 0, "", err
	}
	listRow, err := phase("list invoices (limit 100)", s.listOp(client, cfg.Clients), true)
	if err != nil {
		return nil, lag, 0, "", err
	}
	rows = []phaseRow{createRow, getRow, listRow}
	more, err := runWritePhases(ctx, cfg, client, s, phase, phaseWhile)
	if err != nil {
		return nil, lag, 0, "", err
	}
	rows = append(rows, more...)
	mem, err := readMemory(svc.pid())
	if err != nil {
		return nil, lag, 0, "", err
	}
	for _, r := range rows {
		if r.errs > 0 {
			fmt.Fprintf(out, "errors in %s: %s\n", r.name, r.errText)
		}
	}
	return rows, lag, mem.Peak, statsOut.String(), nil
}

// waitCheckpoints polls until every named checkpoint has reached pos.
func waitCheckpoints(ctx context.Context, conn *pgx.Conn, names []string, pos txPos, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		s, err := sampleOnce(ctx, conn, names)
		if err != nil {
			return err
		}
		if !s.Min.Less(pos) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("read models still behind %d/%d after %s (lowest checkpoint %d/%d)", pos.Hi, pos.Lo, limit, s.Min.Hi, s.Min.Lo)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func seed(ctx context.Context, c *client, companies, customers, clients int) (*seeded, error) {
	s := &seeded{companies: make([]string, companies), customers: make([][]string, companies)}
	run := randomHex(4)
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err })
	}
	// runCount hands out requests, not indexes: each takes the next one.
	var next atomic.Int64
	res := runCount(ctx, min(clients, companies), companies, func(ctx context.Context, w, seq int) error {
		i := int(next.Add(1) - 1)
		b, err := c.send(ctx, http.MethodPost, "/v1/companies", companyBody(i), fmt.Sprintf("bench-%s-company-%d", run, i), http.StatusCreated)
		if err == nil {
			s.companies[i], err = id(b)
		}
		if err != nil {
			fail(err)
		}
		return err
	})
	if res.Failed > 0 {
		return nil, firstErr
	}
	next.Store(0)
	for ci := range s.customers {
		s.customers[ci] = make([]string, customers)
	}
	res = runCount(ctx, clients, companies*customers, func(ctx context.Context, w, seq int) error {
		k := int(next.Add(1) - 1)
		ci, j := k/customers, k%customers
		path := "/v1/companies/" + s.companies[ci] + "/customers"
		b, err := c.send(ctx, http.MethodPost, path, customerBody(k), fmt.Sprintf("bench-%s-customer-%d", run, k), http.StatusCreated)
		if err == nil {
			s.customers[ci][j], err = id(b)
		}
		if err != nil {
			fail(err)
		}
		return err
	})
	if res.Failed > 0 {
		return nil, firstErr
	}
	return s, nil
}

// createOp drafts an invoice for a random customer of a random company;
// 1% carry an external_reference. Keys are unique per run.
func (s *seeded) createOp(c *client, clients int) op {
	run := randomHex(4)
	rngs := workerRands(clients, 1)
	var n atomic.Int64
	base := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return func(ctx context.Context, w, seq int) error {
		rng := rngs[w]
		ci := rng.IntN(len(s.companies))
		cust := s.customers[ci][rng.IntN(len(s.customers[ci]))]
		k := n.Add(1)
		ref := ""
		if k%100 == 0 {
			ref = fmt.Sprintf("bench-%s-ref-%d", run, k)
		}
		body := invoiceBody(cust, base.AddDate(0, 0, int(k%365)), uint64(k), ref)
		b, err := c.send(ctx, http.MethodPost, "/v1/companies/"+s.companies[ci]+"/invoices", body,
			fmt.Sprintf("bench-%s-invoice-%d", run, k), http.StatusCreated)
		if err != nil {
			return err
		}
		id, err := id(b)
		if err != nil {
			return err
		}
		s.mu.Lock()
		s.invoices = append(s.invoices, created{s.companies[ci], id, uint64(k)})
		if ref != "" {
			s.refs = append(s.refs, created{s.companies[ci], ref, 0})
		}
		s.mu.Unlock()
		return nil
	}
}

// getOp reads a random invoice created before.
func (s *seeded) getOp(c *client, clients int) op {
	rngs := workerRands(clients, 2)
	return func(ctx context.Context, w, seq int) error {
		inv := s.invoices[rngs[w].IntN(len(s.invoices))]
		return c.expect(ctx, http.MethodGet, "/v1/companies/"+inv.company+"/invoices/"+inv.invoice, http.StatusOK)
	}
}

// listOp reads first pages of 100 of a random company's invoices: 2 in 5
// without a filter, then one each by customer_id, status=draft and
// external_reference.
func (s *seeded) listOp(c *client, clients int) op {
	rngs := workerRands(clients, 3)
	return func(ctx context.Context, w, seq int) error {
		rng := rngs[w]
		ci := rng.IntN(len(s.companies))
		company := s.companies[ci]
		q := url.Values{"limit": {"100"}}
		switch seq % 5 {
		case 2:
			q.Set("customer_id", s.customers[ci][rng.IntN(len(s.customers[ci]))])
		case 3:
			q.Set("status", "draft")
		case 4:
			if len(s.refs) > 0 {
				r := s.refs[rng.IntN(len(s.refs))]
				company = r.company
				q.Set("external_reference", r.invoice)
			}
		}
		return c.expect(ctx, http.MethodGet, "/v1/companies/"+company+"/invoices?"+q.Encode(), http.StatusOK)
	}
}

func workerRands(n int, stream uint64) []*mrand.Rand {
	out := make([]*mrand.Rand, n)
	for i := range out {
		out[i] = mrand.New(mrand.NewPCG(uint64(i)+1, stream))
	}
	return out
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// statementStatsSetting loads pg_stat_statements, for -pg-stats.
const statementStatsSetting = "shared_preload_libraries=pg_stat_statements"

func topStatements(ctx context.Context, conn *pgx.Conn, n int) (string, error) {
	rows, err := conn.Query(ctx, `
		SELECT calls, total_exec_time, mean_exec_time, regexp_replace(query, '\s+', ' ', 'g')
		FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
		ORDER BY total_exec_time DESC LIMIT $1`, n)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	t := &table{Header: []string{"statement", "calls", "total ms", "mean ms"}}
	for rows.Next() {
		var (
			calls       int64
			total, mean float64
			q           string
		)
		if err := rows.Scan(&calls, &total, &mean, &q); err != nil {
			return "", err
		}
		if len(q) > 90 {
			q = q[:90] + "…"
		}
		t.add(q, fmt.Sprint(calls), fmtF(total, 0), fmtF(mean, 3))
	}
	return t.String(), rows.Err()
}

// withParams adds query parameters ("a=1&b=2") to a connection URL.
func withParams(dbURL, params string) string {
	if params == "" {
		return dbURL
	}
	sep := "?"
	if strings.Contains(dbURL, "?") {
		sep = "&"
	}
	return dbURL + sep + params
}
