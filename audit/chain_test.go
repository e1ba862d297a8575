package audit

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

func TestCanonicalJSONFollowsRFC8785(t *testing.T) {
	tests := []struct{ name, in, want string }{
		// RFC 8785 §3.2.2 and appendix B examples.
		{"numbers", `[56, 1E30, 4.50, 2e-3, 0.000000000000000000000000001, -0, 333333333.33333329, 1e21, 1e20, 100]`,
			`[56,1e+30,4.5,0.002,1e-27,0,333333333.3333333,1e+21,100000000000000000000,100]`},
		{"strings", `"\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/"`, `"€$\u000f\nA'B\"\\\\\"/"`},
		{"literals", ` { "a" : [ true , false , null ] } `, `{"a":[true,false,null]}`},
		{"member order by UTF-16 code units", `{"\u20ac":"Euro Sign","\r":"Carriage Return","\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\ud83d\ude00":"Emoji: Grinning Face","\u0080":"Control","\u00f6":"Latin Small Letter O With Diaeresis"}`,
			`{"\r":"Carriage Return","1":"One","` + "\u0080" + `":"Control","ö":"Latin Small Letter O With Diaeresis","€":"Euro Sign","😀":"Emoji: Grinning Face","` + "\ufb33" + `":"Hebrew Letter Dalet With Dagesh"}`},
		{"nested objects sort too", `{"b":{"d":1,"c":2},"a":[{"z":0,"y":1}]}`, `{"a":[{"y":1,"z":0}],"b":{"c":2,"d":1}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CanonicalJSON([]byte(tt.in))
			if err != nil || string(got) != tt.want {
				t.Fatalf("CanonicalJSON(%s) = %s, %v\nwant %s", tt.in, got, err, tt.want)
			}
		})
	}
}

func testEvent(i int, note string) events.RecordedEvent {
	data, _ := json.Marshal(map[string]any{"n": i, "note": note})
	return events.RecordedEvent{
		ID: events.EventID("s", uint64(i)), Type: events.TypeCompanyCreated, Data: data, Metadata: json.RawMessage(`{"account_id":"a"}`),
		Stream: "s", Revision: uint64(i), Position: events.NewPosition(1, uint64(i)),
		RecordedAt: time.Date(2025, 1, 2, 3, 4, 5, 123456000, time.UTC),
	}
}

func links(t *testing.T, evs []events.RecordedEvent) []ChainLink {
	t.Helper()
	var b ChainBuilder
	for _, ev := range evs {
		if _, err := b.Add(ev); err != nil {
			t.Fatal(err)
		}
	}
	return b.Links()
}

func TestCanonicalEventIsStableAndCoversEveryField(t *testing.T) {
	ev := testEvent(1, "x")
	got, err := CanonicalEvent(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"data":{"n":1,"note":"x"},"id":"` + uuidString(ev.ID) + `","metadata":{"account_id":"a"},"recorded_at":"2025-01-02T03:04:05.123456Z","revision":1,"stream":"s","type":"CompanyCreated"}`
	if string(got) != want {
		t.Fatalf("CanonicalEvent =\n%s\nwant\n%s", got, want)
	}
	spaced := ev
	spaced.Data = json.RawMessage(`{ "note" : "x", "n" : 1 }`)
	if again, _ := CanonicalEvent(spaced); string(again) != want {
		t.Fatalf("white space and member order changed the canonical form: %s", again)
	}
	for name, edit := range map[string]func(*events.RecordedEvent){
		"data": func(e *events.RecordedEvent) { e.Data = json.RawMessage(`{"n":2,"note":"x"}`) }, "metadata": func(e *events.RecordedEvent) { e.Metadata = json.RawMessage(`{}`) },
		"type": func(e *events.RecordedEvent) { e.Type = events.TypeInvoiceDrafted }, "stream": func(e *events.RecordedEvent) { e.Stream = "t" },
		"revision": func(e *events.RecordedEvent) { e.Revision = 9 }, "id": func(e *events.RecordedEvent) { e.ID = events.EventID("t", 1) },
		"recorded_at": func(e *events.RecordedEvent) { e.RecordedAt = e.RecordedAt.Add(time.Microsecond) },
	} {
		changed := ev
		edit(&changed)
		if other, _ := CanonicalEvent(changed); string(other) == want {
			t.Errorf("changing %s leaves the canonical form as it was", name)
		}
	}
}

func uuidString(id [16]byte) string { return uuid.UUID(id).String() }

func TestCompareChainNamesTheFirstDifference(t *testing.T) {
	orig := []events.RecordedEvent{testEvent(1, "a"), testEvent(2, "b"), testEvent(3, "c"), testEvent(4, "d")}
	recorded := links(t, orig)
	changed := append([]events.RecordedEvent(nil), orig...)
	changed[2] = testEvent(3, "C")
	extra := testEvent(9, "new")
	tests := []struct {
		name string
		now  []events.RecordedEvent
		want *Discrepancy
	}{
		{"the same log", orig, nil},
		{"more events than chained", append(append([]events.RecordedEvent(nil), orig...), extra), nil},
		{"one event changed", changed, &Discrepancy{Seq: 3, Kind: DiffChanged, EventID: orig[2].ID}},
		{"one event deleted", []events.RecordedEvent{orig[0], orig[2], orig[3]}, &Discrepancy{Seq: 2, Kind: DiffMissing, EventID: orig[1].ID}},
		{"the last event deleted", orig[:3], &Discrepancy{Seq: 4, Kind: DiffMissing, EventID: orig[3].ID}},
		{"one event inserted", []events.RecordedEvent{orig[0], extra, orig[1], orig[2], orig[3]}, &Discrepancy{Seq: 2, Kind: DiffInserted, EventID: extra.ID}},
		{"two events swapped", []events.RecordedEvent{orig[0], orig[2], orig[1], orig[3]}, &Discrepancy{Seq: 2, Kind: DiffReordered, EventID: orig[1].ID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CompareChain(links(t, tt.now), recorded)
			if (got == nil) != (tt.want == nil) || got != nil && (got.Seq != tt.want.Seq || got.Kind != tt.want.Kind || got.EventID != tt.want.EventID) {
				t.Fatalf("CompareChain = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSealsAreSignedAndChecked(t *testing.T) {
	evs := []events.RecordedEvent{testEvent(1, "a"), testEvent(2, "b")}
	now := links(t, evs)
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	seal := Seal{Version: SealVersion, Seq: 2, Chain: now[1].Chain.String(), SealedAt: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	if err := seal.Sign(key); err != nil {
		t.Fatal(err)
	}
	if err := seal.Verify(key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatalf("a good seal: %v", err)
	}
	if d := CheckSeal(now, seal); d != nil {
		t.Fatalf("a seal of this log: %v", d)
	}
	forged := seal
	forged.Seq = 1
	if err := forged.Verify(nil); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a changed seal verifies: %v", err)
	}
	other := ed25519.NewKeyFromSeed(append(make([]byte, ed25519.SeedSize-1), 1))
	if err := seal.Verify(other.Public().(ed25519.PublicKey)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a seal by another key passes for the trusted one: %v", err)
	}
	rewritten := links(t, []events.RecordedEvent{testEvent(1, "a"), testEvent(2, "B")})
	if d := CheckSeal(rewritten, seal); d == nil || d.Seq != 2 || d.Kind != DiffSeal {
		t.Fatalf("a rewritten log against an old seal: %v", d)
	}
	if d := CheckSeal(now[:1], seal); d == nil {
		t.Fatal("a log shorter than the seal passes")
	}
}

// FuzzCanonicalJSON: the canonical form is a fixed point and means the
// same value as its input.
func FuzzCanonicalJSON(f *testing.F) {
	for _, seed := range []string{`{"b":1,"a":[1.5,"x\u0001",null]}`, `1e-7`, `"\ud83d\ude00"`, `{"":{}}`, `123456789012345678901234`} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		once, err := CanonicalJSON(in)
		if err != nil {
			return
		}
		twice, err := CanonicalJSON(once)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("not a fixed point: %s -> %s (%v)", once, twice, err)
		}
		var a, b any
		if json.Unmarshal(in, &a) != nil || json.Unmarshal(once, &b) != nil {
			t.Fatalf("canonical form of %q does not decode", in)
		}
		if !reflect.DeepEqual(a, b) { // float64 ==, so -0 (written 0, as RFC 8785 says) is 0
			t.Fatalf("canonical form changed the value: %s vs %s", in, once)
		}
	})
}
