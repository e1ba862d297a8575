// Package migrations holds the webhook delivery tables' numbered migrations
// (deliveries, attempts, the dispatcher's checkpoint). It is a package of
// its own so that package webhook, which transport imports for the
// delivery log, does not import the migration runner: transport reaches
// stores only through the packages that own them (internal/archtest).
package migrations

import (
	"context"
	"embed"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgmigrate"
)

//go:embed *.sql
var files embed.FS

// Migrate creates or upgrades the webhook delivery tables; serve runs it at
// start, as it does the audit chain's.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgmigrate.Apply(ctx, pool, "webhook", files, ".")
}
