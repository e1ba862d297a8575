package pgstore

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// notifyChannel is the LISTEN/NOTIFY channel that tells other processes
// "new events committed: go read". Notifications carry no payload: readers
// always read from their own checkpoint.
const notifyChannel = "invoicing_events"

// broadcaster wakes waiters by the event types they read: Wait hands out a
// channel that the next Broadcast of one of those types closes. A projection
// of companies then sleeps through a stream of invoice appends (its
// subscription's poll interval still moves it along), instead of reading
// after each of them. Waiters of the same types share a channel.
type broadcaster struct {
	mu      sync.Mutex
	waiting map[string]*waiters // by the types' key
}

type waiters struct {
	types []string // nil: every type
	ch    chan struct{}
}

func newBroadcaster() *broadcaster { return &broadcaster{waiting: map[string]*waiters{}} }

// Wait returns a channel closed by the next commit of an event of types
// (nil: of any type).
func (b *broadcaster) Wait(types []string) <-chan struct{} {
	key := strings.Join(types, ",")
	b.mu.Lock()
	defer b.mu.Unlock()
	w, ok := b.waiting[key]
	if !ok {
		w = &waiters{types: types, ch: make(chan struct{})}
		b.waiting[key] = w
	}
	return w.ch
}

// Broadcast wakes the waiters of any of types (nil: every waiter).
func (b *broadcaster) Broadcast(types []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for key, w := range b.waiting {
		if types == nil || w.types == nil || slices.ContainsFunc(types, func(t string) bool { return slices.Contains(w.types, t) }) {
			close(w.ch)
			delete(b.waiting, key)
		}
	}
}

// committed runs after every successful append of events of types: local
// subscribers of those types wake at once, and other processes hear of it
// through the notifier.
func (s *Store) committed(types []string) {
	s.wake.Broadcast(types)
	s.pending.add(types)
	select {
	case s.notify <- struct{}{}:
	default: // a notification is already pending; it covers this commit too
	}
}

// runNotifier sends NOTIFY outside the appending transactions. NOTIFY inside
// an append would take PostgreSQL's global notify lock at every commit and
// queue concurrent appends one commit at a time; here many commits share one
// notification instead, which names the union of their event types.
func (s *Store) runNotifier(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.notify:
		}
		types := s.pending.take()
		if len(types) == 0 {
			continue // a commit signalled after the last notification took its types
		}
		payload := notification{sender: s.instance, types: types}.String()
		if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, notifyChannel, payload); err != nil && ctx.Err() == nil {
			s.logger.Warn("event notification failed; subscribers fall back to polling", "error", err)
		}
	}
}

// notification is the payload of a NOTIFY: the sending store and the types
// of the events it committed, as "sender type,type…". The listener of the
// sending process skips its own (committed already woke its subscribers),
// and others wake only the subscribers of those types: during a burst of
// invoice creates the companies and customers projections of every instance,
// the sender's included, had read a page at every notification. A payload
// that does not parse (a version before this one sent none) wakes every
// subscriber, as before.
type notification struct {
	sender string
	types  []string // nil: any type
}

func (n notification) String() string {
	return n.sender + " " + strings.Join(n.types, ",")
}

func parseNotification(payload string) notification {
	sender, types, ok := strings.Cut(payload, " ")
	if !ok || sender == "" || types == "" {
		return notification{}
	}
	return notification{sender: sender, types: strings.Split(types, ",")}
}

// pendingTypes gathers the event types committed since the last
// notification was sent.
type pendingTypes struct {
	mu    sync.Mutex
	types []string
}

func (p *pendingTypes) add(types []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range types {
		if !slices.Contains(p.types, t) {
			p.types = append(p.types, t)
		}
	}
}

// take returns the gathered types, sorted, and forgets them.
func (p *pendingTypes) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	types := p.types
	p.types = nil
	slices.Sort(types)
	return types
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
	s.wake.Broadcast(nil) // notifications may have been missed while away
	for {
		msg, err := conn.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		n := parseNotification(msg.Payload)
		if n.sender == s.instance {
			continue // committed woke this store's subscribers already
		}
		s.wake.Broadcast(n.types)
	}
}
