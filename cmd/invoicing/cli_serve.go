package main

import "github.com/spf13/cobra"

// newServeCmd is `invoicing serve`; serve.go wires the service.
func newServeCmd(c *cli) *cobra.Command {
	return &cobra.Command{
		Use:   "serve",
		Short: "Apply migrations, run the HTTP API and the projectors",
		Long: `serve applies pending migrations, starts the projectors and the HTTP API,
and on SIGTERM or interrupt drains in-flight requests and exits 0.

It takes no flags: it is configured by environment variables (HTTP_ADDR,
DATABASE_URL, EVENTSTORE_URL, AUTH_JWKS_URL or AUTH_HS256_SECRET, ...), listed
in README.md under "Configuration".`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := loadConfig(c.getenv)
			if err != nil {
				return err
			}
			return serve(cmd.Context(), cfg, cmd.ErrOrStderr())
		},
	}
}
