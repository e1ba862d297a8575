package esdb

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/EventStore/EventStore-Client-Go/v4/esdb"
	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

func TestPositionsConvertBothWaysAndKeepTheirOrder(t *testing.T) {
	if _, ok := fromPosition(events.Position{}).(esdb.Start); !ok {
		t.Errorf("the zero position must start at the beginning of $all, got %#v", fromPosition(events.Position{}))
	}
	p := esdb.Position{Commit: 4242, Prepare: 4100}
	if got := fromPosition(toPosition(p)); got != p {
		t.Errorf("round trip of %v = %v", p, got)
	}
	// A multi-event write shares a commit position in old logs; prepare
	// positions then order its events.
	a, b, c := toPosition(esdb.Position{Commit: 10, Prepare: 5}), toPosition(esdb.Position{Commit: 10, Prepare: 7}), toPosition(esdb.Position{Commit: 11, Prepare: 11})
	if a.Compare(b) >= 0 || b.Compare(c) >= 0 {
		t.Errorf("order lost: %s, %s, %s", a, b, c)
	}
}

func TestRecordedConvertsEveryField(t *testing.T) {
	id := uuid.MustParse("0b8a4a43-3f6e-5a1b-9d1e-1f2a3b4c5d6e")
	created := time.Date(2026, 3, 4, 5, 6, 7, 123456789, time.FixedZone("CET", 3600))
	got := recorded(&esdb.RecordedEvent{
		EventID: id, EventType: events.TypeInvoiceDrafted, StreamID: "invoice-x", EventNumber: 3,
		Position: esdb.Position{Commit: 900, Prepare: 900}, CreatedDate: created,
		Data: []byte(`{"a":1}`), UserMetadata: []byte(`{"m":2}`),
	})
	if got.ID != [16]byte(id) || got.Type != events.TypeInvoiceDrafted || got.Stream != "invoice-x" || got.Revision != 3 {
		t.Errorf("identity fields = %x %q %q %d", got.ID, got.Type, got.Stream, got.Revision)
	}
	if string(got.Data) != `{"a":1}` || string(got.Metadata) != `{"m":2}` {
		t.Errorf("payload = %s / %s", got.Data, got.Metadata)
	}
	if got.Position != events.NewPosition(900, 900) {
		t.Errorf("Position = %s, want 900/900", got.Position)
	}
	want := time.Date(2026, 3, 4, 4, 6, 7, 123456000, time.UTC)
	if !got.RecordedAt.Equal(want) || got.RecordedAt.Location() != time.UTC {
		t.Errorf("RecordedAt = %v, want %v in UTC, truncated to microseconds", got.RecordedAt, want)
	}
	if empty := recorded(&esdb.RecordedEvent{UserMetadata: []byte{}}); empty.Metadata != nil {
		t.Errorf("empty metadata = %q, want nil", empty.Metadata)
	}
}

func TestOnlyServiceEventsAreKept(t *testing.T) {
	tests := []struct {
		name   string
		stream string
		typ    string
		want   bool
	}{
		{"a service event", "company-abc", events.TypeCompanyCreated, true},
		{"another service's type", "orders-1", "SomethingElse", false},
		{"a system event", "$stats-127.0.0.1:2113", "$statsCollected", false},
		{"a link in a system stream", "$ce-company", "$>", false},
		{"a service type in a system stream", "$projections-x", events.TypeCompanyCreated, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := isServiceEvent(&esdb.RecordedEvent{StreamID: tt.stream, EventType: tt.typ}); got != tt.want {
				t.Errorf("isServiceEvent = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTypeFilterMatchesExactlyTheServiceTypes(t *testing.T) {
	f := typeFilter()
	if f.Type != esdb.EventFilterType {
		t.Errorf("filter applies to %v, want event types", f.Type)
	}
	if want := "^(" + strings.Join(events.Types, "|") + ")$"; f.Regex != want {
		t.Errorf("Regex = %q", f.Regex)
	}
	re := regexp.MustCompile(f.Regex)
	for _, typ := range events.Types {
		if !re.MatchString(typ) {
			t.Errorf("%q does not match", typ)
		}
	}
	for _, typ := range []string{"SomethingElse", "CompanyCreatedV2", "XCompanyCreated", "$>", ""} {
		if re.MatchString(typ) {
			t.Errorf("%q matches, want it filtered out", typ)
		}
	}
}

func TestTranslate(t *testing.T) {
	service := &esdb.RecordedEvent{StreamID: "company-1", EventType: events.TypeCompanyCreated, Position: esdb.Position{Commit: 7, Prepare: 7}}
	system := &esdb.RecordedEvent{StreamID: "$et-CompanyCreated", EventType: events.TypeCompanyCreated}
	boom := errors.New("boom")
	tests := []struct {
		name string
		in   esdb.SubscriptionEvent
		want msgKind
	}{
		{"a service event is delivered", esdb.SubscriptionEvent{EventAppeared: &esdb.ResolvedEvent{Event: service}}, msgEvent},
		{"a system event is only a sign of life", esdb.SubscriptionEvent{EventAppeared: &esdb.ResolvedEvent{Event: system}}, msgAlive},
		{"a checkpoint is a sign of life", esdb.SubscriptionEvent{CheckPointReached: &esdb.Position{Commit: 9}}, msgAlive},
		{"caught up is a sign of life", esdb.SubscriptionEvent{CaughtUp: &esdb.Subscription{}}, msgAlive},
		{"a drop is a drop", esdb.SubscriptionEvent{SubscriptionDropped: &esdb.SubscriptionDropped{Error: boom}}, msgDropped},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := translate(&tt.in)
			if got.kind != tt.want {
				t.Fatalf("kind = %v, want %v", got.kind, tt.want)
			}
			if got.kind == msgEvent && got.event.Position != events.NewPosition(7, 7) {
				t.Errorf("event position = %s, want 7/7", got.event.Position)
			}
			if got.kind == msgDropped && !errors.Is(got.err, boom) {
				t.Errorf("drop error = %v, want boom", got.err)
			}
		})
	}
}
