package webhook

import (
	"context"
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
