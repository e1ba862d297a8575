package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

// maxLifecycleAttempts bounds how often a lifecycle operation starts over
// after another writer changed the invoice (or its company's numbering)
// first; one more round reads back what it appended.
const maxLifecycleAttempts = 16

// errStale means what an operation decided on has changed: start over.
var errStale = errors.New("the invoice changed while deciding")

// lifecycle is one request to change an existing invoice. Its idempotency
// key cannot name a stream (the invoice has one already), so the events it
// appends carry the key's hash and the request's fingerprint in their
// metadata, and a retry finds them there.
type lifecycle struct {
	req       Request
	companyID string
	invoiceID string
	stream    string
	keyHash   string
	fp        string
	metadata  json.RawMessage
}

// newLifecycle starts a lifecycle operation whose key its caller has
// checked (CheckIdempotencyKey), on an invoice of the caller's company.
func (h *Handler) newLifecycle(ctx context.Context, req Request, op operation, companyID, invoiceID string, input any) (lifecycle, error) {
	stream, err := h.cfg.Directory.InvoiceStream(ctx, req.Actor.AccountID, companyID, invoiceID)
	if err != nil {
		return lifecycle{}, fmt.Errorf("invoice %s: %w", invoiceID, err)
	}
	scope := companyID + "/" + invoiceID
	fp, err := fingerprint(op, scope, input)
	if err != nil {
		return lifecycle{}, err
	}
	keyHash := events.IdempotencyKeyHash(req.Actor.AccountID, op.name, scope, req.IdempotencyKey)
	md, err := metadata(req, fp, keyHash)
	if err != nil {
		return lifecycle{}, err
	}
	return lifecycle{req: req, companyID: companyID, invoiceID: invoiceID, stream: stream, keyHash: keyHash, fp: fp, metadata: md}, nil
}

// change runs a lifecycle operation: decide on the invoice as its stream has
// it, append at the stream's current revision, and start over when another
// writer got there first. After its own append it reads the stream once
// more, so a first answer and a replay are rendered the same way: the
// invoice as the request's event left it.
func (h *Handler) change(ctx context.Context, lc lifecycle, decide func(events.Invoice) (events.EventData, error)) (Result[events.Invoice], error) {
	appended := false
	for attempt := 0; attempt < maxLifecycleAttempts; attempt++ {
		inv, at, done, err := h.current(ctx, lc)
		if err != nil {
			return Result[events.Invoice]{}, err
		}
		if done {
			return Result[events.Invoice]{Value: inv, Replayed: !appended}, h.waitForReadModels(ctx, at.Position, at.Type)
		}
		ev, err := decide(inv)
		if errors.Is(err, errStale) {
			continue
		}
		if err != nil {
			return Result[events.Invoice]{}, err
		}
		_, err = h.cfg.Store.Append(ctx, lc.stream, events.AtRevision(uint64(inv.Version-1)), ev)
		if err != nil && !errors.Is(err, events.ErrWrongExpectedRevision) {
			return Result[events.Invoice]{}, fmt.Errorf("append to invoice %s: %w", lc.invoiceID, err)
		}
		appended = appended || err == nil
	}
	return Result[events.Invoice]{}, fmt.Errorf("invoice %s kept changing: %d attempts", lc.invoiceID, maxLifecycleAttempts)
}

// current folds the invoice's stream. done reports that this request's
// event is already there: inv is then the invoice as that event left it,
// and at is that event. The same key with another request is
// ErrIdempotencyKeyReused.
func (h *Handler) current(ctx context.Context, lc lifecycle) (inv events.Invoice, at events.RecordedEvent, done bool, err error) {
	evs, err := h.cfg.Store.ReadStream(ctx, lc.stream)
	if err != nil {
		return inv, at, false, fmt.Errorf("read invoice %s: %w", lc.invoiceID, err)
	}
	for i := 1; i < len(evs); i++ {
		var md events.Metadata
		if err := json.Unmarshal(evs[i].Metadata, &md); err != nil {
			return inv, at, false, fmt.Errorf("decode metadata of %s@%d: %w", lc.stream, i, err)
		}
		if md.IdempotencyKey != lc.keyHash {
			continue
		}
		if md.RequestFingerprint != lc.fp {
			return inv, at, false, ErrIdempotencyKeyReused
		}
		inv, err = events.FoldInvoice(evs[:i+1])
		return inv, evs[i], true, err
	}
	inv, err = events.FoldInvoice(evs)
	return inv, at, false, err
}
