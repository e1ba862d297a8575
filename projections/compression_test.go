package projections

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// An invoice of many lines passes PostgreSQL's 2 KB threshold: its
// documents are compressed with lz4 (schema/invoices.sql), on a live table
// from before too once migration 006 ran, and read back as projected.
func TestInvoiceDocumentsAreCompressedWithLZ4(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	old := manyLines(draftedInvoice(time.Now().UTC()), 40)
	_, _, pos := appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, old)
	runAll(t, e, pos)
	if got := compressionOf(t, e, old.InvoiceID); got != "lz4" {
		t.Fatalf("a fresh install compresses the lines with %q, want lz4", got)
	}

	// A live table from before: pglz, as PostgreSQL's default, then the
	// migration as a database from before would run it.
	for _, col := range []string{"customer", "issuer", "lines", "document"} {
		if _, err := e.pool.Exec(ctx, `ALTER TABLE invoices ALTER COLUMN `+col+` SET COMPRESSION pglz`); err != nil {
			t.Fatal(err)
		}
	}
	migration, err := migrations.ReadFile("migrations/006_invoices_lz4.sql")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.pool.Exec(ctx, string(migration)); err != nil {
		t.Fatalf("migration 006: %v", err)
	}
	next := manyLines(draftedInvoice(time.Now().UTC()), 40)
	_, data, pos := appendEvent(t, e.store, "invoice", events.TypeInvoiceDrafted, next)
	runAll(t, e, pos)
	if got := compressionOf(t, e, next.InvoiceID); got != "lz4" {
		t.Fatalf("after migration 006 the lines are compressed with %q, want lz4", got)
	}
	if got, want := readInvoice(t, e.pool, next.InvoiceID).Lines, eventMember(t, data, "lines"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("lines read back as %v, want %v", got, want)
	}
}

// manyLines gives d n lines, which makes its row pass 2 KB.
func manyLines(d events.InvoiceDrafted, n int) events.InvoiceDrafted {
	line := d.Lines[0]
	d.Lines = nil
	for i := range n {
		line.Position, line.Description = i+1, fmt.Sprintf("Consulting, work package %d", i+1)
		d.Lines = append(d.Lines, line)
	}
	return d
}

func compressionOf(t *testing.T, e env, id string) string {
	t.Helper()
	var method *string
	if err := e.pool.QueryRow(context.Background(), `SELECT pg_column_compression(lines) FROM invoices WHERE id = $1`, id).Scan(&method); err != nil {
		t.Fatal(err)
	}
	if method == nil {
		return "none"
	}
	return *method
}
