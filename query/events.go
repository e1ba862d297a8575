package query

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Event is a public event's index row (projections' public_events): where
// the event is in the store, and what it is about. The public event itself
// is rendered from the store's events (transport.EventRenderer).
type Event struct {
	ID, Type, Stream      string
	Revision              uint64
	Position              events.Position
	CompanyID, ResourceID string
	CreatedAt             time.Time
	revision              int64 // as stored: bigint
}

// EventFilter narrows the event feed; empty fields do not filter. Type is
// a public type (publicevents.Types), checked by the caller.
type EventFilter struct {
	Type, CompanyID, ResourceID string
}

// eventFields are the feed's columns, led by the row's key: the one
// statement of the select list, the scan targets and the wire layout.
var eventFields = []column[Event]{
	{"position_hi", int8Binary, func(_ *Event, k *rowKey) any { return &k.hi }},
	{"position_lo", int8Binary, func(_ *Event, k *rowKey) any { return &k.lo }},
	{"id", uuidBinary, func(e *Event, _ *rowKey) any { return &e.ID }},
	{"type", text, func(e *Event, _ *rowKey) any { return &e.Type }},
	{"stream_name", text, func(e *Event, _ *rowKey) any { return &e.Stream }},
	{"revision", int8Binary, func(e *Event, _ *rowKey) any { return &e.revision }},
	{"company_id", uuidBinary, func(e *Event, _ *rowKey) any { return &e.CompanyID }},
	{"resource_id", uuidBinary, func(e *Event, _ *rowKey) any { return &e.ResourceID }},
	{"created_at", timestamptzBinary, func(e *Event, _ *rowKey) any { return &e.CreatedAt }},
}

// What an event read needs, made from its columns.
var (
	eventColumns = selectList(eventFields)
	eventTargets = scanTargets(eventFields)
	eventWire    = wireLayout(eventFields)
	decodeEvent  = wireDecoder(eventFields)
)

// Event returns one of the account's public events by its id, or
// events.ErrNotFound (another account's too).
func (s *Store) Event(ctx context.Context, accountID, id string) (Event, error) {
	if !validID(id) {
		return Event{}, events.ErrNotFound
	}
	return one(ctx, s.pool, scanEvents, eventByID(accountID, id))
}

var eventLookup = newLookup(eventColumns, "public_events", accountOwned)

func eventByID(accountID, id string) statement {
	return eventLookup.of(id, accountID)
}

// Events lists the account's public events in the store's global order,
// oldest first. A page never skips or repeats an event however many are
// appended meanwhile: the projection writes rows in that order, so every
// row written after a page was read comes after its cursor.
//
// Unlike the other lists, a page that holds events always has a
// NextCursor, the last page too: the feed grows at its end, and a client
// following it asks after its last event again later, so it is never given
// one event twice. An empty page has none (the client keeps the cursor it
// asked with).
func (s *Store) Events(ctx context.Context, accountID string, f EventFilter, p PageRequest) (Page[Event], error) {
	l := eventList(accountID, f)
	pg, err := page(ctx, s.pool, scanEvents, l, p)
	if err != nil || pg.NextCursor != "" || len(pg.Items) == 0 {
		return pg, err
	}
	hi, lo := pg.Items[len(pg.Items)-1].Position.Parts()
	pg.NextCursor = encodeCursor(l.scope, rowKey{hi: int64(hi), lo: int64(lo)})
	return pg, nil
}

// eventList is served by public_events_by_resource, _by_company or
// _by_type, by the first filter set in that order (a resource has a few
// events, a company many, a type may have most), else by
// public_events_by_account.
func eventList(accountID string, f EventFilter) listing {
	return listing{
		table: "public_events",
		scope: scope("public_events", accountID, f.ResourceID, f.CompanyID, f.Type),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.filter("resource_id", f.ResourceID)
			q.filter("company_id", f.CompanyID)
			q.filter("type", f.Type)
			return q.statement(eventColumns, "public_events", after, limit)
		},
	}
}

// scanEvents scans index rows and gives each its position, the row's key.
func scanEvents(rows pgx.Rows, capacity int) ([]Event, []rowKey, error) {
	items, keys, err := scanRows(rows, capacity, eventWire, decodeEvent, eventTargets)
	for i := range items {
		items[i].Position = events.NewPosition(uint64(keys[i].hi), uint64(keys[i].lo))
		items[i].Revision = uint64(items[i].revision)
	}
	return items, keys, err
}
