package audit

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events/pgstore"
	"github.com/invoicing/invoicing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is a migrated database of its own: the PostgreSQL event store and
// the audit chain's tables.
type env struct {
	pool  *pgxpool.Pool
	store *pgstore.Store
}

func newEnv(t testing.TB) env {
	t.Helper()
	return newEnvAt(t, pgtest.NewDatabase(t), Migrate)
}

// newEnvAt is an env on the database at url, migrated by the event store's
// migrations and then by migrations.
func newEnvAt(t testing.TB, url string, migrations ...func(context.Context, *pgxpool.Pool) error) env {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	for _, migrate := range append([]func(context.Context, *pgxpool.Pool) error{pgstore.Migrate}, migrations...) {
		if err := migrate(context.Background(), pool); err != nil {
			t.Fatal(err)
		}
	}
	store := pgstore.New(pool, quiet, pgstore.Options{PollInterval: 20 * time.Millisecond})
	t.Cleanup(func() { store.Close() })
	return env{pool: pool, store: store}
}
