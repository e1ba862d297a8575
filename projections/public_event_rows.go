package projections

import (
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgarray"
	"github.com/invoicing/invoicing/publicevents"
)

// PublicEvents indexes every event of a public type (publicevents) in
// public_events, the feed GET /v1/events pages through. An event never
// changes, so its row is written once; the public event is rendered from
// the event store on read.
type PublicEvents struct{}

var publicEventsSchema = mustSchema("public_events.sql")

// Name implements Projection.
func (PublicEvents) Name() string { return "public_events" }

// Version implements Projection.
func (PublicEvents) Version() int { return 1 }

// Schema implements Projection.
func (PublicEvents) Schema() string { return publicEventsSchema }

// Tables implements Projection.
func (PublicEvents) Tables() []string { return []string{"public_events"} }

// Handles implements Projection.
func (PublicEvents) Handles(eventType string) bool {
	_, ok := publicevents.TypeOf(eventType)
	return ok
}

// publicEventRowsSQL inserts index rows, one element of each array per
// event, in position order; Apply and ApplyAll both use it, so that one
// statement says what a row holds. A catch-up or a busy write load hands a
// batch thousands of events: one statement for them all, where one per
// event cost PostgreSQL about 0.05 ms each.
const publicEventRowsSQL = `
	INSERT INTO public_events (position_hi, position_lo, id, account_id, company_id, resource_id, type,
		stream_name, revision, created_at, version)
	SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::uuid[], $4::text[], $5::text[]::uuid[], $6::text[]::uuid[], $7::text[],
		$8::text[], $9::bigint[], $10::timestamptz[], $11::bigint[])
	ORDER BY 1, 2
	ON CONFLICT (id) DO NOTHING`

// publicIndexRows are the columns of a batch's public events.
type publicIndexRows struct {
	hi, lo                                  pgarray.Int64
	id                                      [][16]byte // not uuid.UUID: see pgstore's eventColumns
	account, company, resource, typ, stream pgarray.Text
	revision                                pgarray.Int64
	createdAt                               []time.Time
	version                                 pgarray.Int64
}

// add adds ev's row if it is a public event.
func (r *publicIndexRows) add(ev events.RecordedEvent) error {
	s, ok, err := publicevents.SubjectOf(ev)
	if !ok || err != nil {
		return err
	}
	hi, lo := key(ev)
	r.hi, r.lo, r.id = append(r.hi, hi), append(r.lo, lo), append(r.id, ev.ID)
	r.account, r.company, r.resource = append(r.account, s.AccountID), append(r.company, s.CompanyID), append(r.resource, s.ResourceID)
	r.typ, r.stream = append(r.typ, s.Type), append(r.stream, ev.Stream)
	r.revision, r.version = append(r.revision, int64(ev.Revision)), append(r.version, int64(ev.Revision)+1)
	r.createdAt = append(r.createdAt, ev.RecordedAt)
	return nil
}

// queue queues the INSERT of the rows, if there are any.
func (r *publicIndexRows) queue(batch *pgx.Batch) {
	if len(r.id) == 0 {
		return
	}
	batch.Queue(publicEventRowsSQL, r.hi, r.lo, r.id, r.account, r.company, r.resource, r.typ,
		r.stream, r.revision, r.createdAt, r.version)
}

// Apply implements Projection.
func (PublicEvents) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	var rows publicIndexRows
	if err := rows.add(ev); err != nil {
		return err
	}
	rows.queue(batch)
	return nil
}

// ApplyAll implements batchApplier: every public event of the batch in
// one INSERT, or one copy from w.copyMin events on (see write).
func (PublicEvents) ApplyAll(evs []events.RecordedEvent, w *bulkWrite) error {
	var rows publicIndexRows
	for _, ev := range evs {
		if err := rows.add(ev); err != nil {
			return err
		}
	}
	rows.write(w)
	return nil
}

// publicEventColumns are the columns a copy of public events fills, in the
// order of publicEventsCopy's values.
var publicEventColumns = []string{"position_hi", "position_lo", "id", "account_id", "company_id", "resource_id",
	"type", "stream_name", "revision", "created_at", "version"}

// write adds the rows to w: copied when there are w.copyMin or more and
// every company and resource id is in the service's form, otherwise in
// one INSERT, as draftedRows.write does and for the same reasons.
func (r *publicIndexRows) write(w *bulkWrite) {
	w.addRows(len(r.id), "public_events", publicEventColumns, func() (pgx.CopyFromSource, bool) {
		c, ok := r.copy()
		return c, ok
	}, r.queue)
}

// publicEventsCopy is the rows of a publicIndexRows as a
// pgx.CopyFromSource.
type publicEventsCopy struct {
	rowCursor
	r                 *publicIndexRows
	company, resource [][16]byte
	values            []any
}

// copy parses the rows' company and resource ids; false if one is not in
// the service's form (events.ParseUUID).
func (r *publicIndexRows) copy() (*publicEventsCopy, bool) {
	n := len(r.id)
	c := &publicEventsCopy{rowCursor: rowCursor{rows: n}, r: r, company: make([][16]byte, n), resource: make([][16]byte, n), values: make([]any, len(publicEventColumns))}
	for i := range n {
		var company, resource bool
		c.company[i], company = events.ParseUUID(r.company[i])
		c.resource[i], resource = events.ParseUUID(r.resource[i])
		if !company || !resource {
			return nil, false
		}
	}
	return c, true
}

// Values implements pgx.CopyFromSource, in a slice the next call reuses.
func (c *publicEventsCopy) Values() ([]any, error) {
	r, i, v := c.r, c.next-1, c.values
	v[0], v[1], v[2], v[3], v[4], v[5] = r.hi[i], r.lo[i], r.id[i], r.account[i], c.company[i], c.resource[i]
	v[6], v[7], v[8], v[9], v[10] = r.typ[i], r.stream[i], r.revision[i], r.createdAt[i], r.version[i]
	return v, nil
}
