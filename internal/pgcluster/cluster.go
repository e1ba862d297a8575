// Package pgcluster starts a throwaway PostgreSQL cluster from the system's
// binaries, for programs and tests alike: internal/pgtest builds its test
// databases and outage servers on it, and the benchmark (internal/bench)
// starts one with PostgreSQL's default durability. Nothing here needs a
// testing.TB, and nothing here reads TEST_DATABASE_URL: a caller that asks
// for a cluster gets one of its own.
package pgcluster

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvBin names the environment variable that points at a directory holding
// the initdb and postgres binaries.
const EnvBin = "PG_BIN"

// envTestURL is internal/pgtest's way to use a running server instead of a
// cluster; the hints of this package's errors name it, as most of its
// callers are tests.
const envTestURL = "TEST_DATABASE_URL"

// ddlTimeout bounds one admin statement (CREATE and DROP DATABASE).
const ddlTimeout = time.Minute

// URL returns the admin connection string (user postgres, database
// postgres, trust authentication on 127.0.0.1). It stays the same across
// StopImmediate and Restart.
func (s *Cluster) URL() string { return s.url }

// Port returns the 127.0.0.1 port the server listens on.
func (s *Cluster) Port() int { return s.port }

// PID returns the postmaster's process id; the backends are its children.
func (s *Cluster) PID() int { return s.proc.Pid }

// BinDir returns the directory holding the server binaries that started
// it; on Debian and Ubuntu the client tools (psql, pgbench) are there too.
func (s *Cluster) BinDir() string { return s.bin }

// Dir returns the cluster's temporary directory (data/, sock/,
// postgres.log), deleted by Stop.
func (s *Cluster) Dir() string { return s.dir }

// LogPath returns the server log, where the postmaster's stderr goes.
func (s *Cluster) LogPath() string { return filepath.Join(s.dir, "postgres.log") }

// CreateDatabase creates the database name and returns its connection
// string.
func (s *Cluster) CreateDatabase(name string) (string, error) {
	dbURL, err := DatabaseURL(s.url, name)
	if err != nil {
		return "", err
	}
	if err := ExecAdmin(s.url, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgcluster: creating database %s: %w", name, err)
	}
	return dbURL, nil
}

// DatabaseURL returns the postgres:// URL admin with its database replaced
// by name.
func DatabaseURL(admin, name string) (string, error) {
	u, err := url.Parse(admin)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return "", fmt.Errorf("not a postgres:// URL: %s", Redact(admin))
	}
	u.Path = "/" + name
	u.RawPath = ""
	return u.String(), nil
}

// ExecAdmin runs one statement on a short-lived connection to admin, within
// a minute. CREATE and DROP DATABASE cannot run inside a transaction, so no
// pool and no transaction. It takes no context: test cleanups call it when
// the test's context is already cancelled.
func ExecAdmin(admin, sql string) error {
	ctx, cancel := context.WithTimeout(context.Background(), ddlTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", Redact(admin), err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, sql)
	return err
}

// Redact hides a password in a connection URL used in an error message.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable connection string)"
	}
	return u.Redacted()
}
