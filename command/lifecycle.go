package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/invoicing/invoicing/events"
)

// maxLifecycleAttempts bounds how often a lifecycle operation starts over
// after another writer changed the record (or its company's numbering)
// first; one more round reads back what it appended. Every lost round is
// another writer's success, so n writers racing on one record need at most
// n+1 rounds: the bound lets dozens of updates without If-Match land at
// once (none is lost) and still ends a loop that cannot.
const maxLifecycleAttempts = 100

// errStale means what an operation decided on has changed: start over.
var errStale = errors.New("the record changed while deciding")

// entity is how lifecycle operations see one kind of record (company,
// customer, invoice): its name in messages, and the fold of its stream
// into S with the version and id the record's ETag names. resume, when
// set, folds the events that follow a fold onto a copy of it, without
// changing the fold it is given; then the fold cache keeps the entity's
// long streams (fold_cache.go).
type entity[S any] struct {
	kind    string // "invoice", for messages
	fold    func([]events.RecordedEvent) (S, error)
	resume  func(S, []events.RecordedEvent) (S, error)
	version func(S) int
	id      func(S) string
}

// invoices is the invoice entity.
var invoices = entity[events.Invoice]{kind: "invoice", fold: events.FoldInvoice,
	version: func(inv events.Invoice) int { return inv.Version },
	id:      func(inv events.Invoice) string { return inv.InvoiceID }}

// lifecycle is one request to change an existing record. Its idempotency
// key cannot name a stream (the record has one already), so the events it
// appends carry the key's hash and the request's fingerprint in their
// metadata, and a retry finds them there.
type lifecycle[S any] struct {
	entity[S]
	req      Request
	id       string
	stream   string
	keyHash  string
	fp       string
	metadata json.RawMessage
	// serial, when set, is a key this instance's requests hold one at a
	// time while they decide and append (a company's numbering: serial.go).
	serial string
}

// newLifecycle starts a lifecycle operation on the record id, whose stream
// is stream, within scope (the path: company, record); its caller has
// checked the key (CheckIdempotencyKey). input is the request's meaning,
// its fingerprint.
func newLifecycle[S any](req Request, e entity[S], op operation, scope, id, stream string, input any) (lifecycle[S], error) {
	fp, err := fingerprint(op, scope, input)
	if err != nil {
		return lifecycle[S]{}, err
	}
	keyHash := events.IdempotencyKeyHash(req.Actor.AccountID, op.name, scope, req.IdempotencyKey)
	md, err := metadata(req, fp, keyHash)
	if err != nil {
		return lifecycle[S]{}, err
	}
	return lifecycle[S]{entity: e, req: req, id: id, stream: stream, keyHash: keyHash, fp: fp, metadata: md}, nil
}

// newInvoiceLifecycle starts a lifecycle operation on an invoice of the
// caller's company.
func (h *Handler) newInvoiceLifecycle(ctx context.Context, req Request, op operation, companyID, invoiceID string, input any) (lifecycle[events.Invoice], error) {
	stream, err := h.cfg.Directory.InvoiceStream(ctx, req.Actor.AccountID, companyID, invoiceID)
	if err != nil {
		return lifecycle[events.Invoice]{}, fmt.Errorf("invoice %s: %w", invoiceID, err)
	}
	return newLifecycle(req, invoices, op, companyID+"/"+invoiceID, invoiceID, stream, input)
}

// change runs a lifecycle operation: decide on the record as its stream has
// it, append at the stream's current revision, and start over when another
// writer got there first. The request's If-Match is checked against the
// record decided on (ErrPreconditionFailed), before decide. A decision of
// no event (an empty Type: the request changes nothing) appends nothing
// and answers the record as it is. After its own append it reads the
// stream once more, so a first answer and a replay are rendered the same
// way: the record as the request's event left it.
func change[S any](ctx context.Context, h *Handler, lc lifecycle[S], decide func(S) (events.EventData, error)) (Result[S], error) {
	appended := false
	for attempt := 0; attempt < maxLifecycleAttempts; attempt++ {
		res, at, done, err := changeOnce(ctx, h, lc, decide, &appended)
		if err != nil {
			return Result[S]{}, err
		}
		if done {
			return res, h.waitForReadModels(ctx, at.Position, at.Type)
		}
	}
	return Result[S]{}, fmt.Errorf("%s %s kept changing: %d attempts", lc.kind, lc.id, maxLifecycleAttempts)
}

// changeOnce is one round of change. done means the record is as the
// request leaves it: res is the answer, and at the event whose read models
// it waits for, outside the round (and its lock). Otherwise another writer
// got there first, or the round appended and must read its event back.
func changeOnce[S any](ctx context.Context, h *Handler, lc lifecycle[S], decide func(S) (events.EventData, error), appended *bool) (res Result[S], at events.RecordedEvent, done bool, err error) {
	if lc.serial != "" && !*appended { // reading back one's own event decides nothing
		release, err := h.serial.lock(ctx, lc.serial)
		if err != nil {
			return res, at, false, err
		}
		defer release()
	}
	rec, at, done, err := current(ctx, h, lc)
	if err != nil || done {
		return Result[S]{Value: rec, Replayed: !*appended}, at, done, err
	}
	if err := lc.req.IfMatch.check(lc.entity.id(rec), lc.version(rec)); err != nil {
		return res, at, false, fmt.Errorf("%s %s at version %d: %w", lc.kind, lc.id, lc.version(rec), err)
	}
	ev, err := decide(rec)
	switch {
	case errors.Is(err, errStale):
		return res, at, false, nil
	case err != nil:
		return res, at, false, err
	case ev.Type == "":
		return Result[S]{Value: rec}, at, true, nil
	}
	_, err = h.cfg.Store.Append(ctx, lc.stream, events.AtRevision(uint64(lc.version(rec)-1)), ev)
	if err != nil && !errors.Is(err, events.ErrWrongExpectedRevision) {
		return res, at, false, fmt.Errorf("append to %s %s: %w", lc.kind, lc.id, err)
	}
	*appended = *appended || err == nil
	return res, at, false, nil
}

// current folds the record's stream. done reports that this request's
// event is already there: rec is then the record as that event left it,
// and at is that event; otherwise at is the stream's last event. The same
// key with another request is ErrIdempotencyKeyReused.
func current[S any](ctx context.Context, h *Handler, lc lifecycle[S]) (rec S, at events.RecordedEvent, done bool, err error) {
	if lc.resume != nil {
		if f, ok := h.folds.lookup(lc.stream, h.folds.hash(lc.keyHash)); ok {
			if state, ok := f.state.(S); ok {
				return resumed(ctx, h, lc, state, f.last)
			}
		}
	}
	evs, err := h.cfg.Store.ReadStream(ctx, lc.stream)
	if err != nil {
		return rec, at, false, fmt.Errorf("read %s %s: %w", lc.kind, lc.id, err)
	}
	if rec, at, done, err = foldWhole(lc, evs); err != nil || done || lc.resume == nil || len(evs) < minFoldedEvents {
		return rec, at, done, err
	}
	mds, err := metadataOf(evs)
	if err != nil {
		return rec, at, false, err
	}
	h.folds.store(lc.stream, rec, at, 0, h.folds.hashes(mds))
	return rec, at, false, nil
}

// foldWhole is current from the whole stream, evs.
func foldWhole[S any](lc lifecycle[S], evs []events.RecordedEvent) (rec S, at events.RecordedEvent, done bool, err error) {
	key := []byte(lc.keyHash)
	for i := 1; i < len(evs); i++ {
		// Most events are other requests'. A key hash is base64url, which
		// JSON writes as it is: metadata without its bytes cannot carry
		// it, and is not decoded (a quarter of an update's CPU on a
		// stream of hundreds of events).
		if !bytes.Contains(evs[i].Metadata, key) {
			continue
		}
		var md events.Metadata
		if err := json.Unmarshal(evs[i].Metadata, &md); err != nil {
			return rec, at, false, fmt.Errorf("decode metadata of %s@%d: %w", lc.stream, i, err)
		}
		if md.IdempotencyKey != lc.keyHash {
			continue
		}
		if md.RequestFingerprint != lc.fp {
			return rec, at, false, ErrIdempotencyKeyReused
		}
		rec, err = lc.fold(evs[:i+1])
		return rec, evs[i], true, err
	}
	rec, err = lc.fold(evs)
	if len(evs) > 0 {
		at = evs[len(evs)-1]
	}
	return rec, at, false, err
}

// resumed is current from the fold the cache holds at last: it reads and
// folds only the events after last, and looks for the request's key among
// them (the cache holds none of its hash before).
func resumed[S any](ctx context.Context, h *Handler, lc lifecycle[S], state S, last events.RecordedEvent) (rec S, at events.RecordedEvent, done bool, err error) {
	evs, err := h.cfg.Store.ReadStreamFrom(ctx, lc.stream, last.Revision+1)
	if err != nil {
		return rec, at, false, fmt.Errorf("read %s %s: %w", lc.kind, lc.id, err)
	}
	mds, err := metadataOf(evs)
	if err != nil {
		return rec, at, false, err
	}
	mine := slices.IndexFunc(mds, func(md events.Metadata) bool { return md.IdempotencyKey == lc.keyHash })
	switch {
	case mine >= 0 && mds[mine].RequestFingerprint != lc.fp:
		return rec, at, false, ErrIdempotencyKeyReused
	case mine >= 0: // this request's event: the record as it left it
		if rec, err = lc.resume(state, evs[:mine+1]); err == nil && mine == len(evs)-1 {
			h.folds.store(lc.stream, rec, evs[mine], last.Revision+1, h.folds.hashes(mds)) // as a write reads back its own event
		}
		return rec, evs[mine], true, err
	}
	if rec, err = lc.resume(state, evs); err != nil || len(evs) == 0 {
		return rec, last, false, err
	}
	h.folds.store(lc.stream, rec, evs[len(evs)-1], last.Revision+1, h.folds.hashes(mds))
	return rec, evs[len(evs)-1], false, nil
}

// metadataOf decodes the metadata of evs, which says which lifecycle
// request appended each.
func metadataOf(evs []events.RecordedEvent) ([]events.Metadata, error) {
	mds := make([]events.Metadata, len(evs))
	for i, ev := range evs {
		if err := json.Unmarshal(ev.Metadata, &mds[i]); err != nil {
			return nil, fmt.Errorf("decode metadata of %s@%d: %w", ev.Stream, ev.Revision, err)
		}
	}
	return mds, nil
}
