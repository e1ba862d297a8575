package pgarray

import "slices"

// Buffers keeps the parameter buffers of one sender's large statements
// from one batch to the next. pgx makes a new parameter buffer for every
// statement; a catch-up's statements are megabytes each, and a new buffer
// of that size, every batch, cost the service a third of its CPU in a
// 300,000-invoice catch-up: the runtime zeroed each one, and gave as many
// pages back to the kernel to make room for it, which it then zeroed again.
//
// A statement's leading array (Reserve) takes a buffer from here; Done
// takes back what the batch was lent, once it is sent: pgx copies each
// statement's parameters into its write buffer before it encodes the next
// statement, and makes a new parameter buffer for that one, so nothing of
// pgx reads or writes a lent buffer after the batch is sent. A Buffers is
// one sender's (a projection runner's); it is not safe for concurrent
// use. A nil *Buffers keeps nothing: each statement allocates its buffer.
type Buffers struct {
	free [][]byte
	lent [][]byte
}

// keptBuffers is how many buffers a Buffers keeps between batches: a
// batch has a few large statements (the rows, their changes, the
// settlements).
const keptBuffers = 4

// minBuffer is the smallest buffer lent: smaller statements do without.
// It is above pgx's own 256 bytes, which pgx keeps for the next statement.
const minBuffer = 4 << 10

// take lends an empty buffer with room for n bytes.
func (bs *Buffers) take(n int) []byte {
	if bs == nil || n < minBuffer {
		return make([]byte, 0, n)
	}
	i := slices.IndexFunc(bs.free, func(b []byte) bool { return cap(b) >= n })
	var buf []byte
	if i >= 0 {
		buf = bs.free[i][:0]
		bs.free = slices.Delete(bs.free, i, i+1)
	} else {
		buf = make([]byte, 0, n)
	}
	bs.lent = append(bs.lent, buf)
	return buf
}

// Done takes back the buffers lent to the batch just sent, keeping the
// largest few for the next.
func (bs *Buffers) Done() {
	if bs == nil || len(bs.lent) == 0 {
		return
	}
	bs.free = append(bs.free, bs.lent...)
	clear(bs.lent)
	bs.lent = bs.lent[:0]
	slices.SortFunc(bs.free, func(a, b []byte) int { return cap(b) - cap(a) })
	if len(bs.free) > keptBuffers {
		clear(bs.free[keptBuffers:])
		bs.free = bs.free[:keptBuffers]
	}
}

// drop lets go of the kept buffers: the sender's batches are small now
// (a runner that caught up), and the memory goes back to the heap.
func (bs *Buffers) drop() {
	if bs != nil && len(bs.lent) == 0 {
		clear(bs.free)
		bs.free = nil
	}
}
