package eventstoretest_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/eventstoretest"
)

// TestRun checks the suite itself against a minimal in-memory store, so that
// a failure seen with a real adapter is the adapter's and not the suite's.
func TestRun(t *testing.T) {
	eventstoretest.Run(t, func(t *testing.T) events.Store { return newMemStore() })
}

// TestRunSharedStore runs every subtest on one store, as with an
// EventStoreDB that cannot be emptied between subtests.
func TestRunSharedStore(t *testing.T) {
	shared := newMemStore()
	eventstoretest.Run(t, func(t *testing.T) events.Store { return shared })
}

// memStore is the simplest store that keeps the port's promises: one lock,
// one slice, positions (0, n) for the n-th event.
type memStore struct {
	mu      sync.Mutex
	log     []events.RecordedEvent
	streams map[string][]int // indexes into log
	changed chan struct{}    // closed and replaced on every append
}

func newMemStore() *memStore {
	return &memStore{streams: map[string][]int{}, changed: make(chan struct{})}
}

func (m *memStore) Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.EventData) (events.AppendResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	idx := m.streams[stream]
	ok := expected.IsNoStream() && len(idx) == 0 ||
		!expected.IsNoStream() && len(idx) > 0 && uint64(len(idx)-1) == expected.Revision()
	if !ok || len(evs) == 0 {
		return events.AppendResult{}, fmt.Errorf("mem: append to %s expecting %s: %w", stream, expected, events.ErrWrongExpectedRevision)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	var res events.AppendResult
	for _, ev := range evs {
		rev := uint64(len(m.streams[stream]))
		pos := events.NewPosition(0, uint64(len(m.log)+1))
		m.log = append(m.log, events.RecordedEvent{
			ID: ev.ID, Type: ev.Type, Data: slices.Clone(ev.Data), Metadata: slices.Clone(ev.Metadata),
			Stream: stream, Revision: rev, Position: pos, RecordedAt: now,
		})
		m.streams[stream] = append(m.streams[stream], len(m.log)-1)
		res = events.AppendResult{NextRevision: rev, Position: pos}
	}
	close(m.changed)
	m.changed = make(chan struct{})
	return res, nil
}

func (m *memStore) ReadStream(ctx context.Context, stream string) ([]events.RecordedEvent, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	idx := m.streams[stream]
	if len(idx) == 0 {
		return nil, fmt.Errorf("mem: read %s: %w", stream, events.ErrStreamNotFound)
	}
	out := make([]events.RecordedEvent, len(idx))
	for i, j := range idx {
		out[i] = m.log[j]
	}
	return out, nil
}

func (m *memStore) ReadStreamFrom(ctx context.Context, stream string, from uint64) ([]events.RecordedEvent, error) {
	evs, err := m.ReadStream(ctx, stream)
	switch {
	case errors.Is(err, events.ErrStreamNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case uint64(len(evs)) <= from:
		return nil, nil
	}
	return evs[from:], nil
}

func (m *memStore) ReadLast(ctx context.Context, stream string) (events.RecordedEvent, error) {
	evs, err := m.ReadStream(ctx, stream)
	if err != nil {
		return events.RecordedEvent{}, err
	}
	return evs[len(evs)-1], nil
}

func (m *memStore) ReadAll(ctx context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	out, _ := m.readAll(from, max)
	return out, nil
}

// readAll also returns the channel that closes on the next append, taken
// under the same lock so that no append falls between read and wait.
func (m *memStore) readAll(from events.Position, max int) ([]events.RecordedEvent, <-chan struct{}) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, lo := from.Parts()
	var out []events.RecordedEvent
	for _, ev := range m.log[min(int(lo), len(m.log)):] {
		if len(out) == max {
			break
		}
		if events.IsServiceType(ev.Type) {
			out = append(out, ev)
		}
	}
	return out, m.changed
}

func (m *memStore) SubscribeAll(ctx context.Context, from events.Position, _ ...string) (events.Subscription, error) {
	sub := &memSub{ch: make(chan events.RecordedEvent)}
	go func() {
		defer close(sub.ch)
		for {
			page, changed := m.readAll(from, 100)
			for _, ev := range page {
				select {
				case sub.ch <- ev:
					from = ev.Position
				case <-ctx.Done():
					return
				}
			}
			if len(page) == 100 {
				continue
			}
			select {
			case <-changed:
			case <-ctx.Done():
				return
			}
		}
	}()
	return sub, nil
}

func (m *memStore) Ping(context.Context) error { return nil }
func (m *memStore) Close() error               { return nil }

type memSub struct{ ch chan events.RecordedEvent }

func (s *memSub) Events() <-chan events.RecordedEvent { return s.ch }
func (s *memSub) Err() error                          { return nil }
