package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/follow"
	"github.com/invoicing/invoicing/internal/jsonlead"
)

// Renderer renders the event at revision of stream (all its events, read
// once by the sender) as its public JSON, the body of its deliveries; cmd
// passes transport.RenderPublicEvent.
type Renderer func(stream []events.RecordedEvent, revision uint64) (json.RawMessage, error)

// PublicType returns the public type of an internal event type, false for
// an event integrators never see; cmd passes publicevents.TypeOf.
type PublicType func(internalType string) (string, bool)

// Endpoint is a registered endpoint as delivery needs it.
type Endpoint struct {
	ID  string
	URL string
	// EventTypes are the public types it takes; empty (or "*"): all.
	EventTypes []string
	// Secrets sign its deliveries: the current one first, the previous
	// one while it is still valid after a rotation.
	Secrets   []string
	CreatedAt time.Time
	// Position, when set, is where the event that created the endpoint is
	// in the log: the endpoint takes the events after it. Unset, events
	// recorded at or after CreatedAt.
	Position events.Position
}

// Endpoints lists an account's enabled endpoints that are not deleted;
// cmd reads them from the webhook_endpoints read model.
type Endpoints interface {
	For(ctx context.Context, accountID string) ([]Endpoint, error)
}

// wants reports whether e takes events of the public type t.
func (e Endpoint) wants(t string) bool {
	return len(e.EventTypes) == 0 || slices.Contains(e.EventTypes, "*") || slices.Contains(e.EventTypes, t)
}

// precedes reports whether e existed when ev was recorded.
func (e Endpoint) precedes(ev events.RecordedEvent) bool {
	if !e.Position.IsZero() {
		return e.Position.Compare(ev.Position) < 0
	}
	return !e.CreatedAt.After(ev.RecordedAt)
}

// dispatcherLock names the dispatcher's advisory lock and checkpoint row.
const dispatcherLock = "webhook-dispatcher"

// DispatcherOptions tune a Dispatcher; the zero value is fine.
type DispatcherOptions struct {
	BatchSize int // events per transaction (default 500)
	// Await, when set, is called with a batch's last position before the
	// batch's endpoints are read: cmd passes a wait for the endpoints' read
	// model, so that an endpoint created just before an event is not
	// missed because its read model lagged behind the dispatcher.
	Await        func(ctx context.Context, pos events.Position) error
	follow.Retry // backoff and stand-by polling
	// Enqueued, when set, is told after each commit that enqueued
	// deliveries: the local senders look at once instead of at their
	// next poll.
	Enqueued func()
}

// Dispatcher follows the event log and enqueues a delivery for each public
// event and each endpoint of its account that takes it, in the same
// transaction as its checkpoint: exactly-once enqueue across crashes and
// failovers. One instance leads at a time (follow.TryLead).
type Dispatcher struct {
	store     events.Store
	pool      *pgxpool.Pool
	logger    *slog.Logger
	public    PublicType
	endpoints Endpoints
	opts      DispatcherOptions

	mu      sync.Mutex
	leading bool
	lastErr error
}

// NewDispatcher returns a dispatcher reading store and writing to pool.
func NewDispatcher(store events.Store, pool *pgxpool.Pool, logger *slog.Logger, public PublicType, endpoints Endpoints, opts DispatcherOptions) *Dispatcher {
	if opts.BatchSize <= 0 {
		opts.BatchSize = 500
	}
	opts.Retry.Defaults()
	return &Dispatcher{store: store, pool: pool, logger: logger.With("component", "webhook-dispatcher"),
		public: public, endpoints: endpoints, opts: opts}
}

// Err returns the error of the last failed attempt, nil once it recovers.
func (d *Dispatcher) Err() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.lastErr
}

// Leading reports whether this instance holds the dispatcher's lock.
func (d *Dispatcher) Leading() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.leading
}

func (d *Dispatcher) setState(leading bool, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.leading, d.lastErr = leading, err
}

// Run dispatches until ctx ends, restarting after failures with backoff
// and standing by while another instance leads.
func (d *Dispatcher) Run(ctx context.Context) {
	d.opts.Retry.Run(ctx, d.logger, func(err error) { d.setState(false, err) }, d.lead)
}

func (d *Dispatcher) lead(ctx context.Context) (committed bool, err error) {
	conn, err := follow.TryLead(ctx, d.pool, dispatcherLock)
	if err != nil {
		return false, err
	}
	defer conn.Close(context.Background())
	watched, stop := follow.Watch(ctx, conn)
	defer stop()
	pos, err := loadCheckpoint(watched, d.pool)
	if err != nil {
		return false, err
	}
	d.setState(true, nil)
	defer d.setState(false, nil)
	committed, err = d.follow(watched, pos)
	return committed, follow.Lost(watched, err)
}

// follow enqueues the subscription's events from pos on, a batch per
// transaction. The subscription never skips an event of the public types
// (others it may leave out, or deliver as positions, which deliveries
// passes over), and it starts at the committed checkpoint, so a new leader
// goes on where the last commit of the old one left off.
func (d *Dispatcher) follow(ctx context.Context, pos events.Position) (committed bool, err error) {
	subCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	sub, err := d.store.SubscribeAll(subCtx, pos, d.publicInternalTypes()...)
	if err != nil {
		return false, fmt.Errorf("subscribe from %s: %w", pos, err)
	}
	for {
		batch, ok := follow.NextBatch(ctx, sub, d.opts.BatchSize, nil)
		if !ok {
			if err := sub.Err(); err != nil {
				return committed, fmt.Errorf("subscription: %w", err)
			}
			return committed, ctx.Err()
		}
		if pos, err = d.dispatch(ctx, pos, batch); err != nil {
			return committed, err
		}
		committed = true
	}
}

// publicInternalTypes are the internal types whose payloads (metadata:
// the account) the dispatcher reads.
func (d *Dispatcher) publicInternalTypes() []string {
	var out []string
	for _, t := range events.Types {
		if _, ok := d.public(t); ok {
			out = append(out, t)
		}
	}
	return out
}

// dispatch enqueues one batch's deliveries and moves the checkpoint from
// from past it, in one transaction, and returns the new checkpoint. The
// transaction commits only while the checkpoint is still at from: a leader
// that lost its lock and commits before it learns so (follow.Watch) can
// never move back a checkpoint that the next leader moved on.
func (d *Dispatcher) dispatch(ctx context.Context, from events.Position, batch []events.RecordedEvent) (events.Position, error) {
	last := batch[len(batch)-1].Position
	if d.opts.Await != nil {
		if err := d.opts.Await(ctx, last); err != nil {
			return from, fmt.Errorf("wait for the endpoints up to %s: %w", last, err)
		}
	}
	rows, err := d.deliveries(ctx, batch)
	if err != nil {
		return from, err
	}
	// A batch read when ctx ends still commits: shutdown stops after it.
	txCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), follow.BatchTimeout)
	defer cancel()
	if err := commit(txCtx, d.pool, from, last, rows); err != nil {
		return from, fmt.Errorf("enqueue deliveries up to %s: %w", last, err)
	}
	if len(rows) > 0 && d.opts.Enqueued != nil {
		d.opts.Enqueued()
	}
	return last, nil
}

// newDelivery is a row to enqueue.
type newDelivery struct {
	id, endpointID, accountID string
	eventID                   uuid.UUID
	eventType, stream         string
	revision                  uint64
	pos                       events.Position
	at                        time.Time
}

// deliveries lists the batch's deliveries: each public event times each
// endpoint of its account that takes its type and existed when it was
// recorded.
func (d *Dispatcher) deliveries(ctx context.Context, batch []events.RecordedEvent) ([]newDelivery, error) {
	byAccount := map[string][]Endpoint{}
	var out []newDelivery
	for _, ev := range batch {
		t, ok := d.public(ev.Type)
		if !ok {
			continue
		}
		account, err := accountOf(ev)
		if err != nil {
			// No account's endpoint can take an event that names none; one
			// such event must not stop every account's deliveries.
			d.logger.Error("a public event names no account: no endpoint takes it", "stream", ev.Stream, "revision", ev.Revision, "error", err)
			continue
		}
		eps, seen := byAccount[account]
		if !seen {
			if eps, err = d.endpoints.For(ctx, account); err != nil {
				return nil, fmt.Errorf("endpoints of %s: %w", account, err)
			}
			byAccount[account] = eps
		}
		for _, ep := range eps {
			if ep.wants(t) && ep.precedes(ev) {
				out = append(out, deliveryOf(ep, account, t, ev))
			}
		}
	}
	return out, nil
}

// deliveryNamespace makes delivery ids a function of endpoint and event,
// so that the same enqueue twice is the same row.
var deliveryNamespace = uuid.MustParse("0f4b5a59-8d2e-4a1c-9c55-3f1d7c2b9e61")

func deliveryOf(ep Endpoint, account, publicType string, ev events.RecordedEvent) newDelivery {
	eventID := uuid.UUID(ev.ID)
	return newDelivery{
		id:         uuid.NewSHA1(deliveryNamespace, []byte(ep.ID+"/"+eventID.String())).String(),
		endpointID: ep.ID, accountID: account, eventID: eventID, eventType: publicType,
		stream: ev.Stream, revision: ev.Revision, pos: ev.Position, at: ev.RecordedAt,
	}
}

// accountOf reads the account from an event's metadata, which every event
// of this service carries. The write side writes it first (events.Metadata's
// first field) as a plain string, where jsonlead reads it without decoding
// the rest: json.Unmarshal of every public event's metadata was 3% of a
// catch-up's service CPU. Metadata written otherwise is decoded whole.
func accountOf(ev events.RecordedEvent) (string, error) {
	var account string
	jsonlead.Strings(ev.Metadata, func(key, value []byte) bool {
		if string(key) == "account_id" {
			account = string(value)
		}
		return false
	})
	if account != "" {
		return account, nil
	}
	var m events.Metadata
	if err := json.Unmarshal(ev.Metadata, &m); err != nil {
		return "", fmt.Errorf("metadata of event %x: %w", ev.ID, err)
	}
	if m.AccountID == "" {
		return "", fmt.Errorf("event %x: %w", ev.ID, errNoAccount)
	}
	return m.AccountID, nil
}

var errNoAccount = errors.New("its metadata names no account")
