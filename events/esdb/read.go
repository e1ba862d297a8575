package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/invoicing/invoicing/events"
)

// readAllBatch is how many $all records one request asks for. $all also
// holds system events and other services' events, which ReadAll skips, so a
// batch may yield fewer events than it reads.
const readAllBatch = 500

// noPosition is how the client shows a position the server left out.
var noPosition = events.NewPosition(math.MaxUint64, math.MaxUint64)

// toPosition maps $all's (commit, prepare) pair onto the port's position:
// both order events the same way.
func toPosition(p esdb.Position) events.Position {
	return events.NewPosition(p.Commit, p.Prepare)
}

// fromPosition maps the port's position onto a starting point of $all.
func fromPosition(p events.Position) esdb.AllPosition {
	if p.IsZero() {
		return esdb.Start{}
	}
	commit, prepare := p.Parts()
	return esdb.Position{Commit: commit, Prepare: prepare}
}

// isServiceEvent reports whether a record of $all is one of this service's
// events rather than a system event, a link, or another service's event.
func isServiceEvent(ev *esdb.RecordedEvent) bool {
	return !strings.HasPrefix(ev.StreamID, "$") && events.IsServiceType(ev.EventType)
}

// recorded converts a client event. Times are truncated to microseconds
// (DESIGN §2: the event, the read model and responses render alike); the
// server keeps 100 ns ticks.
func recorded(ev *esdb.RecordedEvent) events.RecordedEvent {
	var md []byte
	if len(ev.UserMetadata) > 0 {
		md = ev.UserMetadata
	}
	return events.RecordedEvent{
		ID:         ev.EventID,
		Type:       ev.EventType,
		Data:       ev.Data,
		Metadata:   md,
		Stream:     ev.StreamID,
		Revision:   ev.EventNumber,
		Position:   toPosition(ev.Position),
		RecordedAt: ev.CreatedDate.UTC().Truncate(time.Microsecond),
	}
}

// ReadStream implements events.Store.
func (s *Store) ReadStream(ctx context.Context, stream string) ([]events.RecordedEvent, error) {
	evs, err := s.readFrom(ctx, stream, 0)
	if err != nil {
		return nil, readStreamError(stream, err)
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("esdb: read stream %s: %w", stream, events.ErrStreamNotFound)
	}
	return evs, nil
}

// ReadStreamFrom implements events.Store: a missing stream is one with no
// event from from on.
func (s *Store) ReadStreamFrom(ctx context.Context, stream string, from uint64) ([]events.RecordedEvent, error) {
	evs, err := s.readFrom(ctx, stream, from)
	if err != nil {
		if err = readStreamError(stream, err); errors.Is(err, events.ErrStreamNotFound) {
			return nil, nil
		}
		return nil, err
	}
	return evs, nil
}

func (s *Store) readFrom(ctx context.Context, stream string, from uint64) ([]events.RecordedEvent, error) {
	return call(ctx, s, func(ctx context.Context, c *esdb.Client) ([]events.RecordedEvent, error) {
		return readEvents(ctx, c, stream, from, math.MaxInt64)
	})
}

// ReadLast implements events.Store: one event, read backwards from the end.
func (s *Store) ReadLast(ctx context.Context, stream string) (events.RecordedEvent, error) {
	evs, err := call(ctx, s, func(ctx context.Context, c *esdb.Client) ([]events.RecordedEvent, error) {
		rs, err := c.ReadStream(ctx, stream, esdb.ReadStreamOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1)
		if err != nil {
			return nil, err
		}
		defer rs.Close()
		return collect(rs)
	})
	if err != nil {
		return events.RecordedEvent{}, readStreamError(stream, err)
	}
	if len(evs) == 0 {
		return events.RecordedEvent{}, fmt.Errorf("esdb: read last of %s: %w", stream, events.ErrStreamNotFound)
	}
	return evs[0], nil
}

// readEvents reads up to count events of stream from revision from. A
// missing stream shows up at the first Recv, not at ReadStream.
func readEvents(ctx context.Context, c *esdb.Client, stream string, from, count uint64) ([]events.RecordedEvent, error) {
	opts := esdb.ReadStreamOptions{Direction: esdb.Forwards, From: esdb.Revision(from)}
	rs, err := c.ReadStream(ctx, stream, opts, count)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	return collect(rs)
}

// collect drains a stream read. A missing stream shows up at the first Recv.
func collect(rs *esdb.ReadStream) ([]events.RecordedEvent, error) {
	var out []events.RecordedEvent
	for {
		ev, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		if ev.Event != nil {
			out = append(out, recorded(ev.Event))
		}
	}
}

// ReadAll implements events.Store.
func (s *Store) ReadAll(ctx context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	if max <= 0 {
		return nil, nil
	}
	evs, err := call(ctx, s, func(ctx context.Context, c *esdb.Client) ([]events.RecordedEvent, error) {
		return readAll(ctx, c, from, max)
	})
	if err != nil {
		return nil, fmt.Errorf("esdb: read $all after %s: %w", from, err)
	}
	return evs, nil
}

// readAll reads $all forwards in batches until it holds max service events
// or reaches the end.
func readAll(ctx context.Context, c *esdb.Client, from events.Position, max int) ([]events.RecordedEvent, error) {
	var out []events.RecordedEvent
	for {
		read, last, err := readAllBatchAfter(ctx, c, from, max, &out)
		if err != nil {
			return nil, err
		}
		if len(out) >= max || read < readAllBatch {
			return out, nil
		}
		from = last
	}
}

// readAllBatchAfter reads one batch of $all after `after`, appending service
// events to out until it holds max. It returns how many records it read and
// the position of the last. Reads of $all include their starting position,
// so the record at `after` itself is skipped.
func readAllBatchAfter(ctx context.Context, c *esdb.Client, after events.Position, max int, out *[]events.RecordedEvent) (int, events.Position, error) {
	opts := esdb.ReadAllOptions{Direction: esdb.Forwards, From: fromPosition(after)}
	rs, err := c.ReadAll(ctx, opts, readAllBatch)
	if err != nil {
		return 0, after, err
	}
	defer rs.Close()
	read, last := 0, after
	for len(*out) < max {
		re, err := rs.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return read, last, err
		}
		read++
		ev := re.Event
		if ev == nil {
			continue
		}
		last = toPosition(ev.Position)
		if last.Compare(after) > 0 && isServiceEvent(ev) {
			*out = append(*out, recorded(ev))
		}
	}
	return read, last, nil
}
