package main

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/invoicing/invoicing/events/esdb"
)

// config is every setting of `serve`, read once from the environment.
type config struct {
	HTTPAddr      string
	DatabaseURL   string
	EventStoreURL string
	MaxBodyBytes  int64
	LogLevel      slog.Level
	Auth          authConfig
	ShutdownGrace time.Duration
	WaitTimeout   time.Duration
}

type authConfig struct {
	HS256Secret string
	JWKSURL     string
	Issuer      string
	Audience    string
	OrgClaim    string
}

func loadConfig(getenv func(string) string) (config, error) {
	cfg := config{
		HTTPAddr:      or(getenv("HTTP_ADDR"), ":8080"),
		DatabaseURL:   getenv("DATABASE_URL"),
		EventStoreURL: getenv("EVENTSTORE_URL"),
		MaxBodyBytes:  1 << 20,
		ShutdownGrace: 30 * time.Second,
		WaitTimeout:   5 * time.Second,
		Auth: authConfig{
			HS256Secret: getenv("AUTH_HS256_SECRET"),
			JWKSURL:     getenv("AUTH_JWKS_URL"),
			Issuer:      getenv("AUTH_ISSUER"),
			Audience:    getenv("AUTH_AUDIENCE"),
			OrgClaim:    or(getenv("AUTH_ORG_CLAIM"), "org_id"),
		},
	}
	var problems []error
	if cfg.DatabaseURL == "" {
		problems = append(problems, errors.New("DATABASE_URL is required (make run supplies a local one)"))
	}
	if cfg.Auth.HS256Secret == "" && cfg.Auth.JWKSURL == "" {
		problems = append(problems, errors.New("set AUTH_JWKS_URL or AUTH_HS256_SECRET: no token could be verified"))
	}
	if v := getenv("MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			problems = append(problems, fmt.Errorf("MAX_BODY_BYTES=%q: want a positive integer", v))
		}
		cfg.MaxBodyBytes = n
	}
	if err := cfg.LogLevel.UnmarshalText([]byte(or(getenv("LOG_LEVEL"), "info"))); err != nil {
		problems = append(problems, fmt.Errorf("LOG_LEVEL: %w", err))
	}
	if u := cfg.EventStoreURL; u != "" && !esdb.IsConnectionString(u) {
		// Only the scheme is echoed: the rest may hold a password.
		scheme, _, _ := strings.Cut(u, "://")
		problems = append(problems, fmt.Errorf("EVENTSTORE_URL: scheme %q: want an esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover:// connection string", scheme))
	}
	if err := errors.Join(problems...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
