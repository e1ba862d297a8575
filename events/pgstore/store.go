// Package pgstore is the PostgreSQL adapter of events.Store, the embedded
// default store used by `make run` and the tests.
package pgstore

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgerr"
	"github.com/invoicing/invoicing/internal/pgmigrate"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the event store's schema migrations.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	return pgmigrate.Apply(ctx, pool, "events", migrations, "migrations")
}

// Store implements events.Store on a PostgreSQL database.
type Store struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	wake   *broadcaster
	notify chan struct{}
	poll   time.Duration
	// instance names this store in its notifications, so that its own
	// listener can tell them from other processes'.
	instance string
	// knownTypes is events.Types as a typeList: readers leave out types
	// this service does not know.
	knownTypes string
	pending    pendingTypes
	appends    chan *appendRequest // unbuffered: a send is taken by an appender
	// beforePendingCheck, when set by a test, runs between a
	// subscription's empty page and its check for pending events.
	beforePendingCheck func()

	stopCtx context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	listen  sync.Once
	closeMu sync.Once
	// tail is the log's latest events, read once for every subscription
	// (nil when Options.TailWindow is negative); tailOnce starts its reader.
	tail     *tailWindow
	tailOnce sync.Once
	// shared are the latest full pages, for catching-up subscriptions;
	// sparse the latest pages read skipping payloads, for those that keep
	// few events.
	shared, sparse *sharedPages
	// pageReads counts the log's page reads (readPage), for the tests that
	// hold the window to its purpose.
	pageReads atomic.Int64
}

// Options tune a Store; the zero value is fine.
type Options struct {
	// PollInterval bounds how long a subscriber waits without a
	// notification before it reads again (default 1 s). Commits here and
	// NOTIFYs from other processes wake subscribers at once, so the poll is
	// a safety net, and what moves a subscriber that no wake-up concerns
	// (a companies projection during invoice creates); an idle service
	// pays for it in statements and wake-ups.
	PollInterval time.Duration
	// TailWindow is how many of the log's latest events the store keeps for
	// its subscriptions (tailWindow; default DefaultTailWindow); negative:
	// none, every subscription reads for itself.
	TailWindow int
	// ConvoyPatience is how long a catching-up subscription waits, at
	// most, for a slower one to take the oldest shared page before it
	// reads a new one (sharedPages; default DefaultConvoyPatience).
	ConvoyPatience time.Duration
}

// New returns a Store on pool, whose schema Migrate has created. The store
// does not own pool; Close stops its background goroutines only.
func New(pool *pgxpool.Pool, logger *slog.Logger, opts Options) *Store {
	if opts.PollInterval <= 0 {
		opts.PollInterval = time.Second
	}
	if opts.ConvoyPatience <= 0 {
		opts.ConvoyPatience = DefaultConvoyPatience
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Store{
		pool:       pool,
		logger:     logger,
		wake:       newBroadcaster(),
		notify:     make(chan struct{}, 1),
		poll:       opts.PollInterval,
		instance:   uuid.NewString(),
		knownTypes: typeList(events.Types),
		appends:    make(chan *appendRequest),
		shared:     newSharedPages(false, opts.ConvoyPatience),
		sparse:     newSharedPages(true, opts.ConvoyPatience),
		stopCtx:    ctx,
		stop:       stop,
	}
	switch {
	case opts.TailWindow == 0:
		s.tail = newTailWindow(DefaultTailWindow)
	case opts.TailWindow > 0:
		s.tail = newTailWindow(opts.TailWindow)
	}
	s.wg.Add(1 + appenders)
	go s.runNotifier(ctx)
	for range appenders {
		go s.runAppender()
	}
	return s
}

// Close stops the store's goroutines. Subscriptions end with their contexts.
func (s *Store) Close() error {
	s.closeMu.Do(func() {
		s.stop()
		s.wg.Wait()
	})
	return nil
}

// Ping reports whether the database answers.
func (s *Store) Ping(ctx context.Context) error {
	return s.pool.Ping(ctx)
}

// appendSQL appends a stream's events in one statement, and so in one
// round trip and one implicit transaction: the revisions follow the
// stream's head, and nothing is written unless the head is where the caller
// expects it ($2: -1 for no stream). A concurrent writer that reads the same
// head is stopped by the unique constraint on (stream_name,
// stream_revision). The statement is the transaction's only write, so
// tx_id is taken as its rows are written (see order.go).
const appendSQL = `
WITH head AS (
	SELECT coalesce(max(stream_revision), -1) AS last FROM events WHERE stream_name = $1
)
INSERT INTO events (event_id, stream_name, stream_revision, event_type, data, metadata)
SELECT e.id, $1, head.last + e.n, e.type, e.data::json, e.metadata::json
FROM head, unnest($3::uuid[], $4::text[], $5::text[], $6::text[]) WITH ORDINALITY AS e(id, type, data, metadata, n)
WHERE head.last = $2
RETURNING global_position, tx_id::text, stream_revision`

// Append implements events.Store.
func (s *Store) Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.EventData) (events.AppendResult, error) {
	if !expected.Valid() {
		return events.AppendResult{}, errors.New("pgstore: append: expected revision not set")
	}
	if len(evs) == 0 {
		return events.AppendResult{}, errors.New("pgstore: append: no events")
	}
	if len(evs) == 1 {
		return s.appendOne(ctx, stream, expected, evs[0])
	}
	return s.appendAlone(ctx, stream, expected, evs)
}

// appendAlone appends evs in a statement of their own (appendSQL).
func (s *Store) appendAlone(ctx context.Context, stream string, expected events.ExpectedRevision, evs []events.EventData) (events.AppendResult, error) {
	res, n, err := s.insert(ctx, stream, expected, evs)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == "23505", err == nil && n == 0:
		return events.AppendResult{}, wrongRevision(stream, expected)
	case err != nil:
		return events.AppendResult{}, appendFailed(stream, err)
	}
	s.committed(eventTypes(evs))
	return res, nil
}

func eventTypes(evs []events.EventData) []string {
	types := make([]string, len(evs))
	for i, ev := range evs {
		types[i] = ev.Type
	}
	return types
}

// insert runs appendSQL; n is how many events it wrote (0 or all) and res
// describes the last.
func (s *Store) insert(ctx context.Context, stream string, expected events.ExpectedRevision, evs []events.EventData) (res events.AppendResult, n int, err error) {
	var cols eventColumns
	for _, ev := range evs {
		cols.add(ev)
	}
	rows, err := s.pool.Query(ctx, appendSQL, stream, headOf(expected), cols.ids, cols.types, cols.data, cols.metadata)
	if err != nil {
		return res, 0, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			gp, rev int64
			txID    string
		)
		if err := rows.Scan(&gp, &txID, &rev); err != nil {
			return res, 0, err
		}
		pos, err := position(txID, gp)
		if err != nil {
			return res, 0, err
		}
		if n++; pos.Compare(res.Position) > 0 {
			res = events.AppendResult{NextRevision: uint64(rev), Position: pos}
		}
	}
	return res, n, rows.Err()
}

// eventColumns are events as the array parameters of appendSQL and
// batchAppendSQL, one element per event.
//
// Event ids go to and come from pgx as [16]byte, never uuid.UUID: pgx
// encodes a uuid.UUID through its driver.Valuer, as text that fails to
// encode as binary (an error built with fmt.Errorf) and is then parsed
// back; 2,000 of them took 8.7 ms against 0.6 ms as [16]byte, and
// scanning one 445 ns against 193.
type eventColumns struct {
	ids                   [][16]byte
	types, data, metadata []string
}

func (c *eventColumns) add(ev events.EventData) {
	c.ids, c.types = append(c.ids, ev.ID), append(c.types, ev.Type)
	c.data, c.metadata = append(c.data, string(ev.Data)), append(c.metadata, metadataOrEmpty(ev.Metadata))
}

func metadataOrEmpty(m []byte) string {
	if len(m) == 0 {
		return "{}"
	}
	return string(m)
}

func position(txID string, gp int64) (events.Position, error) {
	x, err := strconv.ParseUint(txID, 10, 64)
	if err != nil {
		return events.Position{}, fmt.Errorf("pgstore: transaction id %q: %w", txID, err)
	}
	return events.NewPosition(x, uint64(gp)), nil
}

// positionArgs are pos as the parameters ($n::text::xid8, $m::bigint) of
// a comparison with (tx_id, global_position); position's inverse.
func positionArgs(pos events.Position) (txID string, gp int64) {
	hi, lo := pos.Parts()
	return strconv.FormatUint(hi, 10), int64(lo)
}

// ReadStream implements events.Store.
func (s *Store) ReadStream(ctx context.Context, stream string) ([]events.RecordedEvent, error) {
	out, err := s.ReadStreamFrom(ctx, stream, 0)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("pgstore: read stream %s: %w", stream, events.ErrStreamNotFound)
	}
	return out, err
}

// ReadStreamFrom implements events.Store: one range of the index on
// (stream_name, stream_revision).
func (s *Store) ReadStreamFrom(ctx context.Context, stream string, from uint64) ([]events.RecordedEvent, error) {
	if from > math.MaxInt64 {
		return nil, nil // no revision is that high
	}
	rows, err := s.pool.Query(ctx, `
		SELECT global_position, tx_id::text AS tx_text, event_id, stream_name, stream_revision,
		       event_type, data::text, metadata::text, recorded_at
		FROM events WHERE stream_name = $1 AND stream_revision >= $2 ORDER BY stream_revision`, stream, int64(from))
	if err != nil {
		return nil, fmt.Errorf("pgstore: read stream %s: %w", stream, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	out, err := scanEvents(rows, nil)
	if err != nil {
		return nil, fmt.Errorf("pgstore: read stream %s: %w", stream, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	return out, nil
}

// ReadLast implements events.Store: one index probe on (stream_name,
// stream_revision).
func (s *Store) ReadLast(ctx context.Context, stream string) (events.RecordedEvent, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT global_position, tx_id::text AS tx_text, event_id, stream_name, stream_revision,
		       event_type, data::text, metadata::text, recorded_at
		FROM events WHERE stream_name = $1 ORDER BY stream_revision DESC LIMIT 1`, stream)
	if err != nil {
		return events.RecordedEvent{}, fmt.Errorf("pgstore: read last of %s: %w", stream, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	out, err := scanEvents(rows, nil)
	if err != nil {
		return events.RecordedEvent{}, fmt.Errorf("pgstore: read last of %s: %w", stream, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	if len(out) == 0 {
		return events.RecordedEvent{}, fmt.Errorf("pgstore: read last of %s: %w", stream, events.ErrStreamNotFound)
	}
	return out[0], nil
}

// ReadAll implements events.Store; see order.go for why it cannot skip.
//
// A short page must mean "caught up with everything committed before the
// call", but the horizon can hide committed events behind an older
// transaction that is still open. So a short page is returned only once
// every transaction that was running when the call began has ended; until
// then ReadAll reads again, backing off. The wait is bounded by the longest
// of those transactions (appends are short).
func (s *Store) ReadAll(ctx context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	page, _, err := s.readSettled(ctx, from, max, nil)
	return page, err
}

// ReadAllOf is ReadAll for a reader of the types in payloadsOf only (a
// rebuild of companies): its page holds what a subscription to those
// types would receive (readSkippingSQL), the events of other types left
// out in the database but the page's last one, without its payload, which
// stands for them as a position. scanned counts every event the page
// passed: fewer than max means caught up, as a short page of ReadAll does.
func (s *Store) ReadAllOf(ctx context.Context, from events.Position, max int, payloadsOf ...string) (page []events.RecordedEvent, scanned int, err error) {
	if everyPayload(payloadsOf) {
		page, err = s.ReadAll(ctx, from, max)
		return page, len(page), err
	}
	return s.readSettled(ctx, from, max, typeListOf(payloadsOf))
}

// readSettled reads the page after from (readPage) once every
// transaction running when it was called has ended, unless the page is
// full (see ReadAll).
func (s *Store) readSettled(ctx context.Context, from events.Position, max int, payloadsOf *string) ([]events.RecordedEvent, int, error) {
	if max <= 0 {
		return nil, 0, nil
	}
	var startXmax string
	if err := s.pool.QueryRow(ctx, `SELECT pg_snapshot_xmax(pg_current_snapshot())::text`).Scan(&startXmax); err != nil {
		return nil, 0, fmt.Errorf("pgstore: read all after %s: %w", from, err)
	}
	for wait := time.Millisecond; ; wait = min(wait*2, 100*time.Millisecond) {
		var settled bool
		err := s.pool.QueryRow(ctx, `SELECT pg_snapshot_xmin(pg_current_snapshot()) >= $1::text::xid8`, startXmax).Scan(&settled)
		if err != nil {
			return nil, 0, fmt.Errorf("pgstore: read all after %s: %w", from, err)
		}
		page, scanned, err := s.readPage(ctx, from, max, payloadsOf)
		if err != nil || scanned == max || settled {
			return page, scanned, err
		}
		select {
		case <-ctx.Done():
			return nil, 0, ctx.Err()
		case <-time.After(wait):
		}
	}
}

// typeListOf is readPage's payloadsOf for types: their typeList, nil (every
// payload) for nil.
func typeListOf(types []string) *string {
	if types == nil {
		return nil
	}
	list := typeList(types)
	return &list
}

// typeList is types as a PostgreSQL array literal ({"A","B"}), which a
// statement casts once (see readAllSQL); sent as text, it costs the client a
// copy where a []string parameter cost an array encoding per statement.
func typeList(types []string) string {
	escape := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	var b strings.Builder
	b.WriteByte('{')
	for n, t := range types {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(escape.Replace(t))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// readPage reads what the horizon lets it see now; a short page may still
// have committed events hidden behind an open transaction. It scans up to
// max events and returns how many it scanned: all of them when payloadsOf
// (a typeList) is nil; else only those of payloadsOf, with Data and
// Metadata, and the last one scanned, as a position (readSkippingSQL).
func (s *Store) readPage(ctx context.Context, from events.Position, max int, payloadsOf *string) ([]events.RecordedEvent, int, error) {
	s.pageReads.Add(1)
	txID, gp := positionArgs(from)
	var (
		rows    pgx.Rows
		err     error
		scanned *int64
	)
	if payloadsOf == nil {
		rows, err = s.pool.Query(ctx, readAllSQL, txID, gp, s.knownTypes, max)
	} else {
		scanned = new(int64)
		rows, err = s.pool.Query(ctx, readSkippingSQL, txID, gp, s.knownTypes, max, *payloadsOf)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: read all after %s: %w", from, err)
	}
	out, err := scanEvents(rows, scanned)
	if err != nil {
		return nil, 0, fmt.Errorf("pgstore: read all after %s: %w", from, err)
	}
	if scanned == nil {
		return out, len(out), nil
	}
	return out, int(*scanned), nil
}

// scanEvents reads rows of events; scanned, when not nil, takes a tenth
// column (readSkippingSQL's count of the rows its page scanned).
func scanEvents(rows pgx.Rows, scanned *int64) ([]events.RecordedEvent, error) {
	defer rows.Close()
	var (
		out     []events.RecordedEvent
		ev      events.RecordedEvent
		gp, rev int64
		txID    string
	)
	// One list of destinations for every row, ev cleared before each.
	dest := []any{&gp, &txID, &ev.ID, &ev.Stream, &rev, &ev.Type, (*[]byte)(&ev.Data), (*[]byte)(&ev.Metadata), &ev.RecordedAt, scanned}
	if scanned == nil {
		dest = dest[:9]
	}
	for rows.Next() {
		ev = events.RecordedEvent{}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		pos, err := position(txID, gp)
		if err != nil {
			return nil, err
		}
		ev.Position, ev.Revision = pos, uint64(rev)
		ev.RecordedAt = ev.RecordedAt.UTC()
		out = append(out, ev)
	}
	return out, rows.Err()
}

// CountAfter counts this service's events after from, for progress
// estimates; it is not part of events.Store.
func (s *Store) CountAfter(ctx context.Context, from events.Position) (int64, error) {
	txID, gp := positionArgs(from)
	var n int64
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FROM events
		WHERE (tx_id, global_position) > ($1::text::xid8, $2::bigint) AND event_type = ANY((SELECT $3::text::text[])::text[])`,
		txID, gp, s.knownTypes).Scan(&n)
	return n, err
}
