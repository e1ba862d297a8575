package projections

import (
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
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

// Apply implements Projection.
func (PublicEvents) Apply(ev events.RecordedEvent, batch *pgx.Batch) error {
	s, ok, err := publicevents.SubjectOf(ev)
	if !ok || err != nil {
		return err
	}
	hi, lo := key(ev)
	batch.Queue(`
		INSERT INTO public_events (position_hi, position_lo, id, account_id, company_id, resource_id, type,
			stream_name, revision, created_at, version)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
		ON CONFLICT (id) DO NOTHING`,
		hi, lo, uuid.UUID(ev.ID), s.AccountID, s.CompanyID, s.ResourceID, s.Type,
		ev.Stream, int64(ev.Revision), ev.RecordedAt, int64(ev.Revision)+1)
	return nil
}
