package audit

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgmigrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate creates the audit chain's tables: its links and its seals.
//
// Databases created before the audit package existed got the same tables
// from the projections' migration 004; migration 001 here finds them and
// leaves them as they are, links and seals included.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgmigrate.Apply(ctx, pool, "audit", migrations, "migrations")
}
