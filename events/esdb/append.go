package esdb

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/invoicing/invoicing/events"
)

// codedError is what *esdb.Error offers to tell failures apart. Matching on
// the method rather than the type lets tests build such errors: the
// client's error type has no exported constructor.
type codedError interface {
	IsErrorCode(esdb.ErrorCode) bool
}

var _ codedError = (*esdb.Error)(nil)

// hasCode reports whether err is, or wraps, a client error with code.
func hasCode(err error, code esdb.ErrorCode) bool {
	var c codedError
	return errors.As(err, &c) && c.IsErrorCode(code)
}

// appendError maps an append failure onto the port's sentinel.
func appendError(stream string, expected events.ExpectedRevision, err error) error {
	if hasCode(err, esdb.ErrorCodeWrongExpectedVersion) {
		return fmt.Errorf("esdb: append to %s expecting %s: %w (%w)", stream, expected, events.ErrWrongExpectedRevision, err)
	}
	return fmt.Errorf("esdb: append to %s: %w", stream, err)
}

// readStreamError maps a stream read failure onto the port's sentinel. A
// deleted stream has no events to read either.
func readStreamError(stream string, err error) error {
	if hasCode(err, esdb.ErrorCodeResourceNotFound) || hasCode(err, esdb.ErrorCodeStreamDeleted) {
		return fmt.Errorf("esdb: read stream %s: %w (%w)", stream, events.ErrStreamNotFound, err)
	}
	return fmt.Errorf("esdb: read stream %s: %w", stream, err)
}

// toExpected maps the port's expectation onto the client's.
func toExpected(e events.ExpectedRevision) esdb.ExpectedRevision {
	if e.IsNoStream() {
		return esdb.NoStream{}
	}
	return esdb.Revision(e.Revision())
}

// toEventData keeps the caller's ids: they are derived from stream and
// revision, so a retried append carries the same ones and the server
// acknowledges it instead of writing a second copy.
func toEventData(evs []events.EventData) []esdb.EventData {
	out := make([]esdb.EventData, len(evs))
	for i, ev := range evs {
		out[i] = esdb.EventData{
			EventID:     ev.ID,
			EventType:   ev.Type,
			ContentType: esdb.ContentTypeJson,
			Data:        ev.Data,
			Metadata:    ev.Metadata,
		}
	}
	return out
}

// Append implements events.Store.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.EventData) (events.AppendResult, error) {
	if !expected.Valid() {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %s: expected revision not set", stream)
	}
	if len(evs) == 0 {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %s: no events", stream)
	}
	opts := esdb.AppendToStreamOptions{ExpectedRevision: toExpected(expected)}
	data := toEventData(evs)
	res, err := call(ctx, s, func(ctx context.Context, c *esdb.Client) (*esdb.WriteResult, error) {
		return c.AppendToStream(ctx, stream, opts, data...)
	})
	if err != nil {
		return events.AppendResult{}, appendError(stream, expected, err)
	}
	return s.confirm(ctx, stream, expected, evs, res)
}

// confirm reads back the revisions the server says the events took.
//
// EventStoreDB acknowledges an append whose event ids it already holds at
// the expected revision without comparing bodies (kurrent-io/KurrentDB#1697,
// #1949), and the service derives ids from stream and revision: a second
// create request with the same idempotency key but another body would be
// told it won. The read-back tells the two apart, and it yields each event's
// exact $all position, which the append reply does not (its prepare part
// names the first event of the write).
func (s *Store) confirm(ctx context.Context, stream string, expected events.ExpectedRevision, sent []events.EventData, res *esdb.WriteResult) (events.AppendResult, error) {
	last, n := res.NextExpectedVersion, uint64(len(sent))
	if last+1 < n {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %s: server reports revision %d after %d events", stream, last, n)
	}
	got, err := call(ctx, s, func(ctx context.Context, c *esdb.Client) ([]events.RecordedEvent, error) {
		return readEvents(ctx, c, stream, last+1-n, n)
	})
	if err != nil {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %s: reading back the appended events: %w", stream, err)
	}
	if !sameEvents(got, sent) {
		return events.AppendResult{}, fmt.Errorf("esdb: append to %s expecting %s: the stream holds other events under these ids: %w", stream, expected, events.ErrWrongExpectedRevision)
	}
	pos := got[len(got)-1].Position
	if pos == noPosition {
		// Servers older than kurrent-io/KurrentDB#3459 (2022) leave
		// positions out of stream reads; the reply's commit position is
		// then the best word on where the last event is.
		pos = events.NewPosition(res.CommitPosition, res.CommitPosition)
	}
	return events.AppendResult{NextRevision: last, Position: pos}, nil
}

// sameEvents reports whether the stream holds exactly what was sent. Bytes
// are compared as sent: EventStoreDB stores them unchanged, so a retry of
// the same request matches and a different body does not.
func sameEvents(got []events.RecordedEvent, sent []events.EventData) bool {
	if len(got) != len(sent) {
		return false
	}
	for i, ev := range sent {
		g := got[i]
		if g.ID != ev.ID || g.Type != ev.Type || !bytes.Equal(g.Data, ev.Data) || !bytes.Equal(g.Metadata, ev.Metadata) {
			return false
		}
	}
	return true
}
