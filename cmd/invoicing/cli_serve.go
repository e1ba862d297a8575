package main

import (
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// DefaultGCPercent is serve's garbage-collection target unless GOGC is set.
// The service's live heap is small (≈ 10 MiB) and most of what it
// allocates dies with its request, so Go's default of 100 spent a tenth of
// its CPU under load marking the same few megabytes; at 400 the heap may
// grow to five times the live data, still far below the memory the service
// is given.
const DefaultGCPercent = 400

// DefaultMemoryLimit is serve's soft memory limit (Go's GOMEMLIMIT) unless
// GOMEMLIMIT is set. A catch-up holds tens of megabytes live (pages of
// pgstore.PageSize and batches of projections.DefaultBatchSize events); at
// DefaultGCPercent the heap could grow to five times that (240 MiB at a
// million invoices), so near this limit the collector runs as often as it
// must instead.
const DefaultMemoryLimit = 96 << 20

// newServeCmd is `invoicing serve`; serve.go wires the service.
func newServeCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Apply migrations, run the HTTP API and the projectors",
		Long: `serve applies pending migrations, starts the projectors and the HTTP API,
and on SIGTERM or interrupt drains in-flight requests and exits 0.

It takes no flags: it is configured by environment variables (HTTP_ADDR,
DATABASE_URL, EVENTSTORE_URL, AUTH_JWKS_URL or AUTH_HS256_SECRET, ...), listed
in docs/configuration.md.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(c.getenv)
			if err != nil {
				return err
			}
			if _, set := os.LookupEnv("GOGC"); !set {
				debug.SetGCPercent(DefaultGCPercent)
			}
			if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
				debug.SetMemoryLimit(DefaultMemoryLimit)
			}
			return serve(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
}
