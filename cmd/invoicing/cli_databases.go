package main

import (
	"context"
	"errors"
	"io"
	"log/slog"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// toolConfig is what the operator and auditor commands need: the databases,
// not the HTTP or auth settings of serve.
func toolConfig(getenv func(string) string) (config, error) {
	cfg := config{DatabaseURL: getenv("DATABASE_URL"), EventStoreURL: getenv("EVENTSTORE_URL")}
	if cfg.DatabaseURL == "" {
		return config{}, errors.New("configuration: DATABASE_URL is required")
	}
	return cfg, nil
}

// withDatabases opens the read-model pool and the event store (migrated, as
// serve would) for a command, and closes them afterwards.
func withDatabases(ctx context.Context, getenv func(string) string, fn func(*pgxpool.Pool, events.Store) error) error {
	cfg, err := toolConfig(getenv)
	if err != nil {
		return err
	}
	pool, store, err := openDatabases(ctx, cfg, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		return err
	}
	defer pool.Close()
	defer store.Close()
	return fn(pool, store)
}
