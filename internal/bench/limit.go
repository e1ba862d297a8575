package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// readModelTables are the projections' tables the limit copies, those
// that hold rows after the catch-up.
var readModelTables = []string{"invoices", "invoice_payments", "credit_notes", "companies", "customers", "public_events", "webhook_endpoints"}

// limitReport is PostgreSQL's own time to write the read models' rows.
type limitReport struct {
	Tables []string // copied, with their row counts and times
	Rows   int64
	Took   time.Duration
	// Ingest is the same rows written from new values (COPY FROM), and
	// IngestTables its times per table: see measureIngest.
	Ingest       time.Duration
	IngestTables []string
}

// measureLimit copies every read-model table that has rows into an empty
// table LIKE it INCLUDING ALL (indexes, defaults, constraints) with
// INSERT … SELECT, all in one transaction, and times it: what PostgreSQL
// needs to write the same final rows the catch-up wrote. The copies are
// dropped after. It then measures the ingest (measureIngest).
func measureLimit(ctx context.Context, conn *pgx.Conn) (limitReport, error) {
	var r limitReport
	var tables []string
	for _, t := range readModelTables {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, t).Scan(&exists); err != nil {
			return r, err
		}
		if !exists {
			continue
		}
		var n int64
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
			return r, fmt.Errorf("counting %s: %w", t, err)
		}
		if n == 0 {
			continue
		}
		tables = append(tables, t)
		r.Tables = append(r.Tables, fmt.Sprintf("%s %d", t, n))
		r.Rows += n
	}
	took, times, err := timeCopies(ctx, conn, tables, "_limit", func(tx pgx.Tx, table, dst string) error {
		_, err := tx.Exec(ctx, `INSERT INTO `+dst+` SELECT * FROM `+pgx.Identifier{table}.Sanitize())
		return err
	})
	if err != nil {
		return r, err
	}
	r.Took = took
	for i := range r.Tables {
		r.Tables[i] += " in " + times[i]
	}
	r.Ingest, r.IngestTables, err = measureIngest(ctx, conn, tables)
	return r, err
}

// measureIngest times the same rows written from new values: each table
// is exported to a binary file in the server's data directory (not timed;
// the bench's cluster is removed with it)
// and read back with COPY FROM into an empty copy, all in one
// transaction. INSERT … SELECT moves values already validated and already
// compressed (a json document, a TOASTed column), which a catch-up, whose
// values are new, cannot; COPY FROM is PostgreSQL's fastest way in for
// new values, and pays for both. For information beside the limit; the
// targets are against the limit.
func measureIngest(ctx context.Context, conn *pgx.Conn, tables []string) (time.Duration, []string, error) {
	var dir string
	if err := conn.QueryRow(ctx, `SHOW data_directory`).Scan(&dir); err != nil {
		return 0, nil, err
	}
	file := func(table string) string { return quoteLiteral(filepath.Join(dir, "bench_ingest_"+table+".bin")) }
	for _, t := range tables {
		if _, err := conn.Exec(ctx, `COPY `+pgx.Identifier{t}.Sanitize()+` TO `+file(t)+` (FORMAT binary)`); err != nil {
			return 0, nil, fmt.Errorf("export of %s: %w", t, err)
		}
	}
	took, times, err := timeCopies(ctx, conn, tables, "_ingest", func(tx pgx.Tx, table, dst string) error {
		_, err := tx.Exec(ctx, `COPY `+dst+` FROM `+file(table)+` (FORMAT binary)`)
		return err
	})
	var out []string
	for i, t := range tables {
		if i < len(times) {
			out = append(out, t+" in "+times[i])
		}
	}
	return took, out, err
}

// quoteLiteral is s as a SQL string literal.
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// timeCopies creates, in one transaction, an empty table LIKE each of
// tables INCLUDING ALL, named with suffix, and fills it with fill; it
// returns the transaction's time and each table's. The copies are dropped
// after.
func timeCopies(ctx context.Context, conn *pgx.Conn, tables []string, suffix string, fill func(tx pgx.Tx, table, dst string) error) (time.Duration, []string, error) {
	drop := func() error {
		for _, t := range tables {
			if _, err := conn.Exec(context.Background(), `DROP TABLE IF EXISTS `+pgx.Identifier{t + suffix}.Sanitize()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := drop(); err != nil {
		return 0, nil, err
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return 0, nil, err
	}
	var times []string
	t0 := time.Now()
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, t := range tables {
			started := time.Now()
			src, dst := pgx.Identifier{t}.Sanitize(), pgx.Identifier{t + suffix}.Sanitize()
			if _, err := tx.Exec(ctx, `CREATE TABLE `+dst+` (LIKE `+src+` INCLUDING ALL)`); err != nil {
				return fmt.Errorf("copy of %s: %w", t, err)
			}
			if err := fill(tx, t, dst); err != nil {
				return fmt.Errorf("filling the copy of %s: %w", t, err)
			}
			times = append(times, time.Since(started).Round(time.Millisecond).String())
		}
		return nil
	})
	took := time.Since(t0)
	if dropErr := drop(); err == nil {
		err = dropErr
	}
	return took, times, err
}

// timeRebuild runs `invoicing projections rebuild` (every projection) with
// the service's settings and times it.
func timeRebuild(ctx context.Context, cfg serviceConfig) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, cfg.Bin, "projections", "rebuild")
	cmd.Env = serviceEnv(cfg, "127.0.0.1:0")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	if err != nil {
		s := stderr.String()
		if len(s) > 2000 {
			s = s[len(s)-2000:]
		}
		return took, fmt.Errorf("projections rebuild: %w: %s", err, s)
	}
	return took, nil
}
