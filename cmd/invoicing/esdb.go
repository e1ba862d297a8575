package main

import (
	"context"
	"errors"
	"log/slog"

	"github.com/invoicing/invoicing/events"
)

// openEventStoreDB is replaced when the EventStoreDB adapter lands.
func openEventStoreDB(ctx context.Context, url string, logger *slog.Logger) (events.Store, error) {
	return nil, errors.New("EVENTSTORE_URL: the EventStoreDB adapter is not built yet")
}
