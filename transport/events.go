package transport

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/publicevents"
	"github.com/invoicing/invoicing/query"
)

// The public event feed: GET /v1/events and GET /v1/events/{event_id}
// (docs/public-events.md). The read model indexes the account's public
// events; each is rendered from its stream's events, so it never changes.

// EventRenderer renders the feed's public events (publicevents.Event) from
// the event store, with the one rendering the webhook deliveries use
// (RenderPublicEvent).
type EventRenderer struct {
	store events.Store
}

// NewEventRenderer returns a renderer reading streams from store.
func NewEventRenderer(store events.Store) *EventRenderer { return &EventRenderer{store: store} }

// RenderPublicEvent returns the public event at revision of stream (all of
// the stream's events, in revision order, as the caller read them), which
// must be of a public type: its data is the resource as its GET renders it
// right after that event. The webhook senders render their bodies with it.
func RenderPublicEvent(stream []events.RecordedEvent, revision uint64) (json.RawMessage, error) {
	if revision >= uint64(len(stream)) {
		return nil, fmt.Errorf("render: the stream has %d events, no revision %d", len(stream), revision)
	}
	return renderPublicEvent(stream, revision, stream[revision].ID)
}

// renderIndexed renders the feed's index rows, reading each stream once
// however many of its events a page holds.
func (r *EventRenderer) renderIndexed(ctx context.Context, rows []query.Event) ([]json.RawMessage, error) {
	streams := map[string][]events.RecordedEvent{}
	out := make([]json.RawMessage, len(rows))
	for i, row := range rows {
		stream, ok := streams[row.Stream]
		if !ok {
			var err error
			if stream, err = r.store.ReadStream(ctx, row.Stream); err != nil {
				return nil, fmt.Errorf("render event %s: %w", row.ID, err)
			}
			streams[row.Stream] = stream
		}
		id, err := uuid.Parse(row.ID)
		if err != nil {
			return nil, fmt.Errorf("render event %q: %w", row.ID, err)
		}
		if out[i], err = renderPublicEvent(stream, row.Revision, id); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// renderPublicEvent renders the event at revision of stream (all of its
// events, in revision order), which must have the id the caller knows it
// by.
func renderPublicEvent(stream []events.RecordedEvent, revision uint64, id [16]byte) (json.RawMessage, error) {
	if revision >= uint64(len(stream)) || stream[revision].Revision != revision || stream[revision].ID != id {
		return nil, fmt.Errorf("render event %x: not at revision %d of its stream", id, revision)
	}
	ev := stream[revision]
	s, ok, err := publicevents.SubjectOf(ev)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("render event %x: %s is not a public event", id, ev.Type)
	}
	data, err := resourceAfter(s.Resource, stream[:revision+1])
	if err != nil {
		return nil, fmt.Errorf("render event %x: %w", id, err)
	}
	raw, err := encodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("render event %x: %w", id, err)
	}
	return encodeJSON(publicevents.Event{
		ID: uuid.UUID(ev.ID).String(), Type: s.Type, APIVersion: publicevents.Version,
		CreatedAt: timestamp(ev.RecordedAt.Truncate(time.Microsecond)), CompanyID: s.CompanyID, ResourceID: s.ResourceID,
		Data: raw,
	})
}

// resourceAfter renders the resource as GET renders it after the last of
// evs, its stream's events up to it: the fold of a company, customer or
// invoice, or the credit note the last event issued.
func resourceAfter(resource string, evs []events.RecordedEvent) (any, error) {
	switch resource {
	case publicevents.ResourceCompany:
		c, err := events.FoldCompany(evs)
		return companyFromState(c), err
	case publicevents.ResourceCustomer:
		c, err := events.FoldCustomer(evs)
		return customerFromState(c), err
	case publicevents.ResourceInvoice:
		inv, err := events.FoldInvoice(evs)
		return invoiceFromState(inv), err
	case publicevents.ResourceCreditNote:
		var e events.CreditNoteIssued
		err := json.Unmarshal(evs[len(evs)-1].Data, &e)
		return creditNoteFromEvent(e), err
	}
	return nil, fmt.Errorf("unknown resource %q", resource)
}

// encodeJSON encodes v as a response body does (writeJSON), without the
// newline.
func encodeJSON(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// errNoEventStore is a server wired without Config.EventStore: a bug of
// the wiring, 500.
var errNoEventStore = errors.New("transport: no event store to render public events from")

// eventRenderer is the renderer of Config.EventStore.
func (s *server) eventRenderer() (*EventRenderer, error) {
	if s.EventStore == nil {
		return nil, errNoEventStore
	}
	return NewEventRenderer(s.EventStore), nil
}

func (s *server) listEvents(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	params := parseList(perr, r.URL.Query(), "type", "company_id", "resource_id")
	var filter query.EventFilter
	if v, ok := params.filters["type"]; ok {
		if !publicevents.IsType(v) {
			perr.Add("type", "must be one of "+strings.Join(publicevents.Types, ", "))
		}
		filter.Type = v
	}
	if v, ok := params.filters["company_id"]; ok {
		filter.CompanyID = pathUUID(perr, "company_id", v)
	}
	if v, ok := params.filters["resource_id"]; ok {
		filter.ResourceID = pathUUID(perr, "resource_id", v)
	}
	if err := perr.OrNil(); err != nil {
		return err
	}
	renderer, err := s.eventRenderer()
	if err != nil {
		return err
	}
	page, err := s.Queries.Events(r.Context(), principal(r).AccountID, filter, params.page)
	if err != nil {
		return err
	}
	items, err := renderer.renderIndexed(r.Context(), page.Items)
	if err != nil {
		return err
	}
	out := listJSON[json.RawMessage]{Data: items}
	if page.NextCursor != "" {
		out.Pagination.NextCursor = &page.NextCursor
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *server) getEvent(w http.ResponseWriter, r *http.Request) error {
	perr := &command.ValidationError{}
	id := pathUUID(perr, "event_id", r.PathValue("event_id"))
	if err := perr.OrNil(); err != nil {
		return err
	}
	if !acceptable(r.Header.Values("Accept"), "application/json") {
		return errNotAcceptable
	}
	renderer, err := s.eventRenderer()
	if err != nil {
		return err
	}
	row, err := s.Queries.Event(r.Context(), principal(r).AccountID, id)
	if err != nil {
		return err
	}
	out, err := renderer.renderIndexed(r.Context(), []query.Event{row})
	if err != nil {
		return err
	}
	// A public event never changes: its one version is the event.
	writeResource(w, r, etag(row.ID, 1), out[0])
	return nil
}
