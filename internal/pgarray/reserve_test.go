package pgarray

import (
	"context"
	"runtime"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// connect connects to a new database until the test ends.
func connect(t *testing.T) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := conn.Close(ctx); err != nil {
			t.Error(err)
		}
	})
	return conn
}

// documentsSQL answers what the server received of nine documents
// arrays: how many documents and their bytes. Nine arrays in one
// statement, as the invoices' INSERT sends its columns.
const documentsSQL = `SELECT count(*), coalesce(sum(octet_length(d)), 0)
	FROM unnest($1::text[] || $2::text[] || $3::text[] || $4::text[] || $5::text[] || $6::text[] || $7::text[] || $8::text[] || $9::text[]) AS d`

// columns are a batch's 2,000 documents as eight arrays of 250, and the
// first 250 again, in the middle, as a []*string: an array pgx encodes
// without reservePlan, as it does the invoices' nullable columns.
func columns() []any {
	docs := documents()
	cols := make([]any, 0, 9)
	for i := range 8 {
		cols = append(cols, Text(docs[i*250:(i+1)*250]))
	}
	nullable := make([]*string, 250)
	for i := range nullable {
		nullable[i] = &docs[i]
	}
	return slices.Insert(cols, 4, any(nullable))
}

// TestAReservedBatchArrivesWholeAndIsCopiedOnce: the point of Reserve. A
// batch of two statements of nine arrays (9 MB in all) reaches the server
// byte for byte, with and without the reservation. Without it, the write
// buffer regrew at nearly every array, each time to hold all before, and
// so did pgx's parameter buffer of each statement.
func TestAReservedBatchArrivesWholeAndIsCopiedOnce(t *testing.T) {
	ctx, conn := context.Background(), connect(t)
	Register(conn.TypeMap())
	docs, cols := documents(), columns()
	wantN, wantBytes := int64(len(docs)+250), int64(0)
	for i, d := range docs {
		wantBytes += int64(len(d))
		if i < 250 {
			wantBytes += int64(len(d))
		}
	}
	size := 2 * float64(argumentsSize(cols))
	send := func(reserve bool) float64 {
		b := &pgx.Batch{}
		for range 2 {
			b.Queue(documentsSQL, cols...).QueryRow(func(row pgx.Row) error {
				var n, bytes int64
				if err := row.Scan(&n, &bytes); err != nil {
					return err
				}
				if n != wantN || bytes != wantBytes {
					t.Errorf("the server got %d documents of %d bytes, want %d of %d", n, bytes, wantN, wantBytes)
				}
				return nil
			})
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if reserve {
			Reserve(conn, b)
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
	if _, ok := cols[0].(Text); !ok { // leading marks the batch's arguments, not the caller's
		t.Fatalf("Reserve changed the caller's first argument into a %T", cols[0])
	}
	// Without: the write buffer regrown at nearly every array, and pgx's
	// parameter buffer at each array that does not fit (reservePlan): 7.3×
	// the batch here. With: the write buffer once, and each statement's
	// parameter buffer once, at its leading array: 2.2× (4.0× when only
	// the write buffer was reserved, 4.8× when the leading array's room
	// left out the []*string).
	t.Logf("a batch of %.0f bytes: %.1f× with the reservation, %.1f× without", size, with/size, without/size)
	if with > 2.6*size || with > 0.65*without {
		t.Fatalf("a batch of %.0f bytes allocated %.0f with the reservation (%.1f×) and %.0f without (%.1f×); want at most 2.6× and 0.65 of it with",
			size, with, with/size, without, without/size)
	}
}

// TestSmallBatchesReserveNothing: below minReserve the estimate would cost
// more than the regrowths it saves.
func TestSmallBatchesReserveNothing(t *testing.T) {
	b := &pgx.Batch{}
	b.Queue(documentsSQL, Text{"a", "b"})
	if _, n := statementSizes(b); n >= minReserve {
		t.Fatalf("a two-document batch is estimated at %d bytes", n)
	}
	b.Queue(documentsSQL, columns()...)
	need := Text(documents()).encodedSize()
	if _, n := statementSizes(b); n < need {
		t.Fatalf("a batch with %d bytes of documents is estimated at %d", need, n)
	}
}

// TestAnUnregisteredConnectionSendsItsBatchAsItWas: pgx could not encode a
// leading array on a map without Register, so Reserve leads none there,
// and the batch still arrives whole.
func TestAnUnregisteredConnectionSendsItsBatchAsItWas(t *testing.T) {
	ctx, conn := context.Background(), connect(t)
	b := &pgx.Batch{}
	var n, bytes int64
	b.Queue(documentsSQL, columns()...).QueryRow(func(row pgx.Row) error { return row.Scan(&n, &bytes) })
	Reserve(conn, b)
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	if n != int64(len(documents())+250) {
		t.Fatalf("the server got %d documents, want %d", n, len(documents())+250)
	}
}
