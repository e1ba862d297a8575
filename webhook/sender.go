package webhook

import (
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// Defaults of the senders (WEBHOOK_* settings in docs/configuration.md).
const (
	DefaultTimeout      = 10 * time.Second
	DefaultRetryFor     = 72 * time.Hour
	DefaultDisableAfter = 5 * 24 * time.Hour
	DefaultBackoffMin   = 5 * time.Second
	DefaultBackoffMax   = time.Hour
)

// The results of an attempt, as metrics count them.
const (
	ResultSucceeded = "succeeded"
	ResultFailed    = "failed"  // the delivery expired: no more retries
	ResultRetried   = "retried" // the attempt failed; another follows
)

// SenderOptions tune a Sender; the zero value is fine.
type SenderOptions struct {
	Workers     int // deliveries in flight in this instance (default 16)
	PerEndpoint int // of which at most this many to one endpoint (default 4)
	// Timeout bounds an attempt: a 2xx later than this is a failure
	// (default DefaultTimeout).
	Timeout time.Duration
	// RetryFor is how long after its first attempt a delivery is retried
	// before it fails (default DefaultRetryFor).
	RetryFor time.Duration
	// DisableAfter: an endpoint whose attempts have all failed this long,
	// with at least one delivery failed for good, is disabled through
	// Disable (default DefaultDisableAfter).
	DisableAfter time.Duration
	// BackoffMin and BackoffMax shape the retry delay: the n-th retry waits
	// a random time up to min(BackoffMax, BackoffMin·2^(n-1)) ("full
	// jitter"), so that receivers coming back are not hit by every sender
	// at once (defaults DefaultBackoffMin, DefaultBackoffMax).
	BackoffMin, BackoffMax time.Duration
	// Poll is how often an idle sender looks for due deliveries
	// (default 1 s); a local enqueue wakes it at once (Wake).
	Poll time.Duration
	// Guard dials the endpoints; nil: a strict one (public addresses only).
	Guard *Guard
	// Disable, when set, disables a dead endpoint on the write side, with
	// a reason the endpoint's API shows. Nil: endpoints are never disabled.
	Disable func(ctx context.Context, accountID, endpointID, reason string) error
	// Observe, when set, is told of each attempt's result (Result*).
	Observe func(result string)
	Now     func() time.Time // the clock (default time.Now)
}

func (o *SenderOptions) defaults() {
	setDefault(&o.Workers, 16)
	setDefault(&o.PerEndpoint, 4)
	setDefault(&o.Timeout, DefaultTimeout)
	setDefault(&o.RetryFor, DefaultRetryFor)
	setDefault(&o.DisableAfter, DefaultDisableAfter)
	setDefault(&o.BackoffMin, DefaultBackoffMin)
	setDefault(&o.BackoffMax, DefaultBackoffMax)
	setDefault(&o.Poll, time.Second)
	if o.Guard == nil {
		o.Guard = &Guard{}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
}

func setDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Sender sends due deliveries: a pool of workers in every instance, which
// share the work through the table (claims with FOR UPDATE SKIP LOCKED),
// so any number of instances send and none sends the same delivery at the
// same time.
type Sender struct {
	pool      *pgxpool.Pool
	store     events.Store
	render    Renderer
	endpoints Endpoints
	logger    *slog.Logger
	opts      SenderOptions
	client    *http.Client
	wake      chan struct{}
}

// NewSender returns a sender of the deliveries in pool, whose bodies
// render renders from the events in store.
func NewSender(pool *pgxpool.Pool, store events.Store, render Renderer, endpoints Endpoints, logger *slog.Logger, opts SenderOptions) *Sender {
	opts.defaults()
	return &Sender{pool: pool, store: store, render: render, endpoints: endpoints,
		logger: logger.With("component", "webhook-sender"), opts: opts,
		client: newClient(opts.Guard, opts.Timeout), wake: make(chan struct{}, 1)}
}

// newClient is the delivery client: it dials through the guard (every
// connection's address checked after DNS), ignores proxy settings (a proxy
// would dial in the guard's place) and follows no redirect (a redirect
// could point anywhere the guard did not see).
func newClient(g *Guard, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy: nil, DialContext: g.DialContext, ForceAttemptHTTP2: true,
			TLSHandshakeTimeout: timeout, MaxIdleConnsPerHost: 4, IdleConnTimeout: 90 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// Wake makes an idle sender look for due deliveries now.
func (s *Sender) Wake() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run sends until ctx ends, then waits for the attempts in flight.
func (s *Sender) Run(ctx context.Context) {
	var wg sync.WaitGroup
	defer wg.Wait()
	inFlight := make(chan struct{}, s.opts.Workers)
	for ctx.Err() == nil {
		free := s.opts.Workers - len(inFlight)
		claimed, err := s.claim(ctx, free)
		if err != nil && ctx.Err() == nil {
			s.logger.Error("claim due deliveries", "error", err)
		}
		for _, c := range claimed {
			inFlight <- struct{}{}
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.attempt(ctx, c)
				<-inFlight
				s.Wake()
			}()
		}
		if err == nil && free > 0 && len(claimed) == free {
			continue // there may be more due
		}
		select {
		case <-ctx.Done():
		case <-s.wake:
		case <-time.After(s.opts.Poll):
		}
	}
}

// lease is how long a claimed delivery is left to its sender: past it, a
// sender that died is presumed dead and the delivery is due again.
func (s *Sender) lease() time.Duration { return 2*s.opts.Timeout + 5*time.Second }

// backoff is the delay before retry n (1 after the first failure).
func (s *Sender) backoff(n int) time.Duration {
	ceiling := s.opts.BackoffMin
	for i := 1; i < n && ceiling < s.opts.BackoffMax; i++ {
		ceiling *= 2
	}
	ceiling = min(ceiling, s.opts.BackoffMax)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

// errorText bounds what an attempt keeps of an error.
func errorText(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// errEndpointGone ends a delivery whose endpoint was deleted or disabled
// after it was enqueued.
var errEndpointGone = fmt.Errorf("webhook: the endpoint is disabled or deleted")
