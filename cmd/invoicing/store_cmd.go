package main

import (
	"context"
	"errors"
	"fmt"
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
	logger := slog.New(slog.NewJSONHandler(io.Discard, nil))
	pool, err := openPool(ctx, cfg.DatabaseURL)
	if err != nil {
		return err
	}
	defer pool.Close()
	store, err := openStore(ctx, cfg, pool, logger)
	if err != nil {
		return fmt.Errorf("event store: %w", err)
	}
	defer store.Close()
	return fn(pool, store)
}

func withStore(ctx context.Context, getenv func(string) string, fn func(events.Store) error) error {
	return withDatabases(ctx, getenv, func(_ *pgxpool.Pool, store events.Store) error { return fn(store) })
}
