package webhook

import (
	"context"
	"net/http"
	"testing"
	"time"
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
