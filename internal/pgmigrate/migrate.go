// Package pgmigrate applies a component's embedded, numbered SQL migrations
// exactly once per database.
//
// Each component (the event store, each projection) owns its tables and its
// migrations; files are named NNN_description.sql and applied in number order,
// each in its own transaction together with its bookkeeping row. A
// transaction-level advisory lock serialises concurrent starters, so two
// instances starting at once cannot both apply a migration.
package pgmigrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockKey is an arbitrary constant shared by every starter of this service.
const lockKey = 7_341_559_021

const createTable = `
CREATE TABLE IF NOT EXISTS schema_migrations (
	component  text        NOT NULL,
	version    integer     NOT NULL,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (component, version)
)`

// Migration is one numbered SQL file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Load reads the *.sql files of dir in fsys, ordered by their number prefix.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("pgmigrate: read %s: %w", dir, err)
	}
	var out []Migration
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".sql") {
			continue
		}
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("pgmigrate: %s: name must start with a positive number and '_'", e.Name())
		}
		body, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, fmt.Errorf("pgmigrate: read %s: %w", e.Name(), err)
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("pgmigrate: %s and %s share version %d", out[i-1].Name, out[i].Name, out[i].Version)
		}
	}
	return out, nil
}

// Apply applies the migrations of component in dir that the database has not
// seen yet.
func Apply(ctx context.Context, pool *pgxpool.Pool, component string, fsys fs.FS, dir string) error {
	migrations, err := Load(fsys, dir)
	if err != nil {
		return err
	}
	for _, m := range migrations {
		if err := applyOne(ctx, pool, component, m); err != nil {
			return err
		}
	}
	return nil
}

func applyOne(ctx context.Context, pool *pgxpool.Pool, component string, m Migration) error {
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(lockKey)); err != nil {
			return fmt.Errorf("pgmigrate: lock: %w", err)
		}
		if _, err := tx.Exec(ctx, createTable); err != nil {
			return fmt.Errorf("pgmigrate: bookkeeping table: %w", err)
		}
		var done bool
		err := tx.QueryRow(ctx,
			`SELECT EXISTS (SELECT 1 FROM schema_migrations WHERE component = $1 AND version = $2)`,
			component, m.Version).Scan(&done)
		if err != nil || done {
			return err
		}
		if _, err := tx.Exec(ctx, m.SQL); err != nil {
			return fmt.Errorf("pgmigrate: %s %s: %w", component, m.Name, err)
		}
		_, err = tx.Exec(ctx,
			`INSERT INTO schema_migrations (component, version, name) VALUES ($1, $2, $3)`,
			component, m.Version, m.Name)
		return err
	})
}
