// Package esdb is the EventStoreDB adapter of events.Store, on the gRPC
// client github.com/EventStore/EventStore-Client-Go/v4 (v4.2.0).
//
// The client has sharp edges this package files down (see
// shared/notes/eventstoredb.md): it dials lazily and discovers the node
// without looking at the caller's context, closes itself for good after
// failed discoveries, acknowledges a re-sent event id without comparing
// bodies, and logs to the console unless told otherwise.
package esdb

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/invoicing/invoicing/events"
)

// probeTimeout bounds Open's readiness check, so that a wrong or unreachable
// address fails start-up within seconds instead of hanging.
const probeTimeout = 5 * time.Second

// callLimit bounds how long any one call waits for the client when the
// caller's context has no sooner deadline: node discovery ignores contexts.
const callLimit = time.Minute

// closeWait bounds how long Close waits for calls still using the client.
const closeWait = 10 * time.Second

// errClosed reports a call on a closed Store, or a subscription ended by
// Close.
var errClosed = errors.New("esdb: store closed")

// Store implements events.Store on EventStoreDB.
type Store struct {
	cfg     esdb.Configuration // template of every client the store builds
	where   string             // the server or seeds, for messages
	logger  *slog.Logger
	stopped context.Context // ends subscriptions on Close
	stop    context.CancelFunc

	mu       sync.Mutex
	client   *esdb.Client
	closed   bool
	inflight sync.WaitGroup // calls using a client; Close waits for them
}

// Open connects to the EventStoreDB named by url (esdb://, esdb+discover://,
// or KurrentDB's kurrentdb:// forms) and checks within a few seconds that it
// answers. The client's own logs go to logger (nil discards them).
func Open(ctx context.Context, url string, logger *slog.Logger) (*Store, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cfg, err := parseURL(url)
	if err != nil {
		return nil, err
	}
	cfg.Logger = clientLogger(logger)
	where := describe(cfg)
	if err := probe(ctx, *cfg, probeTimeout); err != nil {
		return nil, fmt.Errorf("esdb: EventStoreDB at %s is not ready: %w", where, err)
	}
	return newStore(*cfg, where, logger)
}

func newStore(cfg esdb.Configuration, where string, logger *slog.Logger) (*Store, error) {
	c := cfg
	client, err := esdb.NewClient(&c)
	if err != nil {
		return nil, fmt.Errorf("esdb: client for %s: %w", where, err)
	}
	stopped, stop := context.WithCancel(context.Background())
	return &Store{cfg: cfg, where: where, logger: logger, stopped: stopped, stop: stop, client: client}, nil
}

// clientLogger routes the client's printf-style logs into slog. The
// client's "error" lines become warnings: it logs one for every dropped
// subscription, ours included, and every real failure also comes back to
// the caller, who decides how bad it is. Its chatty "info" lines (discovery
// attempts) become debug.
func clientLogger(logger *slog.Logger) esdb.LoggingFunc {
	logger = logger.With("component", "esdb-client")
	return func(level esdb.LogLevel, format string, args ...any) {
		lvl := slog.LevelDebug
		if level == esdb.LogWarn || level == esdb.LogError {
			lvl = slog.LevelWarn
		}
		ctx := context.Background()
		if logger.Enabled(ctx, lvl) {
			logger.Log(ctx, lvl, fmt.Sprintf(format, args...))
		}
	}
}

// probe checks readiness with a throwaway client, so that the client the
// store keeps never saw a failed discovery (after which it would have
// closed itself for good).
func probe(ctx context.Context, cfg esdb.Configuration, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	client, err := esdb.NewClient(&cfg)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() {
		// Closed here, once the call has returned: closing the client while
		// a call may still be handing it a request would panic.
		defer client.Close()
		done <- readLast(ctx, client)
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("no answer within %v: %w", limit, ctx.Err())
	}
}

// readLast reads the last record of $all: cheap, and it needs the same
// permission ReadAll and SubscribeAll need.
func readLast(ctx context.Context, c *esdb.Client) error {
	rs, err := c.ReadAll(ctx, esdb.ReadAllOptions{Direction: esdb.Backwards, From: esdb.End{}}, 1)
	if err != nil {
		return err
	}
	defer rs.Close()
	if _, err := rs.Recv(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}

// Ping implements events.Store.
func (s *Store) Ping(ctx context.Context) error {
	_, err := call(ctx, s, func(ctx context.Context, c *esdb.Client) (struct{}, error) {
		return struct{}{}, readLast(ctx, c)
	})
	if err != nil {
		return fmt.Errorf("esdb: ping %s: %w", s.where, err)
	}
	return nil
}

// Close ends subscriptions and closes the client once no call uses it.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	client := s.client
	s.mu.Unlock()
	s.stop()

	idle := make(chan struct{})
	go func() {
		s.inflight.Wait()
		close(idle)
	}()
	select {
	case <-idle:
		return client.Close()
	case <-time.After(closeWait):
		// Closing now could panic a call still handing the client a request;
		// leaving the connection to the process's exit is the lesser harm.
		return fmt.Errorf("esdb: close: calls still running after %v; connection left open", closeWait)
	}
}

// call runs op on the store's client. It returns when ctx ends (or after
// callLimit) even if op does not, since the client discovers nodes without
// looking at contexts; op must therefore not leave anything open for the
// caller. When the client has closed itself after failed discoveries, call
// builds a new one and tries once more: the error comes before anything is
// sent, so a retry cannot write twice.
func call[T any](ctx context.Context, s *Store, op func(context.Context, *esdb.Client) (T, error)) (T, error) {
	var zero T
	for attempt := 0; ; attempt++ {
		client, err := s.acquire()
		if err != nil {
			return zero, err
		}
		v, err := bounded(ctx, func() (T, error) {
			defer s.inflight.Done()
			return op(ctx, client)
		})
		if attempt == 0 && hasCode(err, esdb.ErrorCodeConnectionClosed) {
			s.renew(client)
			continue
		}
		if unavailable(err) {
			err = fmt.Errorf("%w: %w", events.ErrUnavailable, err)
		}
		return v, err
	}
}

// unavailable reports the client errors that mean the cluster could not
// serve the call now (no connection, no leader, out of time).
func unavailable(err error) bool {
	return hasCode(err, esdb.ErrorCodeConnectionClosed) || hasCode(err, esdb.ErrorCodeDeadlineExceeded) ||
		hasCode(err, esdb.ErrorCodeNotLeader)
}

// bounded runs f in a goroutine and waits for it, for ctx, or for callLimit.
func bounded[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	limit := time.NewTimer(callLimit)
	defer limit.Stop()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	case <-limit.C:
		var zero T
		return zero, fmt.Errorf("no answer within %v", callLimit)
	}
}

// acquire returns the current client and counts the call as in flight.
func (s *Store) acquire() (*esdb.Client, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	s.inflight.Add(1)
	return s.client, nil
}

// renew replaces a client that closed itself, unless another call already
// did. The old client is dropped, not closed: its connection goroutine has
// already exited, and closing it could panic a call still blocked handing
// it a request.
func (s *Store) renew(old *esdb.Client) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.client != old {
		return
	}
	cfg := s.cfg
	client, err := esdb.NewClient(&cfg)
	if err != nil {
		s.logger.Error("esdb: cannot rebuild the client", "server", s.where, "err", err)
		return
	}
	s.client = client
	s.logger.Warn("esdb: the client closed itself after failed discoveries; built a new one", "server", s.where)
}
