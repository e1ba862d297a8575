package projections

import (
	"slices"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/follow"
)

// readAhead is the next batch of a runner that is catching up, taken from
// the subscription and built (decoded, rendered, queued) while the current
// batch is written. Otherwise the service and PostgreSQL take turns: the
// runner builds a batch while the database waits, then waits while the
// database writes it. A catch-up's batches are full; a runner that keeps up
// with appends gets smaller ones and reads no batch ahead, so that no
// event waits behind another batch's write. Nor do batches smaller than
// readAheadMin: building them costs less than handing them to a goroutine
// is worth.
//
// The goroutine gathers a full batch (follow.Gather), waiting for events
// until the current batch is written: a subscription hands over a page at
// a time into a buffer the size of a batch, so what is waiting when the
// current batch was taken is often the start of the next page only. Taken
// alone, it made every other batch of a catch-up short, and the batch
// after a short one was built while nothing was written.
//
// Only the goroutine reads the subscription until wait returns; the events
// it takes are the ones follow.NextBatch would have taken next, so the order is
// the same. The statements are used only if the batch is written as it was
// built (see applyBatch); building is pure, so building it again costs
// only time.
type readAhead struct {
	written chan struct{} // closed by wait: the batch before is written
	done    chan struct{}
	batch   []events.RecordedEvent
	pre     *built
}

// readAheadMin is the smallest batch size at which a runner reads ahead.
const readAheadMin = 100

// startReadAhead starts reading ahead after current, a batch of a runner
// with batches of size; nil when current is not full or size is below
// readAheadMin.
func startReadAhead(proj Projection, sub events.Subscription, current []events.RecordedEvent, size int) *readAhead {
	if size < readAheadMin || len(current) < size {
		return nil
	}
	ra := &readAhead{written: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(ra.done)
		ra.batch = follow.Gather(sub, size, ra.written)
		if slices.ContainsFunc(ra.batch, func(ev events.RecordedEvent) bool { return proj.Handles(ev.Type) }) {
			ra.pre = build(proj, ra.batch)
		}
	}()
	return ra
}

// wait tells the goroutine that the batch before is written, and returns
// the batch read ahead (possibly empty) and its statements (nil if it
// holds no event the projection handles). A nil readAhead has none; each
// other is waited for once.
func (ra *readAhead) wait() ([]events.RecordedEvent, *built) {
	if ra == nil {
		return nil, nil
	}
	close(ra.written)
	<-ra.done
	return ra.batch, ra.pre
}
