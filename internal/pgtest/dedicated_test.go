package pgtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

func TestServer_immediateStopKeepsCommitsAndRestartsOnTheSamePort(t *testing.T) {
	srv := NewServer(t)
	admin := srv.URL()
	dbURL := srv.NewDatabase(t)
	setup := connect(t, dbURL)
	if _, err := setup.Exec(t.Context(), "CREATE TABLE kept (n int)"); err != nil {
		t.Fatal(err)
	}

	for cycle := 1; cycle <= 2; cycle++ {
		committed := connect(t, dbURL)
		if _, err := committed.Exec(t.Context(), "INSERT INTO kept VALUES ($1)", cycle); err != nil {
			t.Fatal(err)
		}
		open := connect(t, dbURL)
		tx, err := open.Begin(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(t.Context(), "INSERT INTO kept VALUES (-1)"); err != nil {
			t.Fatal(err)
		}

		srv.StopImmediate() // at once after the commit: it must survive anyway

		if _, err := committed.Exec(t.Context(), "SELECT 1"); err == nil {
			t.Errorf("cycle %d: a session opened before the stop still answers", cycle)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
		conn, err := pgx.Connect(ctx, dbURL)
		cancel()
		if err == nil {
			conn.Close(context.Background())
			t.Fatalf("cycle %d: connected to a stopped server", cycle)
		}

		before := time.Now()
		accepted := srv.Start()
		if accepted.Before(before) || accepted.After(time.Now()) {
			t.Errorf("cycle %d: Start returned %v, not between its call (%v) and its return", cycle, accepted, before)
		}
		if got := srv.URL(); got != admin {
			t.Errorf("cycle %d: URL after restart = %s, want the same as before, %s", cycle, got, admin)
		}

		var got []int
		rows, err := connect(t, dbURL).Query(t.Context(), "SELECT n FROM kept ORDER BY n")
		if err != nil {
			t.Fatal(err)
		}
		if got, err = pgx.CollectRows(rows, pgx.RowTo[int]); err != nil {
			t.Fatal(err)
		}
		if len(got) != cycle || got[cycle-1] != cycle {
			t.Errorf("cycle %d: rows after restart = %v; want 1..%d (committed rows kept, the open transaction's -1 gone)", cycle, got, cycle)
		}
	}
	if log := srv.srv.LogTail(); !strings.Contains(log, "not properly shut down") {
		t.Errorf("the server log does not show crash recovery, so the stop was not immediate:\n%s", log)
	}
}

func TestNewServer_skipsWhenTheServerIsExternal(t *testing.T) {
	t.Setenv(EnvURL, "postgres://postgres@127.0.0.1:1/postgres?sslmode=disable")
	var skipped bool
	t.Run("external", func(t *testing.T) {
		defer func() { skipped = t.Skipped() }()
		NewServer(t)
		t.Error("NewServer returned a server although TEST_DATABASE_URL is set")
	})
	if !skipped {
		t.Error("NewServer did not skip the test")
	}
}
