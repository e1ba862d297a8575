package projections

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Two builds of the invoices' schema at once (a rebuild's shadow and an
// audit's scratch copy, say) both create the summary function in public:
// the second waits for the first instead of failing when it commits.
func TestSchemasBuiltAtOnceShareTheirFunctions(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	for _, s := range []string{"first_build", "second_build"} {
		if _, err := e.pool.Exec(ctx, "CREATE SCHEMA "+s); err != nil {
			t.Fatal(err)
		}
	}
	first, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Rollback(ctx)
	if err := create(ctx, first, Invoices{}, "first_build"); err != nil {
		t.Fatal(err)
	}
	second := make(chan error, 1)
	go func() {
		second <- pgx.BeginFunc(ctx, e.pool, func(tx pgx.Tx) error { return create(ctx, tx, Invoices{}, "second_build") })
	}()
	time.Sleep(300 * time.Millisecond) // the second build reaches the function
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-second; err != nil {
		t.Fatalf("the second build: %v", err)
	}
}
