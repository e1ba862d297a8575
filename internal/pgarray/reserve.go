package pgarray

import (
	"errors"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// A batch's Bind messages are appended to the connection's write buffer,
// parameter after parameter, until the batch is flushed; after each flush
// pgx gives the connection a new 1 KB buffer. A catch-up's batch of 2,000
// invoices is 4-5 MB of arrays, so every batch regrew that buffer at
// nearly every array, each time into a new allocation holding all before:
// in a 300,000-invoice catch-up, 22% of the service's CPU went to that
// copying, the allocations and the runtime giving the freed pages back to
// the kernel.

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
func Reserve(conn *pgconn.PgConn, b *pgx.Batch) {
	if n := batchSize(b); n >= minReserve {
		conn.Frontend().Send(reservation(n))
	}
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
