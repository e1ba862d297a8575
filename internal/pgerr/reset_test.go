package pgerr_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgerr"
	"github.com/invoicing/invoicing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// copyRow copies the row 1 into t.
func copyRow(ctx context.Context, c *pgxpool.Conn) error {
	_, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"x"}, pgx.CopyFromRows([][]any{{1}}))
	return err
}

// statementKinds are the ways the service talks to PostgreSQL, each traced
// by pgx apart: a query, a batch, and a copy (a projection's bulk rows),
// whose first use of a table on a connection describes its columns with a
// prepare first. Each inserts the row 1 into t, after its before step, if
// any, on the same connection.
var statementKinds = []struct {
	name   string
	before func(ctx context.Context, c *pgxpool.Conn) error
	run    func(ctx context.Context, c *pgxpool.Conn) error
}{
	{name: "query", run: func(ctx context.Context, c *pgxpool.Conn) error {
		_, err := c.Exec(ctx, `INSERT INTO t VALUES (1)`)
		return err
	}},
	{name: "batch", run: func(ctx context.Context, c *pgxpool.Conn) error {
		b := &pgx.Batch{}
		b.Queue(`INSERT INTO t VALUES (1)`)
		return c.SendBatch(ctx, b).Close()
	}},
	{name: "copy, its columns described first", run: copyRow},
	{name: "copy, its columns described before", before: func(ctx context.Context, c *pgxpool.Conn) error {
		_, err := c.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"x"}, pgx.CopyFromRows(nil))
		return err
	}, run: copyRow},
}

// A statement that finds its backend gone empties the pool, whichever kind
// it is: the idle connection beside it, which pgx would otherwise find
// dead only by failing one more request, is closed too.
func TestOutageResetEmptiesThePoolWhenAStatementFindsTheServerGone(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	for _, kind := range statementKinds {
		t.Run(kind.name, func(t *testing.T) {
			pool, used := usedConnection(t, url, kind.before)
			if _, err := pool.Exec(ctx, `SELECT pg_terminate_backend($1)`, used.Conn().PgConn().PID()); err != nil {
				t.Fatal(err)
			}
			if err := kind.run(ctx, used); !pgerr.Unavailable(err) {
				t.Fatalf("%s on a terminated backend = %v, want an error Unavailable recognises", kind.name, err)
			}
			used.Release()
			deadline := time.Now().Add(5 * time.Second)
			for pool.Stat().TotalConns() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d connections left after a %s found the server gone, want 0", pool.Stat().TotalConns(), kind.name)
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// A statement the server refuses says nothing about the server: the pool
// keeps its connections.
func TestOutageResetKeepsThePoolWhenAStatementIsRefused(t *testing.T) {
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	for _, kind := range statementKinds {
		t.Run(kind.name, func(t *testing.T) {
			pool, used := usedConnection(t, url, kind.before)
			if err := kind.run(ctx, used); err == nil || pgerr.Unavailable(err) {
				t.Fatalf("%s of a duplicate key = %v, want a refusal", kind.name, err)
			}
			used.Release()
			time.Sleep(100 * time.Millisecond)
			if n := pool.Stat().TotalConns(); n != 2 {
				t.Fatalf("%d connections after a refused %s, want the 2 kept", n, kind.name)
			}
		})
	}
}

// resetPool is a pool with an OutageReset attached, over a database
// holding t with the row 1.
func resetPool(t *testing.T, url string) *pgxpool.Pool {
	t.Helper()
	o := &pgerr.OutageReset{}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.Tracer = o
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	o.Attach(pool)
	_, err = pool.Exec(context.Background(), `CREATE TABLE IF NOT EXISTS t (x int PRIMARY KEY); INSERT INTO t VALUES (1) ON CONFLICT DO NOTHING`)
	if err != nil {
		t.Fatal(err)
	}
	return pool
}

// usedConnection is a pool with an OutageReset attached (resetPool)
// holding two connections: one idle, and the other acquired, which it
// returns after before, if any, ran on it.
func usedConnection(t *testing.T, url string, before func(context.Context, *pgxpool.Conn) error) (*pgxpool.Pool, *pgxpool.Conn) {
	t.Helper()
	pool := resetPool(t, url)
	var conns [2]*pgxpool.Conn
	for i := range conns {
		c, err := pool.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
	}
	conns[1].Release()
	if before != nil {
		if err := before(context.Background(), conns[0]); err != nil {
			t.Fatal(err)
		}
	}
	return pool, conns[0]
}
