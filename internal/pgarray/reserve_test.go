package pgarray

import (
	"context"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// documentsSQL answers what the server received of eight documents
// arrays: how many documents and their bytes. Eight arrays in one
// statement, as the invoices' INSERT sends its columns.
const documentsSQL = `SELECT count(*), coalesce(sum(octet_length(d)), 0)
	FROM unnest($1::text[] || $2::text[] || $3::text[] || $4::text[] || $5::text[] || $6::text[] || $7::text[] || $8::text[]) AS d`

// columns are a batch's 2,000 documents as eight arrays of 250.
func columns() []any {
	docs := documents()
	cols := make([]any, 8)
	for i := range cols {
		cols[i] = Text(docs[i*250 : (i+1)*250])
	}
	return cols
}

// TestAReservedBatchArrivesWholeAndIsCopiedOnce: the point of Reserve. A
// batch of two statements of eight arrays (8 MB in all) reaches the server
// byte for byte, with and without the reservation. Without it, the write
// buffer regrew at nearly every array, each time to hold all before.
func TestAReservedBatchArrivesWholeAndIsCopiedOnce(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	Register(conn.TypeMap())
	docs, cols := documents(), columns()
	want := int64(0)
	for _, d := range docs {
		want += int64(len(d))
	}
	size := 0.0
	for _, c := range cols {
		size += 2 * float64(c.(Text).encodedSize())
	}
	send := func(reserve bool) float64 {
		b := &pgx.Batch{}
		for range 2 {
			b.Queue(documentsSQL, cols...).QueryRow(func(row pgx.Row) error {
				var n, bytes int64
				if err := row.Scan(&n, &bytes); err != nil {
					return err
				}
				if n != int64(len(docs)) || bytes != want {
					t.Errorf("the server got %d documents of %d bytes, want %d of %d", n, bytes, len(docs), want)
				}
				return nil
			})
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if reserve {
			Reserve(conn.PgConn(), b)
		}
		if err := conn.SendBatch(ctx, b).Close(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return float64(after.TotalAlloc - before.TotalAlloc)
	}
	send(false) // prepares the statement: its first batch flushes before the Binds
	without, with := send(false), send(true)
	if got := send(false); got < 0.8*without { // nothing of the reservation stays behind
		t.Fatalf("a batch after a reserved one allocated %.0f bytes, %.0f before it", got, without)
	}
	// With: pgx's parameter buffer, grown once per array that does not fit
	// (reservePlan), about 3.3× the batch here, and the write buffer once.
	// Without, the write buffer adds about 5× the batch (8.3× in all).
	if with > 0.65*without {
		t.Fatalf("a batch of %.0f bytes allocated %.0f with the reservation (%.1f×) and %.0f without (%.1f×); want at most 0.65 of it with",
			size, with, with/size, without, without/size)
	}
}

// TestSmallBatchesReserveNothing: below minReserve the estimate would cost
// more than the regrowths it saves.
func TestSmallBatchesReserveNothing(t *testing.T) {
	b := &pgx.Batch{}
	b.Queue(documentsSQL, Text{"a", "b"})
	if n := batchSize(b); n >= minReserve {
		t.Fatalf("a two-document batch is estimated at %d bytes", n)
	}
	b.Queue(documentsSQL, columns()...)
	if n, need := batchSize(b), Text(documents()).encodedSize(); n < need {
		t.Fatalf("a batch with %d bytes of documents is estimated at %d", need, n)
	}
}
