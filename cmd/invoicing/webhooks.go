package main

import (
	"context"
	"crypto/rand"
	"embed"
	"encoding/base64"
	"errors"
	"fmt"
	"net"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/internal/pgmigrate"
	"github.com/invoicing/invoicing/query"
	"github.com/invoicing/invoicing/webhook"
)

// The webhook endpoints' wiring: the master key the signing secrets are
// derived from, the URL guard, and the endpoints' streams for commands.

//go:embed webhook_migrations/*.sql
var webhookMigrations embed.FS

// parseWebhookKey reads WEBHOOK_SECRET_KEY: standard base64 of at least
// webhook.MinMasterKeyBytes bytes. The value is never echoed.
func parseWebhookKey(v string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		return nil, errors.New("WEBHOOK_SECRET_KEY: want standard base64 (e.g. `openssl rand -base64 32`)")
	}
	if len(key) < webhook.MinMasterKeyBytes {
		return nil, fmt.Errorf("WEBHOOK_SECRET_KEY: want at least %d bytes, got %d", webhook.MinMasterKeyBytes, len(key))
	}
	return key, nil
}

// webhookMasterKey is the configured key, else the one kept in the
// database, which the first instance to start generates: instances that
// start together insert at most one (the table holds one row) and all
// read the same.
func webhookMasterKey(ctx context.Context, configured []byte, pool *pgxpool.Pool) ([]byte, error) {
	if configured != nil {
		return configured, nil
	}
	if err := pgmigrate.Apply(ctx, pool, "webhook_master_key", webhookMigrations, "webhook_migrations"); err != nil {
		return nil, fmt.Errorf("migrate the webhook master key: %w", err)
	}
	fresh := make([]byte, 32)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("generate a webhook master key: %w", err)
	}
	var key []byte
	err := pool.QueryRow(ctx, `
		WITH inserted AS (
			INSERT INTO webhook_master_key (key) VALUES ($1) ON CONFLICT (id) DO NOTHING RETURNING key
		)
		SELECT key FROM inserted UNION ALL SELECT key FROM webhook_master_key
		LIMIT 1`, fresh).Scan(&key)
	if err != nil {
		return nil, fmt.Errorf("read the webhook master key: %w", err)
	}
	return key, nil
}

// webhookSecrets derives signing secrets from the master key
// (command.SecretDeriver).
type webhookSecrets []byte

// Secret implements command.SecretDeriver.
func (k webhookSecrets) Secret(accountID, endpointID string, generation int) (string, error) {
	return webhook.Secret(k, accountID, endpointID, generation)
}

// urlGuard is webhook.Guard as command.URLChecker: its refusals become
// command's.
type urlGuard struct {
	guard *webhook.Guard
}

// CheckURL implements command.URLChecker.
func (u urlGuard) CheckURL(ctx context.Context, raw string) error {
	err := u.guard.CheckURL(ctx, raw)
	var refused *webhook.URLError
	if errors.As(err, &refused) {
		return &command.URLRefusedError{Reason: refused.Reason}
	}
	return err
}

// newURLGuard is the guard of registrations and deliveries alike.
func newURLGuard(allowPrivate bool) *webhook.Guard {
	return &webhook.Guard{AllowPrivate: allowPrivate, Resolver: net.DefaultResolver}
}

// webhookEndpointDirectory finds endpoints' streams in the read model
// (command.WebhookEndpointDirectory).
type webhookEndpointDirectory struct {
	q *query.Store
}

// WebhookEndpointStream implements command.WebhookEndpointDirectory.
func (d webhookEndpointDirectory) WebhookEndpointStream(ctx context.Context, accountID, endpointID string) (string, error) {
	return d.q.WebhookEndpointStream(ctx, accountID, endpointID)
}
