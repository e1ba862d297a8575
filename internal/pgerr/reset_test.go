package pgerr_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgerr"
	"github.com/invoicing/invoicing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// Every kind of statement pgx traces resets the pool when the server went
// away, and only then: a query, a batch and a copy.
func TestOutageResetEmptiesThePoolOnlyWhenTheServerWentAway(t *testing.T) {
	gone := &pgconn.PgError{Code: "57P01"}
	refused := &pgconn.PgError{Code: "23505"}
	ends := []struct {
		name string
		end  func(o *pgerr.OutageReset, err error)
	}{
		{"query", func(o *pgerr.OutageReset, err error) {
			o.TraceQueryEnd(context.Background(), nil, pgx.TraceQueryEndData{Err: err})
		}},
		{"batch", func(o *pgerr.OutageReset, err error) {
			o.TraceBatchEnd(context.Background(), nil, pgx.TraceBatchEndData{Err: err})
		}},
		{"copy", func(o *pgerr.OutageReset, err error) {
			o.TraceCopyFromEnd(context.Background(), nil, pgx.TraceCopyFromEndData{Err: err})
		}},
	}
	url := pgtest.NewDatabase(t)
	for _, tt := range ends {
		t.Run(tt.name, func(t *testing.T) {
			pool, o := resetPool(t, url)
			tt.end(o, refused)
			time.Sleep(50 * time.Millisecond)
			if n := pool.Stat().TotalConns(); n == 0 {
				t.Fatalf("a unique violation emptied the pool")
			}
			tt.end(o, gone)
			deadline := time.Now().Add(5 * time.Second)
			for pool.Stat().TotalConns() != 0 {
				if time.Now().After(deadline) {
					t.Fatalf("%d connections left after the server went away, want 0", pool.Stat().TotalConns())
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}

// resetPool is a pool holding an idle connection, with an OutageReset
// attached.
func resetPool(t *testing.T, url string) (*pgxpool.Pool, *pgerr.OutageReset) {
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
	if err := pool.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	return pool, o
}
