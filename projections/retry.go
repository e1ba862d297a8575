package projections

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
)

// RetryResult is what RetryQuarantined did.
type RetryResult struct {
	// Applied were applied to the live tables and left the quarantine.
	Applied []QuarantinedEvent
	// Remaining are still quarantined, with the latest attempt's error.
	Remaining []QuarantinedEvent
}

// errNoLongerQuarantined means another retry, or a rebuild's swap, released
// the event first.
var errNoLongerQuarantined = errors.New("no longer quarantined")

// errNotInStore means the store has no event where the quarantine says; the
// stream stops, as for an event that fails again.
var errNotInStore = errors.New("the event is not in the store")

// RetryQuarantined applies proj's quarantined events to its live tables
// again, in global order, once their cause is fixed (a new binary, a
// conflicting row removed). Each event gets its own transaction, which
// writes the event's statements, bumps the checkpoint's quarantine epoch and
// deletes the event's quarantine row, and commits only if exactly that one
// row was deleted and no earlier event of the stream is still quarantined:
// two retries at once, or a retry racing a rebuild's swap, apply an event at
// most once and never ahead of its stream. A stream stops at its first event
// that still fails, which keeps its new error; the stream's later events
// stay quarantined too.
//
// It is safe while the live runner runs: the epoch bump makes the runner's
// next commit fail and reload its quarantined streams, so it applies the
// stream's later events normally from then on. Events the runner quarantines
// during the retry are picked up by a further pass. Events are read back
// through store, so this works on either event store.
func RetryQuarantined(ctx context.Context, pool *pgxpool.Pool, store events.Store, proj Projection) (RetryResult, error) {
	r := &retrier{pool: pool, store: store, proj: proj, tried: map[events.Position]bool{},
		stopped: map[string]bool{}, streams: map[string][]events.RecordedEvent{}}
	var res RetryResult
	for {
		fresh, err := r.untried(ctx)
		if err != nil || len(fresh) == 0 {
			if err == nil {
				res.Remaining, err = listQuarantine(ctx, pool, []string{proj.Name()})
			}
			return res, err
		}
		applied, err := r.pass(ctx, fresh)
		res.Applied = append(res.Applied, applied...)
		if err != nil {
			return res, err
		}
	}
}

// retrier is one RetryQuarantined call's state.
type retrier struct {
	pool    *pgxpool.Pool
	store   events.Store
	proj    Projection
	tried   map[events.Position]bool
	stopped map[string]bool                   // streams whose event failed again
	streams map[string][]events.RecordedEvent // read back from the store
}

// untried lists the quarantined events this call has not tried yet.
func (r *retrier) untried(ctx context.Context) ([]QuarantinedEvent, error) {
	list, err := listQuarantine(ctx, r.pool, []string{r.proj.Name()})
	return slices.DeleteFunc(list, func(qe QuarantinedEvent) bool { return r.tried[qe.Position] }), err
}

// pass tries list, which is in global order, and returns what it applied.
func (r *retrier) pass(ctx context.Context, list []QuarantinedEvent) ([]QuarantinedEvent, error) {
	var applied []QuarantinedEvent
	for _, qe := range list {
		r.tried[qe.Position] = true
		if r.stopped[qe.Stream] {
			continue
		}
		err := r.retry(ctx, qe)
		switch {
		case err == nil:
			applied = append(applied, qe)
		case errors.Is(err, errNoLongerQuarantined):
		case deterministic(err) || errors.Is(err, errNotInStore):
			r.stopped[qe.Stream] = true
			if err := r.recordError(ctx, qe, err); err != nil {
				return applied, err
			}
		default:
			return applied, fmt.Errorf("retry %s at %s: %w", qe.Type, qe.Position, err)
		}
	}
	return applied, nil
}

// retry applies one event in its own transaction. The statements go in one
// round trip, in the order every writer takes its locks: read-model
// tables, checkpoint row, quarantine rows.
func (r *retrier) retry(ctx context.Context, qe QuarantinedEvent) error {
	ev, err := r.event(ctx, qe)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, r.pool, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		if err := r.proj.Apply(ev, b); err != nil {
			return &applyError{err}
		}
		queueRelease(b, qe)
		return tx.SendBatch(ctx, b).Close()
	})
}

// queueRelease queues the epoch bump and the checked deletion of qe's row.
func queueRelease(b *pgx.Batch, qe QuarantinedEvent) {
	b.Queue(`UPDATE public.projection_checkpoints SET quarantine_epoch = quarantine_epoch + 1 WHERE name = $1`, qe.Projection)
	b.Queue(`DELETE FROM public.projection_quarantine WHERE name = $1 AND position = $2`,
		qe.Projection, qe.Position.String()).Exec(func(tag pgconn.CommandTag) error {
		if tag.RowsAffected() != 1 {
			return errNoLongerQuarantined
		}
		return nil
	})
	b.Queue(`
		SELECT EXISTS (SELECT 1 FROM public.projection_quarantine
			WHERE name = $1 AND stream_name = $2 AND stream_revision < $3)`,
		qe.Projection, qe.Stream, int64(qe.Revision)).QueryRow(func(row pgx.Row) error {
		var earlier bool
		if err := row.Scan(&earlier); err != nil {
			return err
		}
		if earlier {
			return errEarlierQuarantined
		}
		return nil
	})
}

// event reads qe's event back from the store, by stream and revision.
func (r *retrier) event(ctx context.Context, qe QuarantinedEvent) (events.RecordedEvent, error) {
	evs, ok := r.streams[qe.Stream]
	if !ok {
		var err error
		if evs, err = r.store.ReadStream(ctx, qe.Stream); err != nil {
			return events.RecordedEvent{}, fmt.Errorf("read stream %s: %w", qe.Stream, err)
		}
		r.streams[qe.Stream] = evs
	}
	i := slices.IndexFunc(evs, func(ev events.RecordedEvent) bool { return ev.Revision == qe.Revision })
	if i < 0 || evs[i].ID != qe.EventID {
		return events.RecordedEvent{}, fmt.Errorf("%w: %x, revision %d of %s", errNotInStore, qe.EventID, qe.Revision, qe.Stream)
	}
	ev := evs[i]
	// Rows are keyed by the position the runner met the event at; a
	// stream read need not carry the global position.
	ev.Position = qe.Position
	return ev, nil
}

// recordError keeps the latest attempt's error on a still quarantined event.
func (r *retrier) recordError(ctx context.Context, qe QuarantinedEvent, cause error) error {
	_, err := r.pool.Exec(ctx, `UPDATE public.projection_quarantine SET error = $3 WHERE name = $1 AND position = $2`,
		qe.Projection, qe.Position.String(), cause.Error())
	if err != nil {
		return fmt.Errorf("record the error of %s at %s: %w", qe.Type, qe.Position, err)
	}
	return nil
}
