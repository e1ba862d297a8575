package pgtest

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func connect(t *testing.T, dbURL string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatalf("connect %s: %v", dbURL, err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

func TestNewDatabase_serverAnswersSelect1(t *testing.T) {
	conn := connect(t, NewDatabase(t))
	var one int
	if err := conn.QueryRow(t.Context(), "SELECT 1").Scan(&one); err != nil {
		t.Fatalf("SELECT 1: %v", err)
	}
	if one != 1 {
		t.Errorf("SELECT 1 = %d, want 1", one)
	}
}

func TestNewDatabase_twoCallsGiveIsolatedEmptyDatabases(t *testing.T) {
	urlA, urlB := NewDatabase(t), NewDatabase(t)
	if urlA == urlB {
		t.Fatalf("both calls returned %s", urlA)
	}
	a, b := connect(t, urlA), connect(t, urlB)

	if _, err := a.Exec(t.Context(), "CREATE TABLE only_in_a (id int)"); err != nil {
		t.Fatalf("create table in A: %v", err)
	}
	var nameA, nameB string
	var tablesInB int
	if err := a.QueryRow(t.Context(), "SELECT current_database()").Scan(&nameA); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(t.Context(), "SELECT current_database()").Scan(&nameB); err != nil {
		t.Fatal(err)
	}
	if nameA == nameB || !strings.HasPrefix(nameA, "t_") || !strings.HasPrefix(nameB, "t_") {
		t.Errorf("database names = %q, %q, want two distinct t_<hex> names", nameA, nameB)
	}
	q := "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
	if err := b.QueryRow(t.Context(), q).Scan(&tablesInB); err != nil {
		t.Fatal(err)
	}
	if tablesInB != 0 {
		t.Errorf("database B has %d public tables, want 0 (A's table leaked)", tablesInB)
	}
}

func TestNewDatabase_cleanupDropsTheDatabase(t *testing.T) {
	var name string
	var open *pgx.Conn // still connected when the drop runs: WITH (FORCE) must cope
	t.Run("uses a database", func(t *testing.T) {
		dbURL := NewDatabase(t)
		u, err := url.Parse(dbURL)
		if err != nil {
			t.Fatal(err)
		}
		name = strings.TrimPrefix(u.Path, "/")
		if open, err = pgx.Connect(t.Context(), dbURL); err != nil {
			t.Fatal(err)
		}
	})
	if open != nil {
		defer open.Close(context.Background())
	}
	admin, err := serverURL()
	if err != nil {
		t.Fatal(err)
	}
	conn := connect(t, admin)
	var exists bool
	q := "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)"
	if err := conn.QueryRow(t.Context(), q, name).Scan(&exists); err != nil {
		t.Fatal(err)
	}
	if exists {
		t.Errorf("database %s still exists after its test's cleanup", name)
	}
}
