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

// sender sends batches of two statements of columns (8 MB) on a
// connection of its own, checks what the server received, and returns the
// bytes allocated meanwhile.
type sender struct {
	t    *testing.T
	conn *pgx.Conn
	cols []any
	size float64 // the batch's encoded arrays
}

func newSender(t *testing.T, register bool) *sender {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	if register {
		Register(conn.TypeMap())
	}
	s := &sender{t: t, conn: conn, cols: columns()}
	for _, c := range s.cols {
		s.size += 2 * float64(c.(Text).encodedSize())
	}
	s.send(false, nil) // prepares the statement: its first batch flushes before the Binds
	return s
}

func (s *sender) send(reserve bool, bs *Buffers) float64 {
	want := int64(0)
	for _, d := range documents() {
		want += int64(len(d))
	}
	b := &pgx.Batch{}
	for range 2 {
		b.Queue(documentsSQL, s.cols...).QueryRow(func(row pgx.Row) error {
			var n, bytes int64
			if err := row.Scan(&n, &bytes); err != nil {
				return err
			}
			if n != 2000 || bytes != want {
				s.t.Errorf("the server got %d documents of %d bytes, want 2000 of %d", n, bytes, want)
			}
			return nil
		})
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if reserve {
		Reserve(s.conn, b, bs)
	}
	err := s.conn.SendBatch(context.Background(), b).Close()
	bs.Done()
	runtime.ReadMemStats(&after)
	if err != nil {
		s.t.Fatal(err)
	}
	return float64(after.TotalAlloc - before.TotalAlloc)
}

// TestAReservedBatchArrivesWholeAndIsCopiedOnce: the point of Reserve. A
// batch of two statements of eight arrays reaches the server byte for
// byte, with and without the reservation, and the reservation cuts what
// sending it allocates by four.
func TestAReservedBatchArrivesWholeAndIsCopiedOnce(t *testing.T) {
	s := newSender(t, true)
	without, with := s.send(false, nil), s.send(true, nil)
	if got := s.send(false, nil); got < 0.8*without { // nothing of the reservation stays behind
		t.Fatalf("a batch after a reserved one allocated %.0f bytes, %.0f before it", got, without)
	}
	// With: pgx's parameter buffer grown once per statement (the leading
	// array), then the write buffer once, about 2.1× the batch. Without:
	// the parameter buffer grown at every other array (3.3×), and the write
	// buffer at nearly every one (5×): 8.3× in all.
	if with > 2.5*s.size {
		t.Fatalf("a batch of %.0f bytes allocated %.0f with the reservation (%.1f×), %.0f without (%.1f×); want at most 2.5× with",
			s.size, with, with/s.size, without, without/s.size)
	}
}

// TestKeptBuffersServeTheNextBatch: with Buffers, the second batch takes
// its statements' parameter buffers from the first, and allocates about
// its write buffer alone.
func TestKeptBuffersServeTheNextBatch(t *testing.T) {
	s := newSender(t, true)
	bs := &Buffers{}
	first, second := s.send(true, bs), s.send(true, bs)
	if second > 1.5*s.size || len(bs.free) == 0 || len(bs.lent) != 0 {
		t.Fatalf("a batch of %.0f bytes allocated %.0f the first time and %.0f the second; %d buffers kept, %d lent; want at most 1.5× the second time",
			s.size, first, second, len(bs.free), len(bs.lent))
	}
	small := &pgx.Batch{}
	small.Queue(documentsSQL, Text{"a"}, Text{}, Text{}, Text{}, Text{}, Text{}, Text{}, Text{})
	Reserve(s.conn, small, bs)
	if len(bs.free) != 0 {
		t.Fatalf("%d buffers still kept after a small batch", len(bs.free))
	}
}

// TestAnUnregisteredConnectionIsReservedWithoutMarks: pgx could not
// encode a leading array on a Map without Register (it knows no plan for
// it); the batch goes as before, with its write buffer's room.
func TestAnUnregisteredConnectionIsReservedWithoutMarks(t *testing.T) {
	s := newSender(t, false)
	s.send(true, &Buffers{})
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

// TestLeadingMarksACopyOnce: the caller's argument slice is left as it
// was (a later batch of the same arguments starts unmarked), and marking
// a batch again, as a retried batch is, does not wrap a mark in a mark.
func TestLeadingMarksACopyOnce(t *testing.T) {
	cols := columns()
	statement := 0
	for _, c := range cols {
		statement += c.(Text).encodedSize()
	}
	b := &pgx.Batch{}
	b.Queue(documentsSQL, cols...)
	for range 2 {
		lead(b, nil)
		l, ok := b.QueuedQueries[0].Arguments[0].(leading)
		if !ok || l.statement != statement {
			t.Fatalf("the statement's first array is %T, want leading with room for %d bytes", b.QueuedQueries[0].Arguments[0], statement)
		}
		if _, nested := l.sized.(leading); nested {
			t.Fatal("a marked batch marked again wraps its mark")
		}
	}
	if _, ok := cols[0].(Text); !ok {
		t.Fatalf("the caller's first argument became %T", cols[0])
	}
}
