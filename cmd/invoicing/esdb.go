package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/esdb"
)

// esdbStartTimeout bounds how long serve waits for EventStoreDB at start-up:
// an unreachable store must fail fast with a clear message, not hang.
const esdbStartTimeout = 5 * time.Second

func openEventStoreDB(ctx context.Context, url string, logger *slog.Logger) (events.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, esdbStartTimeout)
	defer cancel()
	store, err := esdb.Open(ctx, url, logger)
	if err != nil {
		return nil, fmt.Errorf("EVENTSTORE_URL: %w", err)
	}
	return store, nil
}
