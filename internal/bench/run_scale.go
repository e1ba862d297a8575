package bench

import (
	"context"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgcluster"
)

// scaleConfig is `make bench-scale`: reads and idle cost at N invoices.
type scaleConfig struct {
	Repo           string
	Invoices       int
	Companies      int
	BigShare       float64
	Customers      int
	Clients        int
	Requests       int // per case at Clients
	WarmupRequests int // per case at Clients, unmeasured, before its runs
	SerialRequests int // per case at 1 client
	DeepPage       int
	Idle           time.Duration
	Analyze        bool
	ReadModels     []string
	LogLevel       string
	PgSettings     []string
	Server         serverOptions // huge pages, environment (startPostgres)
	ServiceBin     string
	Keep           bool
	DBParams       string   // query parameters added to the service's DATABASE_URL
	ServiceEnv     []string // extra KEY=VALUE settings of serve, e.g. GOGC=200
	StatsTop       int      // >0: pg_stat_statements' top statements of the catch-up
	Out            io.Writer
}

// idleReport is what an idle service cost over a window.
type idleReport struct {
	Wall        time.Duration
	ServiceCPU  time.Duration
	PostgresCPU time.Duration
	OtherCPU    time.Duration // the rest of the machine (other people's work)
	Statements  statementStats
	XactCommits int64 // pg_stat_database delta; approximate (stats are flushed lazily)
	Autovacuum  int   // autovacuum workers running at the window's start or end, whichever is more
}

// runScaleBench runs the whole of `make bench-scale` and prints its report.
func runScaleBench(ctx context.Context, cfg scaleConfig) (err error) {
	out := cfg.Out
	ds := newDataset(cfg.Invoices, cfg.Companies, cfg.Customers, cfg.BigShare)
	total := ds.eventCount()
	fmt.Fprintf(out, "make bench-scale: %d invoices (%d in the big company), %d companies, %d customers, %d events; started %s\n",
		cfg.Invoices, ds.bigInvoices(), cfg.Companies, cfg.Customers, total, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(out, "machine: %s\n", machine())
	work, bin, cleanup, err := workDir(ctx, out, "invoicing-bench-scale-", cfg.Repo, cfg.ServiceBin, cfg.Keep)
	if err != nil {
		return err
	}
	defer cleanup()
	settings := cfg.PgSettings
	if cfg.StatsTop > 0 {
		settings = append(slices.Clone(settings), statementStatsSetting)
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
	dbURL, err := pg.CreateDatabase("invoicing")
	if err != nil {
		return err
	}
	secret := randomHex(32)
	svcCfg := serviceConfig{Bin: bin, DatabaseURL: withParams(dbURL, cfg.DBParams), Secret: secret, LogLevel: cfg.LogLevel,
		LogPath: filepath.Join(work, "service.log"), Env: cfg.ServiceEnv}

	// 1. An empty store: serve creates the schema; its idle cost is the
	// baseline that must not grow with the log.
	svc, err := startService(ctx, svcCfg)
	if err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // let start-up settle
	fmt.Fprintf(out, "idle, empty store: %s ...\n", cfg.Idle)
	idleEmpty, err := measureIdle(ctx, pg, dbURL, svc.pid(), cfg.Idle)
	if stopErr := svc.stop(); err == nil {
		err = stopErr
	}
	if err != nil {
		return err
	}

	// 2. Fill: generated events, COPY in batches, the service stopped.
	fmt.Fprintf(out, "generating and copying %d events ...\n", total)
	fillStart := time.Now()
	if err := fill(ctx, dbURL, ds); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	fill := time.Since(fillStart)
	fmt.Fprintf(out, "filled in %s (%.0f events/s)\n", fill.Round(time.Millisecond), float64(total)/fill.Seconds())
	ctl, err := connect(ctx, dbURL, "bench-harness")
	if err != nil {
		return err
	}
	defer ctl.Close(context.Background())
	// Statistics as autovacuum would soon have them, and the fill's dirty
	// pages written out, before the clock starts.
	stmts := []string{"ANALYZE events", "CHECKPOINT"}
	if cfg.StatsTop > 0 {
		stmts = append(stmts, "CREATE EXTENSION IF NOT EXISTS pg_stat_statements", "SELECT pg_stat_statements_reset()")
	}
	for _, stmt := range stmts {
		if _, err := ctl.Exec(ctx, stmt); err != nil {
			return err
		}
	}
	_, last, err := lastEvent(ctx, ctl)
	if err != nil {
		return err
	}

	// 3. Catch-up: the service's projectors build the read models.
	svc, err = startService(ctx, svcCfg)
	if err != nil {
		return err
	}
	defer func() {
		if stopErr := svc.stop(); stopErr != nil && err == nil {
			err = stopErr
		}
	}()
	meter := startMeter(svc.pid(), pg.PID())
	catchUp, perModel, err := waitCatchUp(ctx, out, ctl, cfg.ReadModels, last, svc.Started, total)
	if err != nil {
		return err
	}
	catchUse := meter.stop()
	fmt.Fprintf(out, "caught up in %s: %.0f events/s\n", catchUp.Round(time.Millisecond), float64(total)/catchUp.Seconds())
	if cfg.StatsTop > 0 {
		top, err := topStatements(ctx, ctl, cfg.StatsTop)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "pg_stat_statements, the catch-up (top %d by total time):\n%s\n", cfg.StatsTop, top)
	}
	chained, err := waitChained(ctx, ctl, total, svc.Started)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "audit chain complete %s after the service started\n", chained.Round(time.Millisecond))
	// The physical limit, right after the catch-up and the audit chain (so
	// that the sealer writes nothing meanwhile): PostgreSQL alone writing
	// the rows the catch-up wrote.
	limit, err := measureLimit(ctx, ctl)
	if err != nil {
		return fmt.Errorf("limit: %w", err)
	}
	limitRate := float64(total) / limit.Took.Seconds()
	catchRate := float64(total) / catchUp.Seconds()
	fmt.Fprintf(out, "limit (INSERT … SELECT of every read model into empty copies, one transaction): %s, %.0f events/s\n",
		limit.Took.Round(time.Millisecond), limitRate)
	var analyze time.Duration
	if cfg.Analyze {
		t0 := time.Now()
		if _, err := ctl.Exec(ctx, "VACUUM ANALYZE companies, customers, invoices, events, audit_chain"); err != nil {
			return err
		}
		analyze = time.Since(t0)
		fmt.Fprintf(out, "VACUUM ANALYZE of the read models, the events and the audit chain: %s\n", analyze.Round(time.Millisecond))
	}
	sizes := tableSizes(ctx, ctl)

	// 4. Idle at N.
	time.Sleep(2 * time.Second)
	fmt.Fprintf(out, "idle, %d events: %s ...\n", total, cfg.Idle)
	idleFull, err := measureIdle(ctx, pg, dbURL, svc.pid(), cfg.Idle)
	if err != nil {
		return err
	}

	// 5. Reads.
	token, err := devToken(ctx, bin, secret, ds.Account)
	if err != nil {
		return err
	}
	client := newClient(svc.Base, token, cfg.Clients)
	defer client.Close()
	cases, notes, err := scaleCases(ctx, client, ds, cfg.DeepPage)
	if err != nil {
		return err
	}
	t := &table{Header: []string{"case", "1 client p50", "p99 ms", fmt.Sprintf("%d clients per s", cfg.Clients), "p50 ms", "p99 ms", "errors"}}
	var worstGet, worstList time.Duration
	var worstListCase string
	for _, c := range cases {
		fmt.Fprintf(out, "%s: %d requests at 1 client, %d at %d (after %d unmeasured) ...\n",
			c.name, cfg.SerialRequests, cfg.Requests, cfg.Clients, cfg.WarmupRequests)
		runCount(ctx, cfg.Clients, cfg.WarmupRequests, c.op)
		serial := runCount(ctx, 1, cfg.SerialRequests, c.op)
		loaded := runCount(ctx, cfg.Clients, cfg.Requests, c.op)
		s1, sN := summarize(serial.Latency), summarize(loaded.Latency)
		errs := serial.Failed + loaded.Failed
		t.add(c.name, fmtMs(ms(s1.P50)), fmtMs(ms(s1.P99)), fmtF(loaded.rate(), 0), fmtMs(ms(sN.P50)), fmtMs(ms(sN.P99)), fmt.Sprint(errs))
		if errs > 0 {
			notes = append(notes, fmt.Sprintf("errors in %s: %s %s", c.name, serial.errorSummary(), loaded.errorSummary()))
		}
		if c.get {
			worstGet = max(worstGet, sN.P99)
		} else if sN.P99 > worstList {
			worstList, worstListCase = sN.P99, c.name
		}
	}
	mem, err := readMemory(svc.pid())
	if err != nil {
		return err
	}

	// A rebuild of every projection, timed against the same limit, last so
	// that its swapped-in tables do not change the reads and idle measured
	// above; the service is idle meanwhile.
	fmt.Fprintf(out, "projections rebuild ...\n")
	rebuild, err := timeRebuild(ctx, svcCfg)
	if err != nil {
		return err
	}
	rebuildRate := float64(total) / rebuild.Seconds()
	fmt.Fprintf(out, "rebuilt in %s: %.0f events/s\n", rebuild.Round(time.Millisecond), rebuildRate)

	// Report.
	fmt.Fprintf(out, "\nload average at the end: %s\n", loadAvg())
	fmt.Fprintf(out, "\nfill: %d events by COPY in %s; read models: %s\n", total, fill.Round(time.Millisecond), sizes)
	fmt.Fprintf(out, "catch-up (serve start -> every read model at the last event): %s, %.0f events/s", catchUp.Round(time.Millisecond), float64(total)/catchUp.Seconds())
	fmt.Fprintf(out, " [%s]; CPU meanwhile: service %.2f cores, postgres %.2f cores (%.0f page faults/s), rest of the machine %.2f cores\n", perModel,
		catchUse.cores(catchUse.Service), catchUse.cores(catchUse.Postgres), catchUse.perSecond(catchUse.PostgresFaults), catchUse.cores(catchUse.others()))
	fmt.Fprintf(out, "limit events/s (the same rows by INSERT … SELECT into empty copies LIKE … INCLUDING ALL, one transaction, right after the catch-up and the audit chain): %s, %.0f events/s [%s rows: %s]\n",
		limit.Took.Round(time.Millisecond), limitRate, fmt.Sprint(limit.Rows), strings.Join(limit.Tables, ", "))
	fmt.Fprintf(out, "catch-up ÷ limit: %.3f\n", catchRate/limitRate)
	ingestRate := float64(total) / limit.Ingest.Seconds()
	fmt.Fprintf(out, "for information, the same rows from new values (COPY FROM binary files of them into empty copies, one transaction; not a target): %s, %.0f events/s [%s]; catch-up ÷ that: %.3f, rebuild ÷ that: %.3f\n",
		limit.Ingest.Round(time.Millisecond), ingestRate, strings.Join(limit.IngestTables, ", "), catchRate/ingestRate, rebuildRate/ingestRate)
	fmt.Fprintf(out, "rebuild (invoicing projections rebuild, every projection, service idle): %s, %.0f events/s; rebuild ÷ limit: %.3f\n",
		rebuild.Round(time.Millisecond), rebuildRate, rebuildRate/limitRate)
	fmt.Fprintf(out, "audit chain (the sealer, which yields to the projections while they catch up): every event chained %s after the service started\n",
		chained.Round(time.Millisecond))
	fmt.Fprintf(out, "\nreads at %d invoices (latencies in ms):\n%s", cfg.Invoices, t.String())
	for _, n := range notes {
		fmt.Fprintf(out, "  %s\n", n)
	}
	fmt.Fprintf(out, "\nidle service over %s:\n%s", cfg.Idle, idleTable(idleEmpty, idleFull, total).String())
	for _, w := range []struct {
		name string
		r    idleReport
	}{{"empty", idleEmpty}, {fmt.Sprintf("%d events", total), idleFull}} {
		fmt.Fprintf(out, "  statements of the idle service, %s:\n", w.name)
		for _, ts := range w.r.Statements.ByText {
			fmt.Fprintf(out, "  %6d× %8.1f ms  %s\n", ts.Count, ms(ts.Time), ts.Text)
		}
	}
	fmt.Fprintf(out, "service RSS: peak %.1f MiB (VmHWM, catch-up included), now %.1f MiB\n", mib(mem.Peak), mib(mem.RSS))

	var b strings.Builder
	check := func(what string, ok bool, got string) {
		mark := "MISS"
		if ok {
			mark = "ok  "
		}
		fmt.Fprintf(&b, "  %s %-48s %s\n", mark, what, got)
	}
	check(fmt.Sprintf("get p99 ≤ 3 ms (%d clients)", cfg.Clients), worstGet <= 3*time.Millisecond, fmtMs(ms(worstGet))+" ms")
	check(fmt.Sprintf("list p99 ≤ 10 ms, every case (%d clients)", cfg.Clients), worstList <= 10*time.Millisecond,
		fmt.Sprintf("worst %s ms (%s)", fmtMs(ms(worstList)), worstListCase))
	idleCores := idleFull.ServiceCPU.Seconds() / idleFull.Wall.Seconds()
	check("idle < 1% of a core", idleCores < 0.01, fmt.Sprintf("%.2f%%", 100*idleCores))
	check("background statements not growing with the log",
		float64(idleFull.Statements.Time) <= 1.5*float64(idleEmpty.Statements.Time)+float64(idleFull.Wall)/1000,
		fmt.Sprintf("server time %.1f ms at %d events vs %.1f ms empty", ms(idleFull.Statements.Time), total, ms(idleEmpty.Statements.Time)))
	check("catch-up ÷ limit ≥ 0.5", catchRate/limitRate >= 0.5, fmt.Sprintf("%.3f", catchRate/limitRate))
	check("rebuild ÷ limit ≥ 0.5", rebuildRate/limitRate >= 0.5, fmt.Sprintf("%.3f", rebuildRate/limitRate))
	check("service RSS ≤ 150 MiB", mem.Peak <= 150<<20, fmt.Sprintf("%.1f MiB", mib(mem.Peak)))
	fmt.Fprintf(out, "\ntargets (issues 10 and 25):\n%s", b.String())
	return nil
}

func idleTable(empty, full idleReport, total int) *table {
	t := &table{Header: []string{"store", "service CPU % of a core", "postgres CPU %", "rest of machine %", "statements", "per s", "server ms", "xact commits", "autovacuum workers"}}
	row := func(name string, r idleReport) {
		w := r.Wall.Seconds()
		t.add(name, fmtF(100*r.ServiceCPU.Seconds()/w, 2), fmtF(100*r.PostgresCPU.Seconds()/w, 2), fmtF(100*r.OtherCPU.Seconds()/w, 0),
			fmt.Sprint(r.Statements.Statements), fmtF(float64(r.Statements.Statements)/w, 1),
			fmtF(ms(r.Statements.Time), 1), fmt.Sprint(r.XactCommits), fmt.Sprint(r.Autovacuum))
	}
	row("empty", empty)
	row(fmt.Sprintf("%d events", total), full)
	return t
}

// measureIdle logs every statement for the window and reads the CPU the
// service and PostgreSQL used meanwhile.
func measureIdle(ctx context.Context, pg *pgcluster.Cluster, dbURL string, pid int, window time.Duration) (idleReport, error) {
	admin, err := connect(ctx, pg.URL(), "bench-harness")
	if err != nil {
		return idleReport{}, err
	}
	defer admin.Close(context.Background())
	set := func(stmts ...string) error {
		for _, s := range stmts {
			if _, err := admin.Exec(ctx, s); err != nil {
				return fmt.Errorf("%s: %w", s, err)
			}
		}
		return nil
	}
	if err := set("ALTER SYSTEM SET log_min_duration_statement = 0",
		"ALTER SYSTEM SET log_line_prefix = '"+idleLogPrefix+"'", "SELECT pg_reload_conf()"); err != nil {
		return idleReport{}, err
	}
	defer func() {
		_ = set("ALTER SYSTEM RESET log_min_duration_statement", "ALTER SYSTEM RESET log_line_prefix", "SELECT pg_reload_conf()")
	}()
	time.Sleep(200 * time.Millisecond) // the postmaster signals the backends
	// The commits, and the autovacuum workers running: an autovacuum of a
	// big table during the window would count as PostgreSQL's CPU and slow
	// the service's statements, so the report says when one ran.
	var c0, c1 int64
	var av0, av1 int
	counters := func(commits *int64, autovacuums *int) error {
		err := admin.QueryRow(ctx, `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = 'invoicing'),
			(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'autovacuum worker')`).Scan(commits, autovacuums)
		if err != nil {
			return fmt.Errorf("pg_stat_database, pg_stat_activity: %w", err)
		}
		return nil
	}
	offset := fileSize(pg.LogPath())
	if err := counters(&c0, &av0); err != nil {
		return idleReport{}, err
	}
	meter := startMeter(pid, pg.PID())
	select {
	case <-time.After(window):
	case <-ctx.Done():
		return idleReport{}, ctx.Err()
	}
	use := meter.stop()
	if err := counters(&c1, &av1); err != nil {
		return idleReport{}, err
	}
	f, err := os.Open(pg.LogPath())
	if err != nil {
		return idleReport{}, err
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return idleReport{}, err
	}
	st, err := countStatements(f, "invoicing", "bench")
	if err != nil {
		return idleReport{}, err
	}
	return idleReport{Wall: use.Wall, ServiceCPU: use.Service, PostgresCPU: use.Postgres, OtherCPU: use.others(),
		Statements: st, XactCommits: c1 - c0, Autovacuum: max(av0, av1)}, nil
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// fill generates the dataset's events and COPYs them into events, one
// transaction per batch (so they get distinct transaction ids, as appends
// do), generation and COPY overlapping.
func fill(ctx context.Context, dbURL string, ds *dataset) error {
	const batchSize = 20000
	conn, err := connect(ctx, dbURL, "bench-fill")
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	batches := make(chan [][]any, 2)
	genErr := make(chan error, 1)
	genCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		defer close(batches)
		batch := make([][]any, 0, batchSize)
		err := ds.generate(func(ev genEvent) error {
			batch = append(batch, []any{[16]byte(ev.ID), ev.Stream, ev.Revision, ev.Type, ev.Data, ev.Metadata, ev.RecordedAt})
			if len(batch) == batchSize {
				select {
				case batches <- batch:
				case <-genCtx.Done():
					return genCtx.Err()
				}
				batch = make([][]any, 0, batchSize)
			}
			return nil
		})
		if err == nil && len(batch) > 0 {
			select {
			case batches <- batch:
			case <-genCtx.Done():
				err = genCtx.Err()
			}
		}
		genErr <- err
	}()
	cols := []string{"event_id", "stream_name", "stream_revision", "event_type", "data", "metadata", "recorded_at"}
	for batch := range batches {
		if _, err := conn.CopyFrom(ctx, pgx.Identifier{"events"}, cols, pgx.CopyFromRows(batch)); err != nil {
			cancel()
			for range batches {
			}
			return err
		}
	}
	return <-genErr
}

// waitChained polls the audit chain until it holds all total events, so
// that the idle and read phases measure the service at rest rather than a
// sealer still chaining the backlog; it returns the time from the
// service's start.
func waitChained(ctx context.Context, conn *pgx.Conn, total int, started time.Time) (time.Duration, error) {
	deadline := time.Now().Add(60 * time.Minute)
	for {
		var chained int64
		if err := conn.QueryRow(ctx, `SELECT coalesce(max(seq), 0) FROM audit_chain`).Scan(&chained); err != nil {
			return 0, fmt.Errorf("audit chain: %w", err)
		}
		if chained >= int64(total) {
			return time.Since(started), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("audit chain holds %d of %d events after 60 minutes", chained, total)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// waitCatchUp polls the checkpoints until every read model has reached
// last, printing progress every 10 s, and returns the time from the
// service's start and when each read model got there.
func waitCatchUp(ctx context.Context, out io.Writer, conn *pgx.Conn, names []string, last txPos, started time.Time, total int) (time.Duration, string, error) {
	done := map[string]time.Duration{}
	lastPrint := time.Now()
	deadline := time.Now().Add(60 * time.Minute)
	for len(done) < len(names) {
		rows, err := conn.Query(ctx, `SELECT name, position FROM projection_checkpoints WHERE name = ANY($1)`, names)
		if err != nil {
			return 0, "", err
		}
		progress := map[string]txPos{}
		for rows.Next() {
			var name, text string
			if err := rows.Scan(&name, &text); err != nil {
				rows.Close()
				return 0, "", err
			}
			if progress[name], err = parseTxPos(text); err != nil {
				rows.Close()
				return 0, "", err
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return 0, "", err
		}
		now := time.Since(started)
		for name, p := range progress {
			if _, ok := done[name]; !ok && !p.Less(last) {
				done[name] = now
			}
		}
		if time.Since(lastPrint) >= 10*time.Second {
			lastPrint = time.Now()
			var parts []string
			for _, n := range names {
				parts = append(parts, fmt.Sprintf("%s %.0f%%", n, 100*float64(progress[n].Lo)/float64(last.Lo)))
			}
			fmt.Fprintf(out, "  %s: %s\n", now.Round(time.Second), strings.Join(parts, ", "))
		}
		if time.Now().After(deadline) {
			return 0, "", fmt.Errorf("read models not caught up with %d events after 60 minutes", total)
		}
		select {
		case <-ctx.Done():
			return 0, "", ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	var all time.Duration
	var parts []string
	for _, n := range names {
		all = max(all, done[n])
		parts = append(parts, fmt.Sprintf("%s %s", n, done[n].Round(time.Millisecond)))
	}
	return all, strings.Join(parts, ", "), nil
}

func tableSizes(ctx context.Context, conn *pgx.Conn) string {
	var parts []string
	for _, t := range []string{"events", "invoices"} {
		var size string
		if err := conn.QueryRow(ctx, `SELECT pg_size_pretty(pg_total_relation_size($1::regclass))`, t).Scan(&size); err == nil {
			parts = append(parts, t+" "+size)
		}
	}
	return strings.Join(parts, ", ") + " (with indexes)"
}

// scaleCase is one kind of read.
type scaleCase struct {
	name string
	get  bool
	op   op
}

// scaleCases builds the reads measured at scale; the deep cursors are
// collected by following next_cursor through the big company.
func scaleCases(ctx context.Context, c *client, ds *dataset, deep int) ([]scaleCase, []string, error) {
	rngs := workerRands(1024, 9)
	rnd := func(w int) *mrand.Rand { return rngs[w%len(rngs)] }
	invoicesPath := func(company int) string { return "/v1/companies/" + ds.companyID(company) + "/invoices" }
	list := func(company int, q url.Values) error {
		q.Set("limit", "100")
		return c.expect(ctx, http.MethodGet, invoicesPath(company)+"?"+q.Encode(), http.StatusOK)
	}
	var refs []int
	for i := 42; i < ds.Invoices; i += 100 {
		refs = append(refs, i)
	}
	cases := []scaleCase{
		{name: "get invoice by id", get: true, op: func(ctx context.Context, w, _ int) error {
			i := rnd(w).IntN(ds.Invoices)
			return c.expect(ctx, http.MethodGet, invoicesPath(ds.companyOf(i))+"/"+ds.invoiceID(i), http.StatusOK)
		}},
		{name: "list, no filter (any company)", op: func(_ context.Context, w, _ int) error {
			return list(rnd(w).IntN(ds.Companies), url.Values{})
		}},
		{name: "list, no filter (big company)", op: func(_ context.Context, w, _ int) error {
			return list(0, url.Values{})
		}},
		{name: "list, customer_id", op: func(_ context.Context, w, _ int) error {
			k := rnd(w).IntN(ds.Customers)
			return list(ds.custComp[k], url.Values{"customer_id": {ds.customerID(k)}})
		}},
		{name: "list, customer_id (big company)", op: func(_ context.Context, w, _ int) error {
			cs := ds.customersOf(0)
			return list(0, url.Values{"customer_id": {ds.customerID(cs[rnd(w).IntN(len(cs))])}})
		}},
		{name: "list, status=issued (big company)", op: func(_ context.Context, w, _ int) error {
			return list(0, url.Values{"status": {"issued"}})
		}},
		{name: "list, status=void (any company)", op: func(_ context.Context, w, _ int) error {
			return list(rnd(w).IntN(ds.Companies), url.Values{"status": {"void"}})
		}},
		{name: "list, status=draft (big company)", op: func(_ context.Context, w, _ int) error {
			return list(0, url.Values{"status": {"draft"}})
		}},
	}
	if len(refs) > 0 {
		cases = append(cases, scaleCase{name: "list, external_reference", op: func(_ context.Context, w, _ int) error {
			i := refs[rnd(w).IntN(len(refs))]
			return list(ds.companyOf(i), url.Values{"external_reference": {ds.externalRef(i)}})
		}})
	}
	// Deep cursors: follow next_cursor through the big company.
	var notes []string
	pages := (ds.bigInvoices() + 99) / 100
	var depths []int
	for _, d := range []int{10, 100, deep} {
		if d+9 <= pages && (len(depths) == 0 || d > depths[len(depths)-1]) {
			depths = append(depths, d)
		} else if d+9 > pages {
			notes = append(notes, fmt.Sprintf("page %d: not measured, the big company has %d pages of 100 at this size", d, pages))
		}
	}
	if len(depths) > 0 {
		want := depths[len(depths)-1] + 9
		cursors := make([]string, want+1) // cursors[p] fetches page p
		cursor := ""
		t0 := time.Now()
		for p := 1; p <= want; p++ {
			cursors[p] = cursor
			q := url.Values{"limit": {"100"}}
			if cursor != "" {
				q.Set("after", cursor)
			}
			b, err := c.send(ctx, http.MethodGet, invoicesPath(0)+"?"+q.Encode(), nil, "", http.StatusOK)
			if err != nil {
				return nil, nil, fmt.Errorf("following the cursor to page %d: %w", p, err)
			}
			if cursor, _, err = nextCursor(b); err != nil {
				return nil, nil, err
			}
			if cursor == "" && p < want {
				return nil, nil, fmt.Errorf("the big company's list ended at page %d, expected %d pages", p, pages)
			}
		}
		notes = append(notes, fmt.Sprintf("followed next_cursor through %d pages of the big company in %s", want, time.Since(t0).Round(time.Millisecond)))
		for _, d := range depths {
			set := cursors[d : d+10]
			cases = append(cases, scaleCase{name: fmt.Sprintf("list, cursor at page %d (big company)", d), op: func(_ context.Context, w, _ int) error {
				return list(0, url.Values{"after": {set[rnd(w).IntN(len(set))]}})
			}})
		}
	}
	return cases, notes, nil
}
