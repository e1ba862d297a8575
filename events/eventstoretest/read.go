package eventstoretest

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/invoicing/invoicing/events"
)

func readCases() []testCase {
	return []testCase{
		{"ReadStream returns each event's id, type, data, metadata, revision, position and UTC recorded time", testReadStreamFields},
		{"ReadStream of a missing stream is ErrStreamNotFound", testReadStreamMissing},
		{"ReadLast returns a stream's last event as ReadStream does, and ErrStreamNotFound for a missing stream", testReadLast},
		{"ReadStreamFrom returns the events from a revision on as ReadStream does, and none past the end or of a missing stream", testReadStreamFrom},
		{"a 512 KiB payload round-trips through ReadStream, ReadAll and SubscribeAll", testLargePayload},
		{"ReadAll from zero returns every service event in global order consistent with stream revisions", testReadAllFromZero},
		{"ReadAll resumes right after the given position without gap or duplicate in pages of 7", testReadAllPages},
		{"events of types outside events.Types are left out of ReadAll and SubscribeAll", testForeignTypes},
		{"EventData.ID is preserved by ReadStream, ReadAll and SubscribeAll", testIDs},
	}
}

func testReadStreamFields(f *fixture) {
	s := f.stream("fields")
	from := f.marker()
	before := time.Now()
	first := event(s, 0, "fields")
	// Key order, spacing and non-ASCII text that a JSON store may normalise.
	first.Data = json.RawMessage(`{"z": 1, "a": {"name": "Zoë & Søren", "lines": [1, 2.5, "x"]}, "empty": null}`)
	second := event(s, 1, "fields 2")
	f.mustAppend(s, events.NoStream(), first)
	f.mustAppend(s, events.AtRevision(0), second)
	after := time.Now()

	got := f.readStream(s)
	if len(got) != 2 {
		f.t.Fatalf("ReadStream returned %d events, want 2", len(got))
	}
	f.checkSame(got[0], first, s, 0)
	f.checkSame(got[1], second, s, 1)
	for _, ev := range got {
		f.checkRecordedAt(ev, before, after)
	}
	if got[1].Position.Compare(got[0].Position) <= 0 {
		f.t.Errorf("revision 1 at %s is not after revision 0 at %s", got[1].Position, got[0].Position)
	}

	// The global read must describe the same events the same way.
	all := f.ownOnly(f.readAll(from, 100))
	if len(all) != 2 {
		f.t.Fatalf("ReadAll after the marker returned %d of this subtest's events, want 2", len(all))
	}
	for i, ev := range all {
		if ev.Position.Compare(got[i].Position) != 0 || !ev.RecordedAt.Equal(got[i].RecordedAt) {
			f.t.Errorf("revision %d: ReadAll says %s at %v, ReadStream says %s at %v", i, ev.Position, ev.RecordedAt, got[i].Position, got[i].RecordedAt)
		}
	}
}

func testReadStreamMissing(f *fixture) {
	_, err := f.store.ReadStream(f.ctx, f.stream("never-written"))
	if !errors.Is(err, events.ErrStreamNotFound) {
		f.t.Errorf("err = %v, want one wrapping events.ErrStreamNotFound", err)
	}
}

func testReadLast(f *fixture) {
	s := f.stream("last")
	if _, err := f.store.ReadLast(f.ctx, s); !errors.Is(err, events.ErrStreamNotFound) {
		f.t.Errorf("ReadLast of a missing stream: err = %v, want one wrapping events.ErrStreamNotFound", err)
	}
	for rev := uint64(0); rev < 3; rev++ {
		expected := events.AtRevision(rev - 1)
		if rev == 0 {
			expected = events.NoStream()
		}
		ev := event(s, rev, fmt.Sprint("last ", rev))
		f.mustAppend(s, expected, ev)
		last, err := f.store.ReadLast(f.ctx, s)
		if err != nil {
			f.t.Fatalf("ReadLast after revision %d: %v", rev, err)
		}
		f.checkSame(last, ev, s, rev)
		if all := f.readStream(s); last.Position.Compare(all[len(all)-1].Position) != 0 {
			f.t.Errorf("ReadLast says position %s, ReadStream %s", last.Position, all[len(all)-1].Position)
		}
	}
}

func testReadStreamFrom(f *fixture) {
	s := f.stream("from")
	if got, err := f.store.ReadStreamFrom(f.ctx, s, 0); err != nil || len(got) != 0 {
		f.t.Errorf("ReadStreamFrom(0) of a missing stream = %d events, %v; want none and no error", len(got), err)
	}
	for rev := uint64(0); rev < 3; rev++ {
		expected := events.NoStream()
		if rev > 0 {
			expected = events.AtRevision(rev - 1)
		}
		f.mustAppend(s, expected, event(s, rev, fmt.Sprint("from ", rev)))
	}
	all := f.readStream(s)
	for from := uint64(0); from <= 4; from++ {
		got, err := f.store.ReadStreamFrom(f.ctx, s, from)
		if err != nil {
			f.t.Fatalf("ReadStreamFrom(%d): %v", from, err)
		}
		want := all[min(from, uint64(len(all))):]
		if len(got) != len(want) {
			f.t.Fatalf("ReadStreamFrom(%d) returned %d events, want %d", from, len(got), len(want))
		}
		for i := range got {
			if got[i].ID != want[i].ID || got[i].Revision != want[i].Revision || got[i].Position.Compare(want[i].Position) != 0 || !jsonEqual(got[i].Data, want[i].Data) {
				f.t.Errorf("ReadStreamFrom(%d)[%d] = revision %d at %s, ReadStream has revision %d at %s", from, i, got[i].Revision, got[i].Position, want[i].Revision, want[i].Position)
			}
		}
	}
}

func testLargePayload(f *fixture) {
	s := f.stream("large")
	from := f.marker()
	ev := event(s, 0, "large")
	blob := strings.Repeat("0123456789abcdef", 512*1024/16)
	ev.Data, _ = json.Marshal(map[string]string{"blob": blob})
	f.mustAppend(s, events.NoStream(), ev)

	if got := f.readStream(s); len(got) != 1 || !jsonEqual(got[0].Data, ev.Data) {
		f.t.Errorf("ReadStream did not return the 512 KiB payload intact")
	}
	all := f.ownOnly(f.readAll(from, 10))
	if len(all) != 1 || !jsonEqual(all[0].Data, ev.Data) {
		f.t.Errorf("ReadAll did not return the 512 KiB payload intact")
	}
	w := f.follow(from)
	if got := w.nextOwn(); !jsonEqual(got.Data, ev.Data) {
		f.t.Errorf("SubscribeAll did not deliver the 512 KiB payload intact")
	}
}

// testReadAllFromZero interleaves three streams, so that global order and
// stream order differ, and reads the whole store.
func testReadAllFromZero(f *fixture) {
	a, b, c := f.stream("a"), f.stream("b"), f.stream("c")
	want := []events.EventData{event(a, 0, "a0"), event(b, 0, "b0"), event(a, 1, "a1"), event(c, 0, "c0"), event(b, 1, "b1")}
	f.mustAppend(a, events.NoStream(), want[0])
	f.mustAppend(b, events.NoStream(), want[1])
	f.mustAppend(a, events.AtRevision(0), want[2])
	f.mustAppend(c, events.NoStream(), want[3])
	f.mustAppend(b, events.AtRevision(0), want[4])

	all := f.readAll(events.Position{}, 500)
	for _, ev := range all {
		if !events.IsServiceType(ev.Type) {
			f.t.Errorf("ReadAll returned %s@%d of type %q, not one of events.Types", ev.Stream, ev.Revision, ev.Type)
		}
	}
	f.checkStreamOrder(all)
	f.checkSequence("ReadAll from zero", f.ownOnly(all), want)
}

func testReadAllPages(f *fixture) {
	from := f.marker()
	want := f.appendMixed()

	// Page by hand: readAll would hide where one page ends.
	var paged []events.RecordedEvent
	at := from
	for {
		page, err := f.store.ReadAll(f.ctx, at, 7)
		if err != nil {
			f.t.Fatalf("ReadAll(%s, 7): %v", at, err)
		}
		if len(page) > 7 {
			f.t.Fatalf("ReadAll(%s, 7) returned %d events", at, len(page))
		}
		paged = append(paged, page...)
		if len(page) < 7 {
			break
		}
		at = page[len(page)-1].Position
	}
	f.checkStrictOrder("pages of 7", paged)
	f.checkSequence("ReadAll in pages of 7", f.ownOnly(paged), want)

	whole := f.ownOnly(f.readAll(from, 1000))
	f.checkSequence("ReadAll in one page", whole, want)
	if len(whole) != len(want) {
		return
	}

	// Resuming from any event's position returns exactly the ones after it.
	for _, k := range []int{0, 6, len(whole) - 2} {
		rest := f.ownOnly(f.readAll(whole[k].Position, 7))
		f.checkSequence("ReadAll after event "+whole[k].Stream, rest, want[k+1:])
	}
}

func testForeignTypes(f *fixture) {
	from := f.marker()
	s1, s2, s3 := f.stream("mine-1"), f.stream("theirs"), f.stream("mine-2")
	want := []events.EventData{event(s1, 0, "mine"), event(s3, 0, "mine too")}
	foreign := event(s2, 0, "theirs")
	foreign.Type = ForeignType
	f.mustAppend(s1, events.NoStream(), want[0])
	f.mustAppend(s2, events.NoStream(), foreign)
	f.mustAppend(s3, events.NoStream(), want[1])

	all := f.readAll(from, 100)
	f.checkNoForeign("ReadAll", all)
	f.checkSequence("ReadAll", f.ownOnly(all), want)

	w := f.follow(from)
	delivered := w.untilFence()
	f.checkNoForeign("SubscribeAll", w.all)
	f.checkSequence("SubscribeAll", delivered, want)
}

func testIDs(f *fixture) {
	s := f.stream("ids")
	from := f.marker()
	want, _ := f.appendEach(s, 3)
	check := func(how string, got []events.RecordedEvent) {
		f.t.Helper()
		if len(got) != len(want) {
			f.t.Fatalf("%s returned %d events, want %d", how, len(got), len(want))
		}
		for i := range want {
			if got[i].ID != want[i].ID {
				f.t.Errorf("%s: revision %d has ID %x, want %x", how, i, got[i].ID, want[i].ID)
			}
		}
	}
	check("ReadStream", f.readStream(s))
	check("ReadAll", f.ownOnly(f.readAll(from, 100)))
	check("SubscribeAll", f.follow(from).untilFence())
}

// appendMixed appends 20 service events over several streams, some several
// at once, with foreign events between them so that pages and filtering
// interact, and returns the service events in global order.
func (f *fixture) appendMixed() []events.EventData {
	var want []events.EventData
	revs := map[string]uint64{}
	add := func(name string, n int) {
		s := f.stream(name)
		expected := events.NoStream()
		if r, ok := revs[s]; ok {
			expected = events.AtRevision(r - 1)
		}
		var evs []events.EventData
		for range n {
			evs = append(evs, event(s, revs[s], "mixed"))
			revs[s]++
		}
		f.mustAppend(s, expected, evs...)
		want = append(want, evs...)
	}
	for i, step := range []struct {
		name string
		n    int
	}{{"p", 1}, {"q", 3}, {"p", 2}, {"r", 1}, {"q", 1}, {"s", 4}, {"p", 1}, {"r", 2}, {"t", 5}} {
		add(step.name, step.n)
		if i%3 == 1 {
			s := f.stream(fmt.Sprintf("foreign-%d", i))
			ev := event(s, 0, "foreign")
			ev.Type = ForeignType
			f.mustAppend(s, events.NoStream(), ev)
		}
	}
	return want
}

// checkSequence compares events read back with the service events
// expected, in order.
func (f *fixture) checkSequence(how string, got []events.RecordedEvent, want []events.EventData) {
	f.t.Helper()
	if len(got) != len(want) {
		f.t.Errorf("%s: got %d of this subtest's events, want %d", how, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i].ID != want[i].ID {
			f.t.Errorf("%s: event %d is %s@%d (id %x), want id %x", how, i, got[i].Stream, got[i].Revision, got[i].ID, want[i].ID)
			return
		}
		if got[i].Type != want[i].Type || !jsonEqual(got[i].Data, want[i].Data) {
			f.t.Errorf("%s: event %d (%s@%d) is %q %.200s, want %q %.200s", how, i, got[i].Stream, got[i].Revision, got[i].Type, got[i].Data, want[i].Type, want[i].Data)
		}
	}
}

// checkStrictOrder checks that positions strictly increase: no duplicate,
// nothing out of order.
func (f *fixture) checkStrictOrder(how string, evs []events.RecordedEvent) {
	f.t.Helper()
	for i := 1; i < len(evs); i++ {
		if evs[i].Position.Compare(evs[i-1].Position) <= 0 {
			f.t.Errorf("%s: %s@%d at %s follows %s@%d at %s", how, evs[i].Stream, evs[i].Revision, evs[i].Position, evs[i-1].Stream, evs[i-1].Revision, evs[i-1].Position)
		}
	}
}

// checkStreamOrder checks that the global order agrees with each of this
// subtest's streams: their revisions appear as 0, 1, 2, ... in turn.
func (f *fixture) checkStreamOrder(evs []events.RecordedEvent) {
	f.t.Helper()
	f.checkStrictOrder("global order", evs)
	next := map[string]uint64{}
	for _, ev := range f.ownOnly(evs) {
		if ev.Revision != next[ev.Stream] {
			f.t.Errorf("%s: revision %d comes where revision %d should", ev.Stream, ev.Revision, next[ev.Stream])
		}
		next[ev.Stream] = ev.Revision + 1
	}
}

func (f *fixture) checkNoForeign(how string, evs []events.RecordedEvent) {
	f.t.Helper()
	for _, ev := range evs {
		if ev.Type == ForeignType || !events.IsServiceType(ev.Type) {
			f.t.Errorf("%s returned %s@%d of type %q, not one of events.Types", how, ev.Stream, ev.Revision, ev.Type)
		}
	}
}
