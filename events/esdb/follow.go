package esdb

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/invoicing/invoicing/events"
)

// The client never resubscribes by itself: a follower does, behind a small
// source interface so that tests can drop, repeat and stall a fake one.

// msgKind says what a subscription source reported.
type msgKind int

const (
	msgEvent   msgKind = iota // an event to deliver
	msgAlive                  // a checkpoint, or another sign of life
	msgDropped                // the server-side subscription ended; err says why
)

type message struct {
	kind  msgKind
	event events.RecordedEvent
	err   error
}

// source opens server-side catch-up subscriptions.
type source interface {
	// subscribe starts a subscription to the events after `after` (the
	// zero position: from the start). Its channel closes after a
	// msgDropped or when ctx ends; events may repeat ones at or before
	// `after`, which the follower drops.
	subscribe(ctx context.Context, after events.Position) (<-chan message, error)
}

// follower turns a source into an events.Subscription that survives drops:
// it resubscribes from the last delivered position with exponential backoff,
// and a watchdog resubscribes a feed that has gone silent (a server shutting
// down gracefully can leave one open and mute).
type follower struct {
	src       source
	logger    *slog.Logger
	minWait   time.Duration
	maxWait   time.Duration
	idle      time.Duration // the watchdog's limit
	buffer    int
	permanent func(error) bool // failures not worth retrying
	sleep     func(context.Context, time.Duration) bool
}

func newFollower(src source, logger *slog.Logger, permanent func(error) bool) *follower {
	return &follower{
		src:     src,
		logger:  logger,
		minWait: 100 * time.Millisecond,
		maxWait: 5 * time.Second,
		// A filtered subscription sends checkpoints while the server scans
		// other events, but nothing at all when the store is quiet; a
		// needless resubscribe then costs one short catch-up read.
		idle:      time.Minute,
		buffer:    256,
		permanent: permanent,
		sleep:     sleepCtx,
	}
}

// subscription implements events.Subscription.
type subscription struct {
	events chan events.RecordedEvent
	done   chan struct{} // closed after events
	mu     sync.Mutex
	err    error
}

func (s *subscription) Events() <-chan events.RecordedEvent { return s.events }

func (s *subscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// start opens the first subscription itself, so that a store that cannot
// subscribe at all says so to the caller, and follows it in a goroutine.
func (f *follower) start(ctx context.Context, from events.Position) (*subscription, error) {
	attempt, cancel := context.WithCancel(ctx)
	feed, err := f.src.subscribe(attempt, from)
	if err != nil {
		cancel()
		return nil, err
	}
	sub := &subscription{events: make(chan events.RecordedEvent, f.buffer), done: make(chan struct{})}
	go f.run(ctx, sub, from, feed, cancel)
	return sub, nil
}

func (f *follower) run(ctx context.Context, sub *subscription, last events.Position, feed <-chan message, cancel context.CancelFunc) {
	defer close(sub.done)
	defer close(sub.events)
	wait := f.minWait
	for {
		alive, err := f.drain(ctx, feed, &last, sub.events)
		cancel() // ends the attempt's server-side subscription, if still open
		if alive {
			wait = f.minWait
		}
		if ctx.Err() == nil {
			feed, cancel, err = f.resubscribe(ctx, last, err, &wait)
			if err == nil {
				continue
			}
		}
		if ctx.Err() != nil {
			err = endCause(ctx)
		}
		sub.mu.Lock()
		sub.err = err
		sub.mu.Unlock()
		return
	}
}

// endCause is the Err of a subscription whose context ended: none when the
// caller ended it, errClosed when the store did.
func endCause(ctx context.Context) error {
	if errors.Is(context.Cause(ctx), errClosed) {
		return errClosed
	}
	return nil
}

// drain delivers the feed's events after *last, dropping any at or before
// it (a resubscribed feed repeats them), until the feed drops, stays silent
// for f.idle, or ctx ends. It reports whether the feed showed any life.
func (f *follower) drain(ctx context.Context, feed <-chan message, last *events.Position, out chan<- events.RecordedEvent) (alive bool, err error) {
	watchdog := time.NewTimer(f.idle)
	defer watchdog.Stop()
	for {
		select {
		case <-ctx.Done():
			return alive, ctx.Err()
		case <-watchdog.C:
			return alive, fmt.Errorf("%w for %v", errSilent, f.idle)
		case m, ok := <-feed:
			switch {
			case !ok:
				return alive, errors.New("subscription feed closed")
			case m.kind == msgDropped:
				return alive, droppedError(m.err)
			case m.kind == msgEvent && m.event.Position.Compare(*last) > 0:
				select {
				case out <- m.event:
					*last = m.event.Position
				case <-ctx.Done():
					return true, ctx.Err()
				}
			}
			alive = true
			watchdog.Reset(f.idle) // Go 1.23+: no stale tick survives Reset
		}
	}
}

// errSilent reports a feed the watchdog gave up on.
var errSilent = errors.New("nothing received")

func droppedError(err error) error {
	if err == nil {
		return errors.New("subscription dropped")
	}
	return fmt.Errorf("subscription dropped: %w", err)
}

// resubscribe opens a new subscription after last, waiting before each
// attempt and doubling the wait up to f.maxWait. It gives up only when ctx
// ends or a failure is permanent.
func (f *follower) resubscribe(ctx context.Context, last events.Position, cause error, wait *time.Duration) (<-chan message, context.CancelFunc, error) {
	for {
		if f.permanent(cause) {
			return nil, nil, cause
		}
		// A quiet store also trips the watchdog: no warning for that.
		level := slog.LevelWarn
		if errors.Is(cause, errSilent) {
			level = slog.LevelInfo
		}
		f.logger.Log(ctx, level, "esdb: subscription to $all interrupted; resubscribing",
			"after", last.String(), "in", wait.String(), "err", cause)
		if !f.sleep(ctx, *wait) {
			return nil, nil, ctx.Err()
		}
		*wait = min(*wait*2, f.maxWait)
		attempt, cancel := context.WithCancel(ctx)
		feed, err := f.src.subscribe(attempt, last)
		if err == nil {
			return feed, cancel, nil
		}
		cancel()
		cause = err
	}
}

// sleepCtx waits d or until ctx ends, and reports whether it waited d.
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
