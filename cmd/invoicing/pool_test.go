package main

import (
	"testing"

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
