package bench

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// readModelTables are the projections' tables the limit copies, those
// that hold rows after the catch-up.
var readModelTables = []string{"invoices", "invoice_payments", "credit_notes", "companies", "customers", "public_events", "webhook_endpoints"}

// limitReport is PostgreSQL's own time to write the read models' rows.
type limitReport struct {
	Tables []string // copied, with their row counts
	Rows   int64
	Took   time.Duration
}

// measureLimit copies every read-model table that has rows into an empty
// table LIKE it INCLUDING ALL (indexes, defaults, constraints) with
// INSERT … SELECT, all in one transaction, and times it: what PostgreSQL
// needs to write the same final rows the catch-up wrote. The copies are
// dropped after.
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
	drop := func() error {
		for _, t := range tables {
			if _, err := conn.Exec(context.Background(), `DROP TABLE IF EXISTS `+pgx.Identifier{t + "_limit"}.Sanitize()); err != nil {
				return err
			}
		}
		return nil
	}
	if err := drop(); err != nil {
		return r, err
	}
	if _, err := conn.Exec(ctx, "CHECKPOINT"); err != nil {
		return r, err
	}
	t0 := time.Now()
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		for _, t := range tables {
			src, dst := pgx.Identifier{t}.Sanitize(), pgx.Identifier{t + "_limit"}.Sanitize()
			if _, err := tx.Exec(ctx, `CREATE TABLE `+dst+` (LIKE `+src+` INCLUDING ALL)`); err != nil {
				return fmt.Errorf("copy of %s: %w", t, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+dst+` SELECT * FROM `+src); err != nil {
				return fmt.Errorf("INSERT … SELECT into the copy of %s: %w", t, err)
			}
		}
		return nil
	})
	r.Took = time.Since(t0)
	if dropErr := drop(); err == nil {
		err = dropErr
	}
	return r, err
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
