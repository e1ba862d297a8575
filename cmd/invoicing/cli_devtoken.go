package main

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/invoicing/invoicing/transport/auth"
)

// newDevTokenCmd is `invoicing dev-token`: an HS256 token for development,
// signed with AUTH_HS256_SECRET and carrying AUTH_ISSUER/AUTH_AUDIENCE when
// set, so that `serve` with the same environment accepts it.
func newDevTokenCmd(c *cli) *cobra.Command {
	var (
		org, sub, scope string
		ttl             time.Duration
	)
	cmd := &cobra.Command{
		Use:   "dev-token --org ID",
		Short: "Print a development access token signed with AUTH_HS256_SECRET",
		Long: `dev-token prints an HS256 access token for development, signed with
AUTH_HS256_SECRET and carrying AUTH_ISSUER and AUTH_AUDIENCE when they are set,
the account in the claim AUTH_ORG_CLAIM names (default org_id): serve with the
same environment accepts it.`,
		Example: `  export TOKEN="$(invoicing dev-token --org acme)"`,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if org == "" {
				return usageErrorf(cmd, "--org is required")
			}
			secret := c.getenv("AUTH_HS256_SECRET")
			if secret == "" {
				return errors.New("dev-token: AUTH_HS256_SECRET is not set")
			}
			token, err := auth.MintDevToken([]byte(secret), auth.DevClaims{
				Org: org, Subject: sub, Scopes: strings.Fields(scope), TTL: ttl,
				OrgClaim: or(c.getenv("AUTH_ORG_CLAIM"), "org_id"),
				Issuer:   c.getenv("AUTH_ISSUER"), Audience: c.getenv("AUTH_AUDIENCE"),
			}, time.Now())
			if err != nil {
				return fmt.Errorf("dev-token: %w", err)
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&org, "org", "", "account (organization) id (required)")
	f.StringVar(&sub, "sub", "dev-user", "subject")
	f.StringVar(&scope, "scope", auth.ScopeRead+" "+auth.ScopeWrite, "space-separated scopes")
	f.DurationVar(&ttl, "ttl", time.Hour, "lifetime, a Go duration")
	return cmd
}
