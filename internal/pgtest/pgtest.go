// Package pgtest gives tests a real, empty PostgreSQL database.
//
// Every test that touches SQL runs against PostgreSQL, never a fake and never
// skipped. If TEST_DATABASE_URL is set, databases are created on that server
// (it must be an admin connection string). Otherwise the first call to
// NewDatabase in a test binary starts a throwaway cluster from the system's
// PostgreSQL binaries; Main stops it when the tests are done.
//
// A test that injects outages uses NewServer instead: a cluster of its own,
// which it can stop (StopImmediate) and start again (Start). Those tests
// are skipped when TEST_DATABASE_URL is set, as only a server this process
// started may be stopped.
//
// Use it from a test package like this:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestSomething(t *testing.T) {
//		pool, err := pgxpool.New(t.Context(), pgtest.NewDatabase(t))
//		...
//	}
//
// The clusters themselves are internal/pgcluster's, which programs such as
// the benchmark use directly.
package pgtest

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgcluster"
)

// EnvURL names the environment variable holding an admin connection string to
// an existing server; when set, no cluster is started.
const EnvURL = "TEST_DATABASE_URL"

// EnvBin names the environment variable that points at a directory holding
// the initdb and postgres binaries.
const EnvBin = pgcluster.EnvBin

// serverSettings favour speed over durability: the cluster is thrown away.
var serverSettings = []string{
	"fsync=off",
	"synchronous_commit=off",
	"full_page_writes=off",
	"max_connections=300",
	"shared_buffers=128MB",
	// Segments in the data directory rather than /dev/shm: nothing is left in
	// /dev/shm by a killed run, and a small /dev/shm (64 MB in Docker) is no
	// limit on parallel queries.
	"dynamic_shared_memory_type=mmap",
}

// The cluster is started at most once per test binary. Package state is
// acceptable here: a test binary is one process and Main owns its lifetime.
var (
	startOnce sync.Once
	started   *pgcluster.Cluster
	adminURL  string
	startErr  error
)

// Main runs m and stops any server started for it; call from TestMain:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// Without Main the server is still killed when the test binary exits (the
// kernel delivers SIGKILL to it), but its temporary directory is left behind.
func Main(m *testing.M) {
	code := m.Run()
	if started != nil {
		if err := started.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "pgtest: stopping PostgreSQL: %v\n", err)
		}
	}
	os.Exit(code)
}

// NewDatabase creates a fresh, empty database for t, drops it in t.Cleanup,
// and returns its connection string (a postgres:// URL usable by pgxpool.New).
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin, err := serverURL()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	name, err := createDatabase(admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	dbURL, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		drop := "DROP DATABASE IF EXISTS " + pgx.Identifier{name}.Sanitize() + " WITH (FORCE)"
		if err := pgcluster.ExecAdmin(admin, drop); err != nil {
			t.Errorf("pgtest: dropping database %s: %v", name, err)
		}
	})
	return dbURL
}

// serverURL returns the admin connection string, starting the throwaway
// cluster on first use when TEST_DATABASE_URL is unset.
func serverURL() (string, error) {
	if u := os.Getenv(EnvURL); u != "" {
		return u, nil
	}
	startOnce.Do(func() {
		started, startErr = pgcluster.Start(serverSettings)
		if startErr == nil {
			adminURL = started.URL()
		}
	})
	return adminURL, startErr
}

// createDatabase creates a database with a fresh random name on the server
// of admin and returns the name.
func createDatabase(admin string) (string, error) {
	name, err := randomName()
	if err != nil {
		return "", err
	}
	if _, err := withDatabase(admin, name); err != nil {
		return "", err
	}
	if err := pgcluster.ExecAdmin(admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("creating database %s: %w", name, err)
	}
	return name, nil
}

// randomName returns a database name unique to one test: t_<16 hex digits>.
func randomName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("random database name: %w", err)
	}
	return "t_" + hex.EncodeToString(b[:]), nil
}

// withDatabase returns admin with its database replaced by name.
func withDatabase(admin, name string) (string, error) {
	dbURL, err := pgcluster.DatabaseURL(admin, name)
	if err != nil {
		return "", fmt.Errorf("%s must be a postgres:// URL, e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable: %w", EnvURL, err)
	}
	return dbURL, nil
}
