// Package command is the write side, one file per use case: its request
// type, its parser (ParseCreateCompany, ...: the body decoded and validated
// once, every violation with its path, into a Parsed value), and the use
// case, which computes what the event records and appends it. A create
// appends one event to the stream named after its idempotency key; an issue
// or void appends to the invoice's own stream.
package command

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// Actor is the authenticated caller of a command, taken from the verified
// token by transport and passed explicitly.
type Actor struct {
	AccountID string
	Subject   string
	ClientID  string
}

// Request is what every write carries besides its body.
type Request struct {
	Actor          Actor
	RequestID      string
	IdempotencyKey string
	// IfMatch is the request's If-Match (nil when it sent none): a write
	// to an existing record applies only to a version it names, else
	// ErrPreconditionFailed.
	IfMatch *Precondition
	// TraceParent is the W3C trace context of the request, recorded in the
	// event's metadata so that an auditor can follow a create from the
	// HTTP call to the read model; "" when there is none.
	TraceParent string
}

// Result is what a command answers: the value rendered to the client, and
// whether it is a replay of an earlier request with the same key.
type Result[T any] struct {
	Value    T
	Replayed bool
}

// Waiter blocks until the read models that show events of eventType have
// applied the event at pos, so that a GET right after a 201 finds the
// resource.
type Waiter interface {
	WaitFor(ctx context.Context, pos events.Position, eventType string) error
}

// Config holds a Handler's collaborators.
type Config struct {
	Store     events.Store
	Waiter    Waiter
	Directory Directory
	Logger    *slog.Logger
	// WaitTimeout bounds the read-your-writes wait (default
	// DefaultWaitTimeout). Past it the create fails with ErrNotYetReadable;
	// the event is durable and a retry with the same key replays it.
	WaitTimeout time.Duration
	// The webhook endpoints' collaborators (webhook_endpoint.go): where
	// their streams are, the check of a URL, the secrets, and the public
	// event types an endpoint may subscribe to (publicevents.Types).
	WebhookEndpoints WebhookEndpointDirectory
	URLChecker       URLChecker
	WebhookSecrets   SecretDeriver
	PublicEventTypes []string
	// Now and NewID default to the clock and UUIDv7; tests replace them.
	Now   func() time.Time
	NewID func() (uuid.UUID, error)
	// FoldCacheKeys bounds the fold cache (default DefaultFoldCacheKeys;
	// negative: no cache).
	FoldCacheKeys int
}

// Handler executes create commands.
type Handler struct {
	cfg    Config
	folds  *foldCache
	serial *keyedLocks
}

// DefaultWaitTimeout bounds how long a create waits for the read models.
const DefaultWaitTimeout = 5 * time.Second

// NewHandler returns a Handler.
func NewHandler(cfg Config) *Handler {
	if cfg.WaitTimeout <= 0 {
		cfg.WaitTimeout = DefaultWaitTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewV7
	}
	if cfg.FoldCacheKeys == 0 {
		cfg.FoldCacheKeys = DefaultFoldCacheKeys
	}
	return &Handler{cfg: cfg, folds: newFoldCache(max(cfg.FoldCacheKeys, 0)), serial: newKeyedLocks()}
}

// now is the creation timestamp: UTC, truncated to microseconds so that the
// event, the read model and every response render the same string.
func (h *Handler) now() time.Time {
	return h.cfg.Now().UTC().Truncate(time.Microsecond)
}

func (h *Handler) newID() (string, error) {
	id, err := h.cfg.NewID()
	if err != nil {
		return "", fmt.Errorf("new id: %w", err)
	}
	return id.String(), nil
}

// operation names one kind of create for idempotency scopes and fingerprints.
type operation struct {
	name string // e.g. "companies.create"
	kind string // stream kind
}

// fingerprint identifies a request by its meaning: the normalised input
// (defaults not yet applied, so an omitted field equals an explicit null),
// the operation and the path scope.
func fingerprint(op operation, scope string, input any) (string, error) {
	body, err := json.Marshal(input)
	if err != nil {
		return "", fmt.Errorf("fingerprint: %w", err)
	}
	sum := sha256.Sum256(append([]byte(op.name+"\x00"+scope+"\x00"), body...))
	return hex.EncodeToString(sum[:]), nil
}

// create appends the one event of a create to its idempotency stream, or
// replays what an earlier request with the same key and meaning created.
// It appends first and reads only on conflict: new keys, the common case,
// cost one round trip. The answer is the payload build made, as the event
// records it; a replay decodes the stored event.
func create[T any](ctx context.Context, h *Handler, req Request, op operation, scope, fp string, build func() (string, T, error)) (Result[T], error) {
	stream := events.StreamName(op.kind, req.Actor.AccountID, op.name, scope, req.IdempotencyKey)
	eventType, payload, err := build()
	if err != nil {
		return Result[T]{}, err
	}
	ev, err := h.eventData(stream, eventType, payload, req, fp)
	if err != nil {
		return Result[T]{}, err
	}
	res, err := h.cfg.Store.Append(ctx, stream, events.NoStream(), ev)
	if errors.Is(err, events.ErrWrongExpectedRevision) {
		// An earlier or concurrent request with the same key won.
		out := Result[T]{Replayed: true}
		if done, err := h.replay(ctx, stream, fp, &out.Value); done || err != nil {
			return out, err
		}
		return Result[T]{}, fmt.Errorf("stream %s exists but cannot be read back", stream)
	}
	if err != nil {
		return Result[T]{}, fmt.Errorf("append: %w", err)
	}
	return Result[T]{Value: payload}, h.waitForReadModels(ctx, res.Position, eventType)
}

func (h *Handler) eventData(stream, eventType string, payload any, req Request, fp string) (events.EventData, error) {
	md, err := metadata(req, fp, "")
	if err != nil {
		return events.EventData{}, err
	}
	return newEvent(stream, 0, eventType, payload, md)
}

// metadata encodes what every event records of its request; keyHash is set
// for lifecycle operations only.
func metadata(req Request, fp, keyHash string) (json.RawMessage, error) {
	md, err := json.Marshal(events.Metadata{
		AccountID:          req.Actor.AccountID,
		Actor:              events.Actor{Subject: req.Actor.Subject, ClientID: req.Actor.ClientID},
		RequestID:          req.RequestID,
		TraceParent:        req.TraceParent,
		RequestFingerprint: fp,
		IdempotencyKey:     keyHash,
		SchemaVersion:      events.SchemaVersion,
	})
	if err != nil {
		return nil, fmt.Errorf("encode metadata: %w", err)
	}
	return md, nil
}

// newEvent builds the event at revision of stream, with the deterministic
// id that makes a retried append recognisable.
func newEvent(stream string, revision uint64, eventType string, payload any, md json.RawMessage) (events.EventData, error) {
	data, err := json.Marshal(payload)
	if err != nil {
		return events.EventData{}, fmt.Errorf("encode %s: %w", eventType, err)
	}
	return events.EventData{ID: events.EventID(stream, revision), Type: eventType, Data: data, Metadata: md}, nil
}

// replay reports done when the stream exists: it decodes the creating event
// into into if the fingerprint matches, else ErrIdempotencyKeyReused.
func (h *Handler) replay(ctx context.Context, stream, fp string, into any) (bool, error) {
	evs, err := h.cfg.Store.ReadStream(ctx, stream)
	if errors.Is(err, events.ErrStreamNotFound) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read stream: %w", err)
	}
	var md events.Metadata
	if err := json.Unmarshal(evs[0].Metadata, &md); err != nil {
		return false, fmt.Errorf("decode metadata of %s: %w", stream, err)
	}
	if md.RequestFingerprint != fp {
		return true, ErrIdempotencyKeyReused
	}
	if err := json.Unmarshal(evs[0].Data, into); err != nil {
		return false, fmt.Errorf("decode %s: %w", stream, err)
	}
	return true, h.waitForReadModels(ctx, evs[0].Position, evs[0].Type)
}

// waitForReadModels keeps the promise that a success means readable: it
// returns ErrNotYetReadable unless the read models confirm pos in time.
func (h *Handler) waitForReadModels(ctx context.Context, pos events.Position, eventType string) error {
	ctx, cancel := context.WithTimeout(ctx, h.cfg.WaitTimeout)
	defer cancel()
	if err := h.cfg.Waiter.WaitFor(ctx, pos, eventType); err != nil {
		h.cfg.Logger.Warn("a create is stored but the read models did not confirm it; asking the client to retry",
			"position", pos.String(), "error", err)
		return fmt.Errorf("%w (event at %s): %w", ErrNotYetReadable, pos, err)
	}
	return nil
}
