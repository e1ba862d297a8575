package pgtest

import (
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Cluster is a throwaway PostgreSQL cluster for a program rather than a
// test: the benchmark harness under bench/ starts one with PostgreSQL's
// default durability. It starts like the test clusters (system binaries, a
// new temporary directory, a free 127.0.0.1 port, an unprivileged user when
// root), but with the caller's settings only, none of the test cluster's
// speed-over-durability ones. Nothing here needs a testing.TB.
//
// Stop it when done. If the program dies first, the kernel kills the
// postmaster (Linux) and the next start of any pgtest cluster deletes the
// directory.
type Cluster struct {
	srv *server
}

// StartCluster initialises and starts a cluster whose postmaster gets each
// of settings as a -c option (e.g. "max_connections=200"). With no settings
// the server runs with PostgreSQL's defaults: fsync, synchronous_commit and
// full_page_writes on. TEST_DATABASE_URL is not consulted: a program that
// asks for a cluster gets one of its own.
func StartCluster(settings []string) (*Cluster, error) {
	srv, err := startServerWith(slices.Clone(settings))
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	return &Cluster{srv: srv}, nil
}

// URL returns the admin connection string (user postgres, database
// postgres, trust authentication on 127.0.0.1).
func (c *Cluster) URL() string { return c.srv.url }

// Port returns the 127.0.0.1 port the server listens on.
func (c *Cluster) Port() int { return c.srv.port }

// PID returns the postmaster's process id; the backends are its children.
func (c *Cluster) PID() int { return c.srv.proc.Pid }

// BinDir returns the directory holding the server binaries that started
// it; on Debian and Ubuntu the client tools (psql, pgbench) are there too.
func (c *Cluster) BinDir() string { return c.srv.bin }

// Dir returns the cluster's temporary directory (data/, sock/,
// postgres.log), deleted by Stop.
func (c *Cluster) Dir() string { return c.srv.dir }

// LogPath returns the server log, where the postmaster's stderr goes.
func (c *Cluster) LogPath() string { return c.srv.logPath() }

// CreateDatabase creates the database name and returns its connection
// string.
func (c *Cluster) CreateDatabase(name string) (string, error) {
	dbURL, err := withDatabase(c.srv.url, name)
	if err != nil {
		return "", err
	}
	if err := execAdmin(c.srv.url, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("pgtest: creating database %s: %w", name, err)
	}
	return dbURL, nil
}

// Stop shuts the server down fast (SIGINT, SIGKILL after 10 s) and deletes
// its directory.
func (c *Cluster) Stop() error { return c.srv.stop() }
