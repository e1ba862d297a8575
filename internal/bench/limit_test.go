package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgtest"
)

// The limit copies every read-model table that has rows, by INSERT …
// SELECT and, for information, by COPY FROM of its exported rows, times
// each table, and leaves no copy behind.
func TestTheLimitCopiesEachTableTwiceAndDropsTheCopies(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, stmt := range []string{
		`CREATE TABLE invoices (id int PRIMARY KEY, document json NOT NULL)`,
		`INSERT INTO invoices SELECT g, json_build_object('n', g) FROM generate_series(1, 500) g`,
		`CREATE TABLE companies (id int PRIMARY KEY)`, // empty: not copied
	} {
		if _, err := conn.Exec(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	r, err := measureLimit(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rows != 500 || len(r.Tables) != 1 || !strings.HasPrefix(r.Tables[0], "invoices 500 in ") ||
		len(r.IngestTables) != 1 || !strings.HasPrefix(r.IngestTables[0], "invoices in ") || r.Took <= 0 || r.Ingest <= 0 {
		t.Errorf("report %+v, want the invoices' 500 rows timed twice", r)
	}
	var left []string
	rows, err := conn.Query(ctx, `SELECT relname::text FROM pg_class WHERE relname LIKE '%\_limit' OR relname LIKE '%\_ingest'`)
	if err != nil {
		t.Fatal(err)
	}
	if left, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(left) > 0 {
		t.Errorf("copies left behind: %v (%v)", left, err)
	}
}
