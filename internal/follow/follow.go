// Package follow holds what every follower of the event log shares (the
// projection runners and the audit sealer): one leader per name across
// processes (a session advisory lock), a retry loop with backoff, and
// batches taken from a subscription.
package follow

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// BatchTimeout bounds one batch transaction, so that a stuck database cannot
// hold shutdown forever.
const BatchTimeout = 30 * time.Second

// ErrNotLeader means another process holds the lock.
var ErrNotLeader = errors.New("follow: another process leads")

// LockKey maps a name to its advisory lock. The keys are part of the
// contract between running instances: an instance of an older release
// computes the same key for the same name, so the two exclude each other.
func LockKey(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("projection:" + name))
	return int64(h.Sum64())
}

// TryLead takes name's session lock on a connection taken out of the pool
// for good: the lock lives as long as the connection, which the caller
// closes to give it up. ErrNotLeader when another process holds it.
func TryLead(ctx context.Context, pool *pgxpool.Pool, name string) (*pgx.Conn, error) {
	pooled, err := pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("acquire lock connection: %w", err)
	}
	conn := pooled.Hijack()
	var got bool
	err = conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, LockKey(name)).Scan(&got)
	if err == nil && !got {
		err = ErrNotLeader
	} else if err != nil {
		err = fmt.Errorf("try lock: %w", err)
	}
	if err != nil {
		_ = conn.Close(context.Background()) // closing is how a session lock is given up; nothing to report
		return nil, err
	}
	return conn, nil
}

// ErrLeadLost means the session that took a leader's lock has ended: its
// connection broke or its backend was ended. Another process may lead by
// now.
var ErrLeadLost = errors.New("follow: the session holding this leader's lock has ended")

// Watch returns a context that ends, with ErrLeadLost as its cause, when
// the lock connection conn (TryLead's) ends. Nothing else tells a leader
// that its lock is gone, as it works on other connections: without a watch
// it would go on beside the process that took the lock after it. conn
// waits for a notification that never comes, so its end is seen when it
// happens, at no cost. stop ends the watch (and with it conn, which the
// caller closes anyway); call it before conn.Close.
func Watch(ctx context.Context, conn *pgx.Conn) (watched context.Context, stop func()) {
	watched, cancel := context.WithCancelCause(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			err := conn.PgConn().WaitForNotification(watched)
			if watched.Err() != nil {
				return
			}
			if err != nil {
				cancel(fmt.Errorf("%w: %w", ErrLeadLost, err))
				return
			}
		}
	}()
	return watched, func() { cancel(nil); <-done }
}

// Lost returns what ended a leader that ran on watched (from Watch): the
// lost lock when that ended it, err otherwise.
func Lost(watched context.Context, err error) error {
	if cause := context.Cause(watched); errors.Is(cause, ErrLeadLost) {
		return cause
	}
	return err
}

// Retry tunes how a leader (a projection runner, the sealer) retries; the
// zero value is fine.
type Retry struct {
	MinBackoff time.Duration // first retry delay after a failure (default 100 ms)
	// MaxBackoff is the longest retry delay (default 500 ms): short, so that
	// a leader resumes within a second of the database accepting
	// connections again; a failing attempt costs one connection attempt,
	// which a recovering server can afford.
	MaxBackoff  time.Duration
	StandbyPoll time.Duration // how often a standby tries the lock (default 1 s)
}

// Defaults sets the fields left zero to their defaults.
func (r *Retry) Defaults() {
	if r.MinBackoff <= 0 {
		r.MinBackoff = 100 * time.Millisecond
	}
	if r.MaxBackoff <= 0 {
		r.MaxBackoff = 500 * time.Millisecond
	}
	if r.StandbyPoll <= 0 {
		r.StandbyPoll = time.Second
	}
}

// Run calls lead until ctx ends: again after a stand-by poll while another
// process leads (lead returned ErrNotLeader), and after an exponential
// backoff when it fails, reporting each outcome to setState (nil: healthy,
// leading or standing by). The backoff starts over once lead committed
// something: a failure after a stretch of work (the database restarting,
// say) is retried at once, not after the delay a previous outage had grown
// to. Call Defaults first.
func (r Retry) Run(ctx context.Context, logger *slog.Logger, setState func(error), lead func(context.Context) (committed bool, err error)) {
	backoff := r.MinBackoff
	for ctx.Err() == nil {
		committed, err := lead(ctx)
		if committed {
			backoff = r.MinBackoff
		}
		wait := r.StandbyPoll
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, ErrNotLeader):
			setState(nil)
		default:
			setState(err)
			logger.Error("failed; restarting", "error", err, "backoff", backoff)
			wait, backoff = backoff, min(backoff*2, r.MaxBackoff)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// NextBatch blocks for one event, then takes whatever else is already
// waiting, up to size; ok is false when the subscription or ctx ended. It
// returns no batch, ok, when timeout fires first.
func NextBatch(ctx context.Context, sub events.Subscription, size int, timeout <-chan time.Time) (batch []events.RecordedEvent, ok bool) {
	select {
	case ev, open := <-sub.Events():
		if !open {
			return nil, false
		}
		return take(sub, append(capacityFor(sub, size), ev), size), true
	case <-timeout:
		return nil, true
	case <-ctx.Done():
		return nil, false
	}
}

// Gather takes events from sub until it has size, waiting for them, and
// returns early when stop is closed (with what is waiting then) or sub
// ends. A runner reading ahead gathers its next batch this way while it
// writes the one before: taking only what was waiting at the start, it
// would get what remains of a page the subscription is still handing over
// and write the backlog in short batches.
func Gather(sub events.Subscription, size int, stop <-chan struct{}) []events.RecordedEvent {
	batch := make([]events.RecordedEvent, 0, size)
	for {
		if batch = take(sub, batch, size); len(batch) == size {
			return batch
		}
		select { // nothing waiting: wait for one event
		case ev, open := <-sub.Events():
			if !open {
				return batch
			}
			batch = append(batch, ev)
		case <-stop:
			return take(sub, batch, size)
		}
	}
}

// capacityFor is an empty batch with room for what sub holds and one more,
// up to size: a catch-up's batches are thousands of events, which growing
// by append copied over and over.
func capacityFor(sub events.Subscription, size int) []events.RecordedEvent {
	return make([]events.RecordedEvent, 0, min(size, len(sub.Events())+1))
}

// take appends to batch what sub holds already, until batch has size
// events.
func take(sub events.Subscription, batch []events.RecordedEvent, size int) []events.RecordedEvent {
	for len(batch) < size {
		select {
		case ev, open := <-sub.Events():
			if !open {
				return batch
			}
			batch = append(batch, ev)
		default:
			return batch
		}
	}
	return batch
}
