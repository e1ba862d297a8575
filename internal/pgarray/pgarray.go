// Package pgarray has array parameters that make pgx grow its parameter
// buffer once, to their encoded size, instead of step by step; and
// Reserve (reserve.go), which does the same for the write buffer that a
// batch of them is sent from, and makes each statement's first array
// grow the parameter buffer once for the whole statement.
//
// pgx encodes a statement's parameters into one buffer, which it shrinks to
// 256 bytes after each statement. An array of 2,000 rendered invoices is
// 4-5 MB, and appending it element by element regrows that buffer about
// forty times, each time by a quarter: in a catch-up, a sixth of the
// service's CPU went to that and to the garbage it left. Text and Int64
// reserve their size first. On a Map without Register they are encoded as
// the slices they are, only without the reservation.
package pgarray

import (
	"slices"

	"github.com/jackc/pgx/v5/pgtype"
)

// Text is a text[] parameter.
type Text []string

// Int64 is a bigint[] parameter.
type Int64 []int64

// headerBytes is a one-dimensional binary array's header: dimensions, null
// flag, element type, then the dimension's length and lower bound.
const headerBytes = 20

// sized is an array that knows its binary encoding's size.
type sized interface {
	encodedSize() int
	slice() any
}

func (a Text) encodedSize() int {
	n := headerBytes
	for _, s := range a {
		n += 4 + len(s)
	}
	return n
}

func (a Text) slice() any { return []string(a) }

func (a Int64) encodedSize() int { return headerBytes + 12*len(a) }

func (a Int64) slice() any { return []int64(a) }

// Register makes m reserve a Text's or an Int64's size before encoding it.
// It goes first: pgx's own wrappers would take them as the slices they are.
func Register(m *pgtype.Map) {
	m.TryWrapEncodePlanFuncs = append([]pgtype.TryWrapEncodePlanFunc{tryWrapSized}, m.TryWrapEncodePlanFuncs...)
}

func tryWrapSized(value any) (pgtype.WrappedEncodePlanNextSetter, any, bool) {
	if s, ok := value.(sized); ok {
		return &reservePlan{}, s.slice(), true
	}
	return nil, nil, false
}

// reservePlan makes room for the array, then encodes it as the slice it
// is. A statement's arrays go into one buffer. A leading array (Reserve)
// makes room for all of its statement's arrays at once; any other array
// that does not fit makes room for itself and what the buffer already
// holds, as growing it by just the array would copy everything before it
// once per array.
type reservePlan struct{ next pgtype.EncodePlan }

func (p *reservePlan) SetNext(next pgtype.EncodePlan) { p.next = next }

func (p *reservePlan) Encode(value any, buf []byte) ([]byte, error) {
	s := value.(sized)
	if l, ok := value.(leading); ok && cap(buf)-len(buf) < l.statement {
		buf = slices.Grow(buf, l.statement)
	} else if n := s.encodedSize(); cap(buf)-len(buf) < n {
		buf = slices.Grow(buf, len(buf)+n)
	}
	return p.next.Encode(s.slice(), buf)
}

// leading is a statement's first Text or Int64, with the room that the
// whole statement's parameters take (see Reserve).
type leading struct {
	sized
	statement int
}

// Registered reports whether Register was called on m.
func Registered(m *pgtype.Map) bool {
	_, ok := m.PlanEncode(pgtype.TextArrayOID, pgtype.BinaryFormatCode, Text{}).(*reservePlan)
	return ok
}
