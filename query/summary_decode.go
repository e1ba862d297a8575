package query

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A list of 100 invoices is 2,100 values. pgx's Scan finds a plan for each
// value of each row (and the []any of pointers makes every row escape to the
// heap): about a quarter of the service's CPU on a list, measured. The
// summary's columns have five types, so its rows are decoded here from the
// wire, when the result's columns are the types and formats expected
// (summaryWire, invoiceWire); any other result (a pool in simple-protocol
// mode, whose results are all text) is scanned by pgx as before.
//
// The ids come as uuid, not text: PostgreSQL's uuid_out for three ids a row
// made a list 35–50% slower to produce than 16 bytes each in binary.

// wireColumn is a column's type and wire format.
type wireColumn struct {
	oid    uint32
	format int16
	// document marks a JSON document stored as text (documentText).
	document bool
}

var (
	uuidBinary        = wireColumn{oid: pgtype.UUIDOID, format: pgtype.BinaryFormatCode}
	int8Binary        = wireColumn{oid: pgtype.Int8OID, format: pgtype.BinaryFormatCode}
	int4Binary        = wireColumn{oid: pgtype.Int4OID, format: pgtype.BinaryFormatCode}
	timestamptzBinary = wireColumn{oid: pgtype.TimestamptzOID, format: pgtype.BinaryFormatCode}
)

// Text columns may come in either format (their bytes are the same), and
// json comes as its text. A document is JSON stored as text (the invoices'
// snapshots, lines and document fields, see projections/schema): it is
// read as json is, into bytes of its own, not into the row's strings.
var (
	text         = wireColumn{oid: pgtype.TextOID}
	jsonText     = wireColumn{oid: pgtype.JSONOID}
	documentText = wireColumn{oid: pgtype.TextOID, document: true}
)

// wireLayout is the columns' types and formats as pgx asks for them.
func wireLayout[T any](cols []column[T]) []wireColumn {
	layout := make([]wireColumn, len(cols))
	for n, c := range cols {
		layout[n] = c.wire
	}
	return layout
}

// decodable reports whether rows described by fields have layout's columns.
func decodable(fields []pgconn.FieldDescription, layout []wireColumn) bool {
	if len(fields) != len(layout) {
		return false
	}
	for n, f := range fields {
		want := layout[n]
		if f.DataTypeOID != want.oid || (!textual(want.oid) && f.Format != want.format) {
			return false
		}
	}
	return true
}

// textual reports whether a type's binary form is its text.
func textual(oid uint32) bool { return oid == pgtype.TextOID || oid == pgtype.JSONOID }

// wireRow decodes one row's values in column order; the first error stays.
// Its text columns are copied into one string (texts), which they are
// sliced from in turn: one allocation a row instead of one a column.
type wireRow struct {
	values [][]byte
	next   int
	err    error
	texts  string
}

func newWireRow(values [][]byte, layout []wireColumn) wireRow {
	var all strings.Builder
	n := 0
	for c, v := range values {
		switch {
		case layout[c] == text:
			n += len(v)
		case layout[c] == uuidBinary && v != nil:
			n += uuidTextLen
		}
	}
	all.Grow(n)
	for c, v := range values {
		switch {
		case layout[c] == text:
			all.Write(v)
		case layout[c] == uuidBinary && len(v) == 16:
			var id [uuidTextLen]byte
			uuidText(&id, v)
			all.Write(id[:])
		case layout[c] == uuidBinary && v != nil:
			all.WriteString(strings.Repeat("-", uuidTextLen)) // the column fails in uuid()
		}
	}
	return wireRow{values: values, texts: all.String()}
}

// uuidTextLen is the length of a uuid's text: 8-4-4-4-12 hex digits.
const uuidTextLen = 36

// uuidText formats a uuid's 16 bytes into out as PostgreSQL's uuid_out
// does. out is the caller's, so that it can stay on the stack: three ids a
// row, each a new array on the heap, were a sixth of a list's time in the
// allocator.
func uuidText(out *[uuidTextLen]byte, b []byte) {
	hex.Encode(out[0:8], b[0:4])
	hex.Encode(out[9:13], b[4:6])
	hex.Encode(out[14:18], b[6:8])
	hex.Encode(out[19:23], b[8:10])
	hex.Encode(out[24:], b[10:])
	out[8], out[13], out[18], out[23] = '-', '-', '-', '-'
}

// take is the next n bytes of r.texts: the next text or uuid column's.
func (r *wireRow) take(n int) string {
	s := r.texts[:n]
	r.texts = r.texts[n:]
	return s
}

func (r *wireRow) value() []byte {
	v := r.values[r.next]
	r.next++
	return v
}

func (r *wireRow) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("column %d: %w", r.next-1, err)
	}
}

func (r *wireRow) text() string {
	v := r.value()
	if v == nil {
		r.fail(errors.New("NULL where a value was expected"))
	}
	return r.take(len(v))
}

// uuid is a uuid column's text.
func (r *wireRow) uuid() string {
	v := r.value()
	if len(v) != 16 {
		r.fail(fmt.Errorf("%d bytes for a uuid", len(v)))
		if v == nil { // newWireRow wrote nothing for it
			return ""
		}
	}
	return r.take(uuidTextLen)
}

// json is a json column's text, copied.
func (r *wireRow) json() json.RawMessage {
	v := r.value()
	if v == nil {
		r.fail(errors.New("NULL where a document was expected"))
	}
	return bytes.Clone(v)
}

func (r *wireRow) nullableText() *string {
	v := r.value()
	if v == nil {
		return nil
	}
	s := r.take(len(v))
	return &s
}

func (r *wireRow) int(size int) int64 {
	v := r.value()
	switch {
	case len(v) != size:
		r.fail(fmt.Errorf("%d bytes for an integer of %d", len(v), size))
		return 0
	case size == 4:
		return int64(int32(binary.BigEndian.Uint32(v)))
	default:
		return int64(binary.BigEndian.Uint64(v))
	}
}

// postgresEpochMicros is 2000-01-01 00:00:00 UTC, PostgreSQL's epoch, in
// microseconds since the Unix epoch.
const postgresEpochMicros = 946_684_800_000_000

func (r *wireRow) nullableTime() *time.Time {
	v := r.value()
	if v == nil {
		return nil
	}
	if len(v) != 8 {
		r.fail(fmt.Errorf("%d bytes for a timestamptz", len(v)))
		return nil
	}
	us := int64(binary.BigEndian.Uint64(v))
	if us == math.MaxInt64 || us == math.MinInt64 {
		r.fail(errors.New("an infinite timestamptz"))
		return nil
	}
	t := time.UnixMicro(us + postgresEpochMicros)
	return &t
}

func (r *wireRow) time() time.Time {
	t := r.nullableTime()
	if t == nil {
		r.fail(errors.New("NULL where a timestamp was expected"))
		return time.Time{}
	}
	return *t
}

// wireDecoder decodes a row of cols' select list into the fields pgx's Scan
// would fill.
func wireDecoder[T any](cols []column[T]) func([][]byte, *T, *rowKey) error {
	layout := wireLayout(cols)
	return func(values [][]byte, item *T, k *rowKey) error {
		r := newWireRow(values, layout)
		for _, c := range cols {
			r.into(c.field(item, k), c.wire)
		}
		return r.err
	}
}

// into decodes the next value into field, by the field's type.
func (r *wireRow) into(field any, wire wireColumn) {
	switch f := field.(type) {
	case *string:
		if wire == uuidBinary {
			*f = r.uuid()
		} else {
			*f = r.text()
		}
	case **string:
		*f = r.nullableText()
	case *int64:
		*f = r.int(8)
	case *int:
		*f = int(r.int(4))
	case *time.Time:
		*f = r.time()
	case **time.Time:
		*f = r.nullableTime()
	case *[]byte:
		*f = r.json()
	default:
		r.value()
		r.fail(fmt.Errorf("no decoder for a %T", field))
	}
}
