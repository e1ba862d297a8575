package pgcluster

import (
	"errors"
	"io/fs"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartCreatesADatabaseAndStopDeletesTheCluster runs a cluster as the
// benchmark does: PostgreSQL's defaults plus one setting, a database of its
// own, and nothing left behind.
func TestStartCreatesADatabaseAndStopDeletesTheCluster(t *testing.T) {
	c, err := Start([]string{"max_connections=50"})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = c.Stop() // the test failed before its own Stop
		}
	})
	dbURL, err := c.CreateDatabase("bench")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var db, maxConns, fsync string
	err = conn.QueryRow(t.Context(), "SELECT current_database(), current_setting('max_connections'), current_setting('fsync')").Scan(&db, &maxConns, &fsync)
	conn.Close(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if db != "bench" || maxConns != "50" || fsync != "on" {
		t.Errorf("database %s, max_connections %s, fsync %s; want bench, 50 (the setting), on (PostgreSQL's default)", db, maxConns, fsync)
	}
	dir := c.Dir()
	stopped = true
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("cluster directory %s after Stop: %v, want it deleted", dir, err)
	}
}

func TestDatabaseURLReplacesOnlyTheDatabase(t *testing.T) {
	got, err := DatabaseURL("postgres://postgres:secret@127.0.0.1:5432/postgres?sslmode=disable", "t_1")
	if err != nil || got != "postgres://postgres:secret@127.0.0.1:5432/t_1?sslmode=disable" {
		t.Errorf("DatabaseURL = %q, %v", got, err)
	}
	if _, err := DatabaseURL("mysql://x/y", "t_1"); err == nil {
		t.Error("DatabaseURL accepted a mysql:// URL")
	}
}
