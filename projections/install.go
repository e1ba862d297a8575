package projections

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// installLock serialises Install across starting instances.
const installLock = 7_341_559_022

// Install creates the live tables of every projection that has none (a new
// database) at its code version, and returns the projections whose live
// tables are older than their code: those need a rebuild before they run.
// Tables newer than the code (a rolled-back deploy) are an error: old code
// must not write into a newer schema.
func Install(ctx context.Context, pool *pgxpool.Pool, projs []Projection) (stale []Projection, err error) {
	for _, p := range projs {
		var live int
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(installLock)); err != nil {
				return err
			}
			err := tx.QueryRow(ctx, `SELECT version FROM public.projection_versions WHERE name = $1`, p.Name()).Scan(&live)
			if !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
			live = p.Version()
			return create(ctx, tx, p, "public")
		})
		if err != nil {
			return nil, fmt.Errorf("install projection %s: %w", p.Name(), err)
		}
		switch {
		case live < p.Version():
			stale = append(stale, p)
		case live > p.Version():
			return nil, fmt.Errorf("projection %s: the database has version %d, newer than this binary's %d", p.Name(), live, p.Version())
		}
	}
	return stale, nil
}

// create runs the projection's schema in schema and records the version
// when the tables are the live ones.
func create(ctx context.Context, tx pgx.Tx, p Projection, schema string) error {
	if _, err := tx.Exec(ctx, "SET LOCAL search_path TO "+pgx.Identifier{schema}.Sanitize()); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, p.Schema()); err != nil {
		return fmt.Errorf("schema of %s in %s: %w", p.Name(), schema, err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL search_path TO public`); err != nil {
		return err
	}
	if schema != "public" {
		return nil
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO public.projection_versions (name, version) VALUES ($1, $2)
		ON CONFLICT (name) DO UPDATE SET version = EXCLUDED.version, updated_at = now()`, p.Name(), p.Version())
	return err
}
