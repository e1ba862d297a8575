package webhook

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
)

// Two dispatchers: one leads; when it stops (its lock connection closes,
// as when its process dies) the other goes on from the committed
// checkpoint, and every public event has exactly one delivery.
func TestTheDispatcherFailsOverWithoutSkippingAnEvent(t *testing.T) {
	e := newEnv(t)
	e.eps.add(t, "acme", "http://receiver.invalid/")
	first, second := e.dispatcher(), e.dispatcher()
	stopFirst := run(t, first.Run)
	waitFor(t, "the first to lead", first.Leading)
	run(t, second.Run)
	names := streams("f", 4)
	e.write(t, "acme", names, 5)
	stopFirst()
	e.write(t, "acme", streams("g", 4), 5)
	want := 8 * publicPerStream(5)
	waitFor(t, "the second to lead", second.Leading)
	waitFor(t, "every delivery enqueued", func() bool { return e.statuses(t)["pending"] >= want })
	time.Sleep(200 * time.Millisecond) // nothing more comes
	var n, distinct int
	err := e.pool.QueryRow(context.Background(), `SELECT count(*), count(DISTINCT event_id) FROM webhook_deliveries`).Scan(&n, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	if n != want || distinct != want {
		t.Errorf("%d deliveries of %d events, want %d of %d", n, distinct, want, want)
	}
}

// A public event whose metadata names no account cannot be anyone's
// delivery; it must not stop the deliveries of the events after it.
func TestAnEventNamingNoAccountDoesNotStopTheDispatcher(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(received) int { return http.StatusOK })
	e.eps.add(t, "acme", rc.URL)
	e.write(t, "", streams("orphan", 1), 1)
	e.write(t, "acme", streams("after", 1), 1)
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{}).Run)
	waitFor(t, "the delivery of the event after it", func() bool { return len(rc.successes()) == 1 })
}

// accountOf takes the account where the write side writes it, first in the
// metadata, without decoding the rest; metadata written otherwise is
// decoded whole, and metadata without an account names none.
func TestAccountOfReadsTheWriteSidesMetadata(t *testing.T) {
	written, err := json.Marshal(events.Metadata{AccountID: "acme", Actor: events.Actor{Subject: "u1"}, RequestID: "r1",
		RequestFingerprint: "f", IdempotencyKey: "k", SchemaVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		metadata, account string
	}{
		{string(written), "acme"},
		{`{"actor":{"sub":"u1"},"account_id":"acme"}`, "acme"},
		{`{"account_id":"acm\u0065"}`, "acme"},
		{`{"account_id":""}`, ""},
		{`{"actor":{"sub":"u1"}}`, ""},
		{`{"actor":`, ""},
	} {
		account, err := accountOf(events.RecordedEvent{Metadata: json.RawMessage(c.metadata)})
		if account != c.account || (err == nil) != (c.account != "") {
			t.Errorf("%s: account %q, error %v; want %q", c.metadata, account, err, c.account)
		}
	}
	ev := events.RecordedEvent{Metadata: written}
	if allocs := testing.AllocsPerRun(100, func() {
		if _, err := accountOf(ev); err != nil {
			t.Fatal(err)
		}
	}); allocs > 1 {
		t.Fatalf("accountOf of the write side's metadata made %.0f allocations; want at most 1, the account's string", allocs)
	}
}
