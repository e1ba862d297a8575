package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgarray"
	"github.com/invoicing/invoicing/internal/pgtest"
)

// TestPoolConnectionsReserveArraySizes: the projections' batch arrays are
// pgarray's, and only a connection whose type map has pgarray.Register
// encodes them without regrowing pgx's buffer (a sixth of a catch-up's
// service CPU). Every connection the service opens must have it.
func TestPoolConnectionsReserveArraySizes(t *testing.T) {
	pool, err := openPool(t.Context(), pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// Hold each connection until the end, so that the next is another one.
	conns := make([]*pgxpool.Conn, 0, 3)
	defer func() {
		for _, c := range conns {
			c.Release()
		}
	}()
	for range 3 {
		c, err := pool.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		if !pgarray.Registered(c.Conn().TypeMap()) {
			t.Fatal("a pool connection's type map has no pgarray.Register")
		}
	}
}

// TestPoolConnectionsReadWholeThroughTheirBuffer: the read buffer
// (readBufferSize) passes every byte of the protocol, whatever the
// messages' sizes against it: a value larger than the buffer, rows that
// straddle its edges, a notification; and a read cut off by its context
// leaves no connection of the pool out of step with its server.
func TestPoolConnectionsReadWholeThroughTheirBuffer(t *testing.T) {
	ctx := t.Context()
	pool, err := openPool(ctx, pgtest.NewDatabase(t), func(c *pgxpool.Config) { c.MaxConns = 2 })
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	var big string
	if err := pool.QueryRow(ctx, `SELECT repeat('x', $1::int)`, 5*readBufferSize+3).Scan(&big); err != nil || len(big) != 5*readBufferSize+3 {
		t.Fatalf("a value of %d bytes read as %d (%v)", 5*readBufferSize+3, len(big), err)
	}
	const rows = 20000 // of 1 + i % 997 bytes each
	total := 0
	for i := 1; i <= rows; i++ {
		total += 1 + i%997
	}
	result, err := pool.Query(ctx, `SELECT repeat('y', 1 + i % 997) FROM generate_series(1, $1::int) AS i`, rows)
	if err != nil {
		t.Fatal(err)
	}
	got, err := pgx.CollectRows(result, pgx.RowTo[string])
	if err != nil || len(got) != rows || sumLengths(got) != total {
		t.Fatalf("read %d rows of %d bytes (%v), want %d of %d", len(got), sumLengths(got), err, rows, total)
	}
	readCutOff(t, pool)
	notificationThroughTheBuffer(t, pool)
	for range 4 { // both connections, twice: each answers its own statement
		var n int
		if err := pool.QueryRow(ctx, `SELECT 42`).Scan(&n); err != nil || n != 42 {
			t.Fatalf("after the cut-off read, SELECT 42 = %d, %v", n, err)
		}
	}
}

func sumLengths(ss []string) int {
	n := 0
	for _, s := range ss {
		n += len(s)
	}
	return n
}

// readCutOff cancels a query while its rows stream in, a few buffers
// read.
func readCutOff(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	rows, err := pool.Query(ctx, `SELECT repeat('z', 1000) FROM generate_series(1, 1000000)`)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; rows.Next(); n++ {
		if n == 1000 {
			cancel()
		}
	}
	rows.Close()
	if !errors.Is(rows.Err(), context.Canceled) {
		t.Fatalf("the cut-off read ended with %v, want context.Canceled", rows.Err())
	}
}

// notificationThroughTheBuffer listens on one connection and notifies
// from the other.
func notificationThroughTheBuffer(t *testing.T, pool *pgxpool.Pool) {
	t.Helper()
	ctx := t.Context()
	listener, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Release()
	if _, err := listener.Exec(ctx, `LISTEN buffer_test`); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `SELECT pg_notify('buffer_test', repeat('n', 7000))`); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	n, err := listener.Conn().WaitForNotification(waitCtx)
	if err != nil || len(n.Payload) != 7000 {
		t.Fatalf("notification %v, %v; want a payload of 7000 bytes", n, err)
	}
	if _, err := listener.Exec(ctx, `UNLISTEN buffer_test`); err != nil {
		t.Fatal(err)
	}
}
