// Package eventstoretest checks that an adapter keeps the promises of the
// events.Store port, in the style of testing/fstest: an adapter's tests call
// Run with a constructor, and one suite holds every adapter to the same rules.
//
// Stores may be shared. EventStoreDB cannot drop data, so the store newStore
// returns may already hold events, and other writers may append while a
// subtest runs. The suite therefore reasons only about events it appended
// itself: each subtest names its streams with a fresh random prefix, and a
// check of the global order starts after a marker event the subtest appends
// first (or, when it reads from zero, picks out its own events). A store that
// is empty for each subtest passes the same way.
//
// Where the port leaves adapters a choice, the suite accepts each answer: a
// retried identical append may be acknowledged (EventStoreDB recognises the
// event ids) or refused as a conflict (PostgreSQL's unique event id), but
// never written twice. Subscriptions are checked without sleeping: a fence
// event appended last proves that nothing was delivered twice or late.
package eventstoretest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// waitFor bounds every wait for a subscription to deliver or close. It is a
// limit against hanging, not a speed requirement.
const waitFor = 10 * time.Second

// subtestTimeout bounds all store calls of one subtest.
const subtestTimeout = 2 * time.Minute

// clockSkew is how far a store's clock may be from this process's when the
// suite checks recorded times: a remote server keeps its own clock.
const clockSkew = 2 * time.Minute

// ForeignType is an event type outside events.Types: another service's event
// that the store holds but that ReadAll and SubscribeAll must leave out.
const ForeignType = "SomethingElse"

// Run checks that the store built by newStore behaves as the events.Store
// port promises. newStore returns a fresh, empty store for each subtest (and
// registers its own cleanup); a shared store also passes, see the package
// documentation.
func Run(t *testing.T, newStore func(t *testing.T) events.Store) {
	for _, c := range cases() {
		t.Run(c.name, func(t *testing.T) {
			c.run(newFixture(t, newStore(t)))
		})
	}
}

type testCase struct {
	name string
	run  func(f *fixture)
}

func cases() []testCase {
	var all []testCase
	all = append(all, appendCases()...)
	all = append(all, readCases()...)
	all = append(all, subscribeCases()...)
	all = append(all, numberingCases()...)
	return all
}

// fixture is one subtest's view of the store: its context, and the random
// prefix that makes its streams its own.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	store  events.Store
	prefix string
}

func newFixture(t *testing.T, store events.Store) *fixture {
	ctx, cancel := context.WithTimeout(t.Context(), subtestTimeout)
	t.Cleanup(cancel)
	return &fixture{t: t, ctx: ctx, store: store, prefix: "conformance-" + randomHex(6) + "-"}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand documents it)
	return hex.EncodeToString(b)
}

// stream names one of the subtest's streams.
func (f *fixture) stream(name string) string { return f.prefix + name }

// own reports whether ev is one of this subtest's events, leaving out the
// markers and fences it appends only to find its place in the global order.
func (f *fixture) own(ev events.RecordedEvent) bool {
	rest, ok := strings.CutPrefix(ev.Stream, f.prefix)
	return ok && !strings.HasPrefix(rest, markerPrefix) && !strings.HasPrefix(rest, fencePrefix)
}

// Stream name prefixes of the suite's bookkeeping events.
const (
	markerPrefix = "marker-"
	fencePrefix  = "fence-"
)

// ownOnly keeps this subtest's events, in their order.
func (f *fixture) ownOnly(evs []events.RecordedEvent) []events.RecordedEvent {
	var out []events.RecordedEvent
	for _, ev := range evs {
		if f.own(ev) {
			out = append(out, ev)
		}
	}
	return out
}

// event builds the event at revision rev of stream, with the id the
// service would give it; note tells otherwise identical events apart.
func event(stream string, rev uint64, note string) events.EventData {
	typ := events.Types[rev%uint64(len(events.Types))]
	data, _ := json.Marshal(map[string]any{"stream": stream, "revision": rev, "note": note})
	md, _ := json.Marshal(events.Metadata{
		AccountID:     "acct-conformance",
		Actor:         events.Actor{Subject: "user-1", ClientID: "client-1"},
		RequestID:     "req-" + note,
		SchemaVersion: events.SchemaVersion,
	})
	return events.EventData{ID: events.EventID(stream, rev), Type: typ, Data: data, Metadata: md}
}

// mustAppend appends and fails the subtest on any error.
func (f *fixture) mustAppend(stream string, expected events.ExpectedRevision, evs ...events.EventData) events.AppendResult {
	f.t.Helper()
	res, err := f.store.Append(f.ctx, stream, expected, evs...)
	if err != nil {
		f.t.Fatalf("Append(%s, %s): %v", stream, expected, err)
	}
	return res
}

// appendEach appends n events to a new stream, one append each, and returns
// the events and where each landed.
func (f *fixture) appendEach(stream string, n int) ([]events.EventData, []events.AppendResult) {
	f.t.Helper()
	var evs []events.EventData
	var res []events.AppendResult
	for i := range uint64(n) {
		expected := events.NoStream()
		if i > 0 {
			expected = events.AtRevision(i - 1)
		}
		ev := event(stream, i, fmt.Sprintf("each %d", i))
		evs = append(evs, ev)
		res = append(res, f.mustAppend(stream, expected, ev))
	}
	return evs, res
}

// marker appends one service event to a stream of its own and returns its
// position: reading or subscribing after it sees only later events.
func (f *fixture) marker() events.Position {
	f.t.Helper()
	s := f.stream(markerPrefix + randomHex(4))
	return f.mustAppend(s, events.NoStream(), event(s, 0, "marker")).Position
}

// readStream reads a stream and fails the subtest on any error.
func (f *fixture) readStream(stream string) []events.RecordedEvent {
	f.t.Helper()
	evs, err := f.store.ReadStream(f.ctx, stream)
	if err != nil {
		f.t.Fatalf("ReadStream(%s): %v", stream, err)
	}
	return evs
}

// readAll reads every event after from in pages of max, checking that no
// page is longer than max and that positions strictly increase across pages.
func (f *fixture) readAll(from events.Position, max int) []events.RecordedEvent {
	f.t.Helper()
	var all []events.RecordedEvent
	for pages := 0; ; pages++ {
		if pages > 100000 {
			f.t.Fatalf("ReadAll after %s: still not caught up after %d pages", from, pages)
		}
		page, err := f.store.ReadAll(f.ctx, from, max)
		if err != nil {
			f.t.Fatalf("ReadAll(%s, %d): %v", from, max, err)
		}
		if len(page) > max {
			f.t.Fatalf("ReadAll(%s, %d) returned %d events", from, max, len(page))
		}
		for _, ev := range page {
			if ev.Position.Compare(from) <= 0 {
				f.t.Fatalf("ReadAll after %s returned %s@%d at %s: not after the position (repeated or out of order)", from, ev.Stream, ev.Revision, ev.Position)
			}
			from = ev.Position
		}
		all = append(all, page...)
		if len(page) < max {
			return all
		}
	}
}

// checkConflict fails unless err wraps events.ErrWrongExpectedRevision.
func (f *fixture) checkConflict(what string, err error) {
	f.t.Helper()
	if !errors.Is(err, events.ErrWrongExpectedRevision) {
		f.t.Errorf("%s: err = %v, want one wrapping events.ErrWrongExpectedRevision", what, err)
	}
}

// checkSame compares a recorded event with the event appended at stream and
// revision: identity, type, stream, revision, and data and metadata as JSON
// values (adapters may store JSON normalised).
func (f *fixture) checkSame(got events.RecordedEvent, want events.EventData, stream string, rev uint64) {
	f.t.Helper()
	where := fmt.Sprintf("%s@%d", stream, rev)
	if got.ID != want.ID {
		f.t.Errorf("%s: ID = %x, want %x", where, got.ID, want.ID)
	}
	if got.Type != want.Type || got.Stream != stream || got.Revision != rev {
		f.t.Errorf("%s: read back as type %q stream %q revision %d, want %q %q %d", where, got.Type, got.Stream, got.Revision, want.Type, stream, rev)
	}
	if !jsonEqual(got.Data, want.Data) {
		f.t.Errorf("%s: Data = %.200s, want %.200s", where, got.Data, want.Data)
	}
	if !jsonEqual(got.Metadata, want.Metadata) {
		f.t.Errorf("%s: Metadata = %s, want %s", where, got.Metadata, want.Metadata)
	}
}

// checkRecordedAt checks that a recorded time is in UTC, truncated to
// microseconds (DESIGN §2), and plausibly the time of the append.
func (f *fixture) checkRecordedAt(ev events.RecordedEvent, before, after time.Time) {
	f.t.Helper()
	at := ev.RecordedAt
	if at.Location() != time.UTC {
		f.t.Errorf("%s@%d: RecordedAt %v is not in UTC", ev.Stream, ev.Revision, at)
	}
	if !at.Equal(at.Truncate(time.Microsecond)) {
		f.t.Errorf("%s@%d: RecordedAt %v has sub-microsecond digits", ev.Stream, ev.Revision, at)
	}
	if at.Before(before.Add(-clockSkew)) || at.After(after.Add(clockSkew)) {
		f.t.Errorf("%s@%d: RecordedAt %v, want between %v and %v (± %v)", ev.Stream, ev.Revision, at, before.UTC(), after.UTC(), clockSkew)
	}
}

// jsonEqual compares two JSON texts as values.
func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xs, _ := json.Marshal(x) // map keys come out sorted, so equal values render alike
	ys, _ := json.Marshal(y)
	return string(xs) == string(ys)
}
