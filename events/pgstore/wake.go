package pgstore

import (
	"context"
	"sync"
	"time"
)

// notifyChannel is the LISTEN/NOTIFY channel that tells other processes
// "new events committed: go read". Notifications carry no payload: readers
// always read from their own checkpoint.
const notifyChannel = "invoicing_events"

// broadcaster wakes every waiter at once: Wait hands out a channel that the
// next Broadcast closes.
type broadcaster struct {
	mu sync.Mutex
	ch chan struct{}
}

func newBroadcaster() *broadcaster { return &broadcaster{ch: make(chan struct{})} }

func (b *broadcaster) Wait() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

func (b *broadcaster) Broadcast() {
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.ch)
	b.ch = make(chan struct{})
}

// committed runs after every successful append: local subscribers wake at
// once, and other processes hear of it through the notifier.
func (s *Store) committed() {
	s.wake.Broadcast()
	select {
	case s.notify <- struct{}{}:
	default: // a notification is already pending; it covers this commit too
	}
}

// runNotifier sends NOTIFY outside the appending transactions. NOTIFY inside
// an append would take PostgreSQL's global notify lock at every commit and
// queue concurrent appends one commit at a time; here many commits share one
// notification instead.
func (s *Store) runNotifier(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.notify:
		}
		if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, '')`, notifyChannel); err != nil && ctx.Err() == nil {
			s.logger.Warn("event notification failed; subscribers fall back to polling", "error", err)
		}
	}
}

// startListener LISTENs on a dedicated connection, once per store, and turns
// notifications from any process into local wake-ups. Lost connections are
// retried with backoff; meanwhile subscribers poll.
func (s *Store) startListener() {
	s.listen.Do(func() {
		ctx, cancel := context.WithCancel(context.Background())
		s.wg.Add(2)
		go func() {
			defer s.wg.Done()
			<-s.stopped()
			cancel()
		}()
		go s.runListener(ctx)
	})
}

func (s *Store) runListener(ctx context.Context) {
	defer s.wg.Done()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		err := s.listenOnce(ctx)
		if ctx.Err() != nil {
			return
		}
		s.logger.Warn("event listener lost; retrying", "error", err, "backoff", backoff)
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
}

func (s *Store) listenOnce(ctx context.Context) error {
	pooled, err := s.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection carries a LISTEN; never hand it back to the pool.
	conn := pooled.Hijack()
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		return err
	}
	s.wake.Broadcast() // notifications may have been missed while away
	for {
		if _, err := conn.WaitForNotification(ctx); err != nil {
			return err
		}
		s.wake.Broadcast()
	}
}
