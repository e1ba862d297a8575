package esdb

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"

	"github.com/invoicing/invoicing/events"
)

// SubscribeAll implements events.Store with a catch-up subscription to $all,
// filtered on the server to this service's event types. It ends when ctx
// ends, when the store is closed (Err then says so), or on a failure that
// retrying cannot mend, such as missing permissions.
//
// It delivers every event with its payload, whatever payloadsOf says: the
// server's filter already leaves out other services' events, and a
// projection's share of this service's events is worth its round trips.
func (s *Store) SubscribeAll(ctx context.Context, from events.Position, payloadsOf ...string) (events.Subscription, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	stopOnClose := context.AfterFunc(s.stopped, func() { cancel(errClosed) })
	f := newFollower(storeSource{s}, s.logger, permanent)
	sub, err := f.start(ctx, from)
	if err != nil {
		stopOnClose()
		cancel(nil)
		return nil, fmt.Errorf("esdb: subscribe to $all after %s: %w", from, err)
	}
	go func() {
		<-sub.done
		stopOnClose()
		cancel(nil)
	}()
	return sub, nil
}

// permanent reports failures that resubscribing cannot mend.
func permanent(err error) bool {
	return hasCode(err, esdb.ErrorCodeUnauthenticated) ||
		hasCode(err, esdb.ErrorCodeAccessDenied) ||
		hasCode(err, esdb.ErrorCodeUnsupportedFeature)
}

// typeFilter selects exactly this service's event types on the server, so
// that catching up does not ship every other event to the client. With a
// filter the server also sends checkpoints, which feed the watchdog.
func typeFilter() *esdb.SubscriptionFilter {
	quoted := make([]string, len(events.Types))
	for i, t := range events.Types {
		quoted[i] = regexp.QuoteMeta(t)
	}
	return &esdb.SubscriptionFilter{
		Type:  esdb.EventFilterType,
		Regex: "^(" + strings.Join(quoted, "|") + ")$",
	}
}

// storeSource opens subscriptions with the store's current client.
type storeSource struct{ s *Store }

func (src storeSource) subscribe(ctx context.Context, after events.Position) (<-chan message, error) {
	opts := esdb.SubscribeToAllOptions{From: fromPosition(after), Filter: typeFilter()}
	sub, err := call(ctx, src.s, func(ctx context.Context, c *esdb.Client) (*esdb.Subscription, error) {
		// The subscription lives on ctx, the attempt's context: it ends
		// when the follower cancels the attempt.
		return c.SubscribeToAll(ctx, opts)
	})
	if err != nil {
		return nil, err
	}
	feed := make(chan message)
	go pump(ctx, sub, feed)
	return feed, nil
}

// pump turns the client's blocking Recv into the follower's channel.
func pump(ctx context.Context, sub *esdb.Subscription, feed chan<- message) {
	defer close(feed)
	defer sub.Close()
	for {
		m := translate(sub.Recv())
		select {
		case feed <- m:
		case <-ctx.Done():
			return
		}
		if m.kind == msgDropped {
			return
		}
	}
}

// translate maps one client notification onto a follower message. Events the
// filter let through but that are not this service's (a stream under "$")
// count as signs of life only.
func translate(e *esdb.SubscriptionEvent) message {
	switch {
	case e.SubscriptionDropped != nil:
		return message{kind: msgDropped, err: e.SubscriptionDropped.Error}
	case e.EventAppeared != nil && e.EventAppeared.Event != nil && isServiceEvent(e.EventAppeared.Event):
		return message{kind: msgEvent, event: recorded(e.EventAppeared.Event)}
	}
	return message{kind: msgAlive}
}
