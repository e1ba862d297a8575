// Package projections builds the PostgreSQL read models from the event store.
//
// A Runner follows the store's global order from its checkpoint and, per
// batch, writes read-model rows and the new checkpoint in one transaction:
// the effect of every event lands exactly once, whatever crashes in between.
// One process at a time runs a projection (a session advisory lock); the
// others wait and take over when it dies.
package projections

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgmigrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the read models' schema migrations.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgmigrate.Apply(ctx, pool, "projections", migrations, "migrations")
}

// Projection turns events into read-model rows.
type Projection interface {
	// Name identifies the projection and its checkpoint.
	Name() string
	// Apply writes the effect of ev inside tx. Events of types it does not
	// handle are ignored. Apply must be deterministic: replays produce the
	// same rows.
	Apply(ctx context.Context, tx pgx.Tx, ev events.RecordedEvent) error
}

// All returns every projection of the service, in the order they run.
func All() []Projection {
	return []Projection{Companies{}}
}
