package esdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/invoicing/invoicing/events"
)

// fakeCoded stands in for *esdb.Error, which tests cannot build with a code
// of their choosing.
type fakeCoded struct{ code esdb.ErrorCode }

func (f fakeCoded) Error() string                        { return fmt.Sprintf("esdb error code %d", f.code) }
func (f fakeCoded) IsErrorCode(code esdb.ErrorCode) bool { return f.code == code }

func TestErrorMapping(t *testing.T) {
	wrong := fmt.Errorf("append: %w", fakeCoded{esdb.ErrorCodeWrongExpectedVersion})
	notFound := fakeCoded{esdb.ErrorCodeResourceNotFound}
	deleted := fakeCoded{esdb.ErrorCodeStreamDeleted}
	other := fakeCoded{esdb.ErrorUnavailable}
	tests := []struct {
		name     string
		got      error
		sentinel error
		want     bool
	}{
		{"wrong expected version is a conflict", appendError("s", events.NoStream(), wrong), events.ErrWrongExpectedRevision, true},
		{"another append failure is not", appendError("s", events.NoStream(), other), events.ErrWrongExpectedRevision, false},
		{"a missing stream is not found", readStreamError("s", notFound), events.ErrStreamNotFound, true},
		{"a deleted stream is not found", readStreamError("s", deleted), events.ErrStreamNotFound, true},
		{"an unavailable server is not 'not found'", readStreamError("s", other), events.ErrStreamNotFound, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(tt.got, tt.sentinel); got != tt.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", tt.got, tt.sentinel, got, tt.want)
			}
		})
	}
	// The client's error stays reachable for logs and callers that care.
	var c codedError
	if err := appendError("s", events.AtRevision(2), wrong); !errors.As(err, &c) {
		t.Errorf("%v does not wrap the client's error", err)
	}
}

func TestSameEventsComparesWhatWasSent(t *testing.T) {
	sent := []events.EventData{{ID: events.EventID("s", 0), Type: events.TypeCompanyCreated, Data: []byte(`{"a":1}`)}}
	stored := []events.RecordedEvent{{ID: sent[0].ID, Type: sent[0].Type, Data: []byte(`{"a":1}`)}}
	if !sameEvents(stored, sent) {
		t.Errorf("an identical retry is not recognised")
	}
	stored[0].Data = []byte(`{"a":2}`)
	if sameEvents(stored, sent) {
		t.Errorf("another body under the same id passes for the same event")
	}
	if sameEvents(nil, sent) {
		t.Errorf("a missing event passes for the same event")
	}
}

// unreachableStore is a Store whose server refuses connections and whose
// client gives up discovery after one attempt, so that it closes itself.
func unreachableStore(t *testing.T) *Store {
	t.Helper()
	cfg, err := parseURL("esdb://127.0.0.1:1?tls=false&maxDiscoverAttempts=1&discoveryInterval=10")
	if err != nil {
		t.Fatal(err)
	}
	cfg.Logger = esdb.NoopLogging()
	s, err := newStore(*cfg, "127.0.0.1:1", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestCallReplacesAClientThatClosedItself(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	s := unreachableStore(t)
	first := s.client

	// The first call's discovery fails, and the client closes itself.
	if err := readLast(ctx, first); err == nil || hasCode(err, esdb.ErrorCodeConnectionClosed) {
		t.Fatalf("first call: err = %v, want a discovery failure", err)
	}
	if err := readLast(ctx, first); !hasCode(err, esdb.ErrorCodeConnectionClosed) {
		t.Fatalf("second call on the same client: err = %v, want ErrorCodeConnectionClosed", err)
	}

	// Through the store, the closed client is replaced and the call retried.
	err := s.Ping(ctx)
	if err == nil || hasCode(err, esdb.ErrorCodeConnectionClosed) {
		t.Errorf("Ping: err = %v, want the new client's discovery failure", err)
	}
	if s.client == first {
		t.Errorf("the client that closed itself was not replaced")
	}
}

func TestCallsOnAClosedStoreFail(t *testing.T) {
	s := unreachableStore(t)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.ReadStream(t.Context(), "s"); !errors.Is(err, errClosed) {
		t.Errorf("ReadStream after Close: err = %v, want errClosed", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCallReturnsWhenTheContextEnds(t *testing.T) {
	s := unreachableStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	release := make(chan struct{})
	defer close(release)
	go func() {
		time.Sleep(50 * time.Millisecond)
		cancel()
	}()
	start := time.Now()
	_, err := call(ctx, s, func(context.Context, *esdb.Client) (int, error) {
		<-release // a client call that ignores its context
		return 0, nil
	})
	if !errors.Is(err, context.Canceled) || time.Since(start) > 5*time.Second {
		t.Errorf("call = %v after %v, want context.Canceled promptly", err, time.Since(start))
	}
}
