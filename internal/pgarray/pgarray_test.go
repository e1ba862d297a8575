package pgarray

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
)

// documents are 2,000 rendered invoices' worth of text, as a catch-up's
// batch sends them.
func documents() []string {
	docs := make([]string, 2000)
	for i := range docs {
		docs[i] = fmt.Sprintf(`{"n":%d,"é":"%s"}`, i, strings.Repeat("x", 2000))
	}
	docs[1] = ""
	return docs
}

func registered() *pgtype.Map {
	m := pgtype.NewMap()
	Register(m)
	return m
}

func TestRegisteredTellsARegisteredMap(t *testing.T) {
	if !Registered(registered()) || Registered(pgtype.NewMap()) {
		t.Fatal("Registered does not tell a map with Register from one without")
	}
}

// TestSizedArraysEncodeAsTheirSlices: with Register or without, a Text or
// an Int64 is encoded byte for byte as the slice, and with it the buffer
// is grown once, to at least the whole array.
func TestSizedArraysEncodeAsTheirSlices(t *testing.T) {
	docs, ints := documents(), []int64{0, -1, 1 << 62, 42}
	for _, c := range []struct {
		name  string
		oid   uint32
		value any
		plain any
	}{
		{"text", pgtype.TextArrayOID, Text(docs), docs},
		{"empty text", pgtype.TextArrayOID, Text{}, []string{}},
		{"int64", pgtype.Int8ArrayOID, Int64(ints), ints},
	} {
		t.Run(c.name, func(t *testing.T) {
			want, err := pgtype.NewMap().Encode(c.oid, pgtype.BinaryFormatCode, c.plain, nil)
			if err != nil {
				t.Fatal(err)
			}
			for name, m := range map[string]*pgtype.Map{"registered": registered(), "plain map": pgtype.NewMap()} {
				got, err := m.Encode(c.oid, pgtype.BinaryFormatCode, c.value, []byte("prefix"))
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if !bytes.Equal(got[len("prefix"):], want) {
					t.Fatalf("%s: %d bytes differ from the slice's %d", name, len(got)-len("prefix"), len(want))
				}
			}
			if size := c.value.(sized).encodedSize(); size < len(want) {
				t.Fatalf("encodedSize %d, encoding %d bytes: the reservation is short", size, len(want))
			}
		})
	}
}

// TestRegisteredMapGrowsTheBufferOnce: the point of the package. Encoding
// 2,000 documents into pgx's 256-byte buffer allocates about the array's
// size with Register, where pgx alone regrows the buffer by quarters and
// allocates five times that.
func TestRegisteredMapGrowsTheBufferOnce(t *testing.T) {
	docs := Text(documents())
	m := registered()
	size := float64(docs.encodedSize())
	with, without := allocatedBytes(t, m, docs), allocatedBytes(t, m, []string(docs))
	if with > 1.2*size || without < 3*size {
		t.Fatalf("allocated %.0f bytes with the reservation, %.0f without, for %.0f encoded; want at most 1.2× with and at least 3× without",
			with, without, size)
	}
}

// TestAStatementsArraysShareTheGrowth: pgx encodes a statement's
// arguments one after the other into one buffer. Thirty arrays cost at
// most a few times their size, not a copy of all before them per array.
func TestAStatementsArraysShareTheGrowth(t *testing.T) {
	docs := Text(documents()[:200])
	statement := make([]any, 30)
	for i := range statement {
		statement[i] = docs
	}
	size := float64(30 * docs.encodedSize())
	if got := allocatedBytes(t, registered(), statement...); got > 3*size {
		t.Fatalf("allocated %.0f bytes for %.0f encoded; want at most 3×", got, size)
	}
}

// allocatedBytes is what encoding values, one after the other, into a
// 256-byte buffer allocates, as pgx encodes a statement's arguments.
func allocatedBytes(t *testing.T, m *pgtype.Map, values ...any) float64 {
	var err error
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf := make([]byte, 0, 256)
			for _, v := range values {
				if buf, err = m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, v, buf); err != nil {
					return
				}
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return float64(r.AllocedBytesPerOp())
}

// BenchmarkEncodeDocuments encodes a batch's documents as pgx does, into a
// buffer that starts at 256 bytes, with and without the reservation.
func BenchmarkEncodeDocuments(b *testing.B) {
	docs := documents()
	m := registered()
	for name, value := range map[string]any{"slice": docs, "Text": Text(docs)} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := m.Encode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, value, make([]byte, 0, 256)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
