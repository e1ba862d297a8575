package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/invoicing/invoicing/transport/auth"
)

// devToken prints an HS256 token for development, signed with
// AUTH_HS256_SECRET and carrying AUTH_ISSUER/AUTH_AUDIENCE when set, so that
// `serve` with the same environment accepts it.
func devToken(args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("dev-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	org := fs.String("org", "", "account (organization) id, required")
	sub := fs.String("sub", "dev-user", "subject")
	scope := fs.String("scope", auth.ScopeRead+" "+auth.ScopeWrite, "space-separated scopes")
	ttl := fs.Duration("ttl", time.Hour, "lifetime")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if *org == "" {
		return fmt.Errorf("%w: dev-token needs --org", errUsage)
	}
	secret := getenv("AUTH_HS256_SECRET")
	if secret == "" {
		return errors.New("dev-token: AUTH_HS256_SECRET is not set")
	}
	token, err := auth.MintDevToken([]byte(secret), auth.DevClaims{
		Org: *org, Subject: *sub, Scopes: strings.Fields(*scope), TTL: *ttl,
		OrgClaim: or(getenv("AUTH_ORG_CLAIM"), "org_id"),
		Issuer:   getenv("AUTH_ISSUER"), Audience: getenv("AUTH_AUDIENCE"),
	}, time.Now())
	if err != nil {
		return fmt.Errorf("dev-token: %w", err)
	}
	fmt.Fprintln(stdout, token)
	return nil
}
