package pgarray

import (
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
)

// A batch's Bind messages are appended to the connection's write buffer,
// parameter after parameter, until the batch is flushed; after each flush
// pgx gives the connection a new 1 KB buffer. A catch-up's batch of 2,000
// invoices is 4-5 MB of arrays, so every batch regrew that buffer from 1 KB
// by a quarter at a time, copying all before at each step: in a 300,000-
// invoice catch-up, 22% of the service's CPU went to that copying, the
// allocations and the runtime giving the freed pages back to the kernel.

// minReserve is the smallest batch worth a reservation: below it, the
// buffer's few regrowths cost less than the estimate.
const minReserve = 64 << 10

// queryOverhead bounds what a queued statement's Bind, Describe and
// Execute add to its parameters: the statement's name, the format codes
// and each parameter's length.
const queryOverhead = 256

// Reserve grows conn's write buffer, once, to what b's Bind messages will
// take, so that queueing them copies each parameter once. Call it right
// before sending b on conn: the room lasts until the next flush, which
// sending b does. The estimate counts the parameters that know their size
// (Text and Int64) and an eighth more for the others; a short estimate
// only costs a regrowth at the end, as before. A batch that fails before
// it is sent (an argument pgx cannot encode) leaves the room with the
// connection until its next flush of more than 1 KB.
//
// It also marks each statement's first Text or Int64 as leading, so that
// pgx's parameter buffer, which it makes anew for every statement, is
// grown once to hold all of the statement's arrays: grown array by array
// (room for what it holds plus the array), it allocated about 3.3 times
// their size, each time a large allocation that the runtime zeroed and
// paid for by giving pages back to the kernel.
//
// The leading arrays take their statements' buffers from bs (nil: each
// allocates its own); call bs.Done once b is sent.
func Reserve(conn *pgx.Conn, b *pgx.Batch, bs *Buffers) {
	n := batchSize(b)
	if n < minReserve {
		bs.drop()
		return
	}
	if Registered(conn.TypeMap()) { // elsewhere pgx could not encode a leading array
		lead(b, bs)
	}
	conn.PgConn().Frontend().Send(reservation(n))
}

// batchSize estimates the bytes b's statements send.
func batchSize(b *pgx.Batch) int {
	n := 0
	for _, q := range b.QueuedQueries {
		n += queryOverhead
		for _, arg := range q.Arguments {
			if s, ok := arg.(sized); ok {
				n += s.encodedSize()
			}
		}
	}
	return n + n/8
}

// lead marks each statement's first sized array as leading, with the
// room the statement's sized arrays take and the Buffers to take it from.
func lead(b *pgx.Batch, bs *Buffers) {
	for _, q := range b.QueuedQueries {
		first, statement := -1, 0
		for i, arg := range q.Arguments {
			if s, ok := arg.(sized); ok {
				statement += s.encodedSize()
				if first < 0 {
					first = i
				}
			}
		}
		if first < 0 {
			continue
		}
		q.Arguments = slices.Clone(q.Arguments) // the caller's, when it queued args...
		if l, ok := q.Arguments[first].(leading); ok { // marked before: a batch sent again
			q.Arguments[first] = l.sized
		}
		q.Arguments[first] = leading{sized: q.Arguments[first].(sized), statement: statement, buffers: bs}
	}
}

// leading is a statement's first sized array, with the room that all of
// the statement's sized arrays take (reservePlan), and the Buffers that
// room is taken from.
type leading struct {
	sized
	statement int
	buffers   *Buffers
}

// reservation is a frontend message of no bytes: encoding it grows the
// write buffer by its size, and sends nothing to the server.
type reservation int

// Frontend marks reservation a frontend message.
func (reservation) Frontend() {}

// Encode appends nothing, with room for n more bytes.
func (n reservation) Encode(dst []byte) ([]byte, error) { return slices.Grow(dst, int(n)), nil }

// Decode is never called: no server sends a reservation.
func (reservation) Decode([]byte) error { return errReservationDecoded }

var errReservationDecoded = errors.New("pgarray: a reservation is not a protocol message")
