package command

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/invoicing/invoicing/events"
)

// streamStore is an events.Store of streams in memory that counts how its
// streams are read: whole (ReadStream) or from a revision on.
type streamStore struct {
	events.Store
	mu      sync.Mutex
	streams map[string][]events.RecordedEvent
	whole   int      // ReadStream calls
	froms   []uint64 // the from of every ReadStreamFrom call
}

func (s *streamStore) Append(_ context.Context, stream string, expected events.ExpectedRevision, evs ...events.EventData) (events.AppendResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.streams[stream]
	if expected.IsNoStream() != (len(cur) == 0) || (!expected.IsNoStream() && expected.Revision() != uint64(len(cur)-1)) {
		return events.AppendResult{}, events.ErrWrongExpectedRevision
	}
	for _, ev := range evs {
		rev := uint64(len(cur))
		cur = append(cur, events.RecordedEvent{ID: ev.ID, Type: ev.Type, Data: ev.Data, Metadata: ev.Metadata,
			Stream: stream, Revision: rev, Position: events.NewPosition(1, rev+1)})
	}
	s.streams[stream] = cur
	return events.AppendResult{NextRevision: uint64(len(cur) - 1), Position: cur[len(cur)-1].Position}, nil
}

func (s *streamStore) ReadStream(ctx context.Context, stream string) ([]events.RecordedEvent, error) {
	s.mu.Lock()
	s.whole++
	s.mu.Unlock()
	evs := s.from(stream, 0)
	if len(evs) == 0 {
		return nil, events.ErrStreamNotFound
	}
	return evs, nil
}

func (s *streamStore) ReadStreamFrom(_ context.Context, stream string, from uint64) ([]events.RecordedEvent, error) {
	s.mu.Lock()
	s.froms = append(s.froms, from)
	s.mu.Unlock()
	return s.from(stream, from), nil
}

func (s *streamStore) from(stream string, from uint64) []events.RecordedEvent {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.streams[stream]
	return slices.Clone(cur[min(from, uint64(len(cur))):])
}

// reads returns and resets the counts.
func (s *streamStore) reads() (whole int, froms []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	whole, froms, s.whole, s.froms = s.whole, s.froms, 0, nil
	return whole, froms
}

type oneCompany struct {
	Directory
	stream string
}

func (d oneCompany) CompanyStream(context.Context, string, string) (string, error) {
	return d.stream, nil
}

type noWait struct{}

func (noWait) WaitFor(context.Context, events.Position, string) error { return nil }

// TestALongStreamIsReadFromItsFold: once a company's stream is long, an
// update reads only the events after the fold it keeps, and still sees
// another instance's update, replays a key of any age with the record as
// that request left it, refuses a key reused with another body, and
// answers what the fold of the whole stream answers. Without the cache
// (FoldCacheKeys -1) every update reads the whole stream.
func TestALongStreamIsReadFromItsFold(t *testing.T) {
	for _, cached := range []bool{true, false} {
		t.Run(fmt.Sprint("cached=", cached), func(t *testing.T) {
			ctx := t.Context()
			store := &streamStore{streams: map[string][]events.RecordedEvent{}}
			cacheKeys := -1
			if cached {
				cacheKeys = 0
			}
			newHandler := func() *Handler {
				return NewHandler(Config{Store: store, Waiter: noWait{}, FoldCacheKeys: cacheKeys})
			}
			a, b := newHandler(), newHandler()
			created, err := a.CreateCompany(ctx, Request{Actor: Actor{AccountID: "acct"}, IdempotencyKey: "create-1"}, mustParse(t, ParseCreateCompany,
				`{"legal_name":"Acme","address":{"line_1":"1 Main St","city":"Berlin","postal_code":"10115","country_code":"DE"},"default_currency":"EUR","default_language":"en"}`))
			if err != nil {
				t.Fatal(err)
			}
			var stream string
			for name := range store.streams {
				stream = name // the only one
			}
			a.cfg.Directory, b.cfg.Directory = oneCompany{stream: stream}, oneCompany{stream: stream}
			answers := map[string]events.Company{}
			update := func(h *Handler, key, name string) (Result[events.Company], error) {
				res, err := h.UpdateCompany(ctx, Request{Actor: Actor{AccountID: "acct"}, IdempotencyKey: key},
					created.Value.CompanyID, mustParse(t, ParseUpdateCompany, `{"legal_name":"`+name+`"}`))
				if err == nil && !res.Replayed {
					answers[key] = res.Value
				}
				return res, err
			}
			for i := range 2 * minFoldedEvents {
				if _, err := update(a, fmt.Sprint("update-", i), fmt.Sprint("Name ", i)); err != nil {
					t.Fatal(err)
				}
			}
			store.reads()
			res, err := update(a, "after-the-loop", "After")
			if err != nil {
				t.Fatal(err)
			}
			whole, froms := store.reads()
			version := uint64(2*minFoldedEvents + 1)
			if cached && (whole != 0 || !slices.Equal(froms, []uint64{version, version})) {
				t.Errorf("an update of a long stream read it whole %d times and from %v; want from %d twice (its decision and its answer)", whole, froms, version)
			}
			if !cached && (whole != 2 || len(froms) != 0) {
				t.Errorf("without the cache: %d whole reads and from %v; want 2 whole reads", whole, froms)
			}
			if _, err := update(b, "other-instance", "Other"); err != nil {
				t.Fatal(err)
			}
			if res, err = update(a, "after-other", "After Other"); err != nil || res.Value.Version != int(version)+3 || res.Value.LegalName != "After Other" {
				t.Errorf("the update after another instance's: version %d %q, %v; want version %d", res.Value.Version, res.Value.LegalName, err, version+3)
			}
			for _, key := range []string{"update-3", fmt.Sprint("update-", 2*minFoldedEvents-1), "other-instance", "after-other"} {
				for _, h := range []*Handler{a, b} {
					name := answers[key].LegalName
					replay, err := update(h, key, name)
					if err != nil || !replay.Replayed || mustJSONOf(t, replay.Value) != mustJSONOf(t, answers[key]) {
						t.Errorf("replay of %s: replayed %v, %v, version %d; want the first answer, version %d", key, replay.Replayed, err, replay.Value.Version, answers[key].Version)
					}
				}
			}
			if _, err := update(a, "update-7", "Another Name"); !errors.Is(err, ErrIdempotencyKeyReused) {
				t.Errorf("a key reused with another body: %v, want ErrIdempotencyKeyReused", err)
			}
			whole2, err := events.FoldCompany(store.from(stream, 0))
			if err != nil {
				t.Fatal(err)
			}
			if got, want := mustJSONOf(t, answers["after-other"]), mustJSONOf(t, whole2); got != want {
				t.Errorf("the last update answered\n%s\nthe fold of the whole stream is\n%s", got, want)
			}
		})
	}
}

func mustParse[T any](t *testing.T, parse func([]byte) (Parsed[T], error), body string) Parsed[T] {
	t.Helper()
	p, err := parse([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func mustJSONOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestTheFoldCacheKeepsOnlyFoldsWhoseKeysItHoldsAll: a lookup refuses a
// key the cache may hold; a fold whose earlier keys the cache does not
// hold (its entry was dropped, or is older than the fold's first event)
// is not kept, since a replay of one of those keys would not be refused;
// an older fold adds its keys but keeps the newer state; the least
// recently used streams go first, and a stream alone over the bound goes
// without the others.
func TestTheFoldCacheKeepsOnlyFoldsWhoseKeysItHoldsAll(t *testing.T) {
	at := func(rev uint64) events.RecordedEvent { return events.RecordedEvent{Revision: rev, Data: []byte("{}")} }
	c := newFoldCache(6)
	c.store("s", "fold@2", at(2), 0, []uint64{1, 2})
	if _, ok := c.lookup("s", 2); ok {
		t.Error("a lookup with a key the stream holds was answered from the fold")
	}
	f, ok := c.lookup("s", 9)
	if !ok || f.state != "fold@2" || f.last.Revision != 2 || f.last.Data != nil {
		t.Fatalf("lookup = %+v, %v; want fold@2 at revision 2 without payload", f, ok)
	}
	c.store("s", "fold@5", at(5), 4, []uint64{5}) // revision 3 unseen: its key could be anything
	if f, _ := c.lookup("s", 9); f.state != "fold@2" {
		t.Errorf("a fold past a gap replaced the fold: %v", f.state)
	}
	c.store("t", "t@4", at(4), 3, []uint64{4}) // no entry: keys 0..2 unknown
	if _, ok := c.lookup("t", 9); ok {
		t.Error("a fold without the keys of its stream's start was kept")
	}
	c.store("s", "fold@4", at(4), 3, []uint64{3, 4})
	c.store("s", "fold@3", at(3), 3, []uint64{3})
	if f, _ := c.lookup("s", 9); f.state != "fold@4" || c.keys != 4 {
		t.Errorf("after an older fold: %v with %d keys; want fold@4 with 4", f.state, c.keys)
	}
	c.store("u", "u@1", at(1), 0, []uint64{7, 8})
	c.lookup("s", 9) // s is now the most recently used
	c.store("v", "v@1", at(1), 0, []uint64{10})
	if _, ok := c.lookup("u", 9); ok || c.keys != 5 {
		t.Errorf("u (least recently used) kept: %v, %d keys; want it dropped and 5 keys", ok, c.keys)
	}
	c.store("w", "w@7", at(7), 0, []uint64{11, 12, 13, 14, 15, 16, 17})
	_, sKept := c.lookup("s", 9)
	_, wKept := c.lookup("w", 99)
	if !sKept || wKept || c.keys != 5 {
		t.Errorf("a stream alone over the bound: s kept %v, w kept %v, %d keys; want s kept, w not, 5 keys", sKept, wKept, c.keys)
	}
}
