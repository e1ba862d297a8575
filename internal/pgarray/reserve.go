package pgarray

import (
	"errors"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
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
// sending b does. The estimate counts the parameters whose size paramSize
// knows (Text, Int64 and the other arrays the projections send) and an
// eighth more for the others; a short estimate only costs a regrowth at
// the end, as before. A batch that fails before it is sent (an argument
// pgx cannot encode) leaves the room with the connection until its next
// flush of more than 1 KB.
//
// On a connection whose type map has Register, it also marks each
// statement's first Text or Int64 as leading, so that pgx's parameter
// buffer, which pgx makes anew for every statement, is grown once to hold
// all of the statement's arrays. Grown array by array it took about three
// times their size in allocations, each one large; in a catch-up at the
// service's memory limit, every such allocation makes the collector run
// sooner. Elsewhere pgx could not encode a leading array.
func Reserve(conn *pgx.Conn, b *pgx.Batch) {
	sizes, n := statementSizes(b)
	if n < minReserve {
		return
	}
	if Registered(conn.TypeMap()) {
		lead(b, sizes)
	}
	conn.PgConn().Frontend().Send(reservation(n))
}

// lead marks each statement's first sized array as leading, with the room
// that the statement takes (sizes, from statementSizes), and a sixteenth
// more for the arguments paramSize does not know: past it, pgx would grow
// the buffer once more, copying all of it.
func lead(b *pgx.Batch, sizes []int) {
	for i, q := range b.QueuedQueries {
		first := slices.IndexFunc(q.Arguments, func(arg any) bool { _, ok := arg.(sized); return ok })
		if first < 0 {
			continue
		}
		q.Arguments = slices.Clone(q.Arguments) // Queue(sql, args...) kept the caller's slice
		s := q.Arguments[first].(sized)
		if l, ok := s.(leading); ok { // marked before: a batch sent again
			s = l.sized
		}
		q.Arguments[first] = leading{sized: s, statement: sizes[i] + sizes[i]/16}
	}
}

// statementSizes estimates the bytes each of b's statements sends (what
// paramSize knows of its arguments, and queryOverhead), and the whole
// batch's: their sum and an eighth more. Each argument is sized once, for
// the write buffer and the leading arrays alike.
func statementSizes(b *pgx.Batch) (sizes []int, batch int) {
	sizes = make([]int, len(b.QueuedQueries))
	for i, q := range b.QueuedQueries {
		sizes[i] = queryOverhead + argumentsSize(q.Arguments)
		batch += sizes[i]
	}
	return sizes, batch + batch/8
}

// argumentsSize is the binary encoding of a statement's arguments that
// paramSize knows.
func argumentsSize(args []any) int {
	n := 0
	for _, arg := range args {
		n += paramSize(arg)
	}
	return n
}

// paramSize is the binary encoding's size of a Text, an Int64 or another
// array the projections send; 0 for any other argument.
func paramSize(arg any) int {
	switch a := arg.(type) {
	case sized:
		return a.encodedSize()
	case []*string:
		n := headerBytes + 4*len(a)
		for _, s := range a {
			if s != nil {
				n += len(*s)
			}
		}
		return n
	case []time.Time:
		return headerBytes + 12*len(a)
	case []int32:
		return headerBytes + 8*len(a)
	case [][16]byte: // uuid[]
		return headerBytes + 20*len(a)
	}
	return 0
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
