package webhook

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"
	"testing"
	"time"
)

// The owner re-enables an endpoint the service disabled, and it is still
// dead: it is disabled again once it has failed DisableAfter more, with a
// reason of its own (the reason names the streak, and the disabling's
// idempotency key is made of it).
func TestAReenabledDeadEndpointIsDisabledAgain(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, func(received) int { return http.StatusServiceUnavailable })
	e.eps.add(t, "acme", rc.URL) // the fake never drops it: as if re-enabled at once
	disabled := make(chan string, 10)
	disable := func(_ context.Context, account, endpoint, reason string) error {
		disabled <- reason
		return nil
	}
	var first string
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{RetryFor: 200 * time.Millisecond, DisableAfter: 300 * time.Millisecond, Disable: disable}).Run)
	e.write(t, "acme", streams("r", 1), 2)
	select {
	case why := <-disabled:
		first = why
	case <-time.After(10 * time.Second):
		t.Fatal("never disabled")
	}
	// re-enabled; keeps failing for much longer than DisableAfter
	for i := 0; i < 10; i++ {
		e.write(t, "acme", streams(fmt.Sprintf("s%d-", i), 1), 1)
		time.Sleep(200 * time.Millisecond)
	}
	var failed int
	_ = e.pool.QueryRow(context.Background(), `SELECT count(*) FROM webhook_deliveries WHERE status='failed'`).Scan(&failed)
	select {
	case why := <-disabled:
		if why == first {
			t.Errorf("disabled again with the first streak's reason %q", why)
		}
	case <-time.After(2 * time.Second):
		t.Errorf("re-enabled, failing for 2 s (DisableAfter 300 ms, %d deliveries failed for good): never disabled again", failed)
	}
}

// The owner disables an endpoint (its pending deliveries fail as "gone"),
// re-enables it later; its first attempt then meets one transient 503,
// which must not disable it: what the owner did is no failure of the
// receiver's.
func TestAnOwnersDisablingIsNoFailureOfTheReceiver(t *testing.T) {
	e := newEnv(t)
	var calls atomic.Int32
	rc := newReceiver(t, func(received) int {
		if calls.Add(1) == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	// registered but disabled by its owner (not in the live list)
	ep := Endpoint{ID: "ep-owner-disabled", URL: rc.URL, CreatedAt: time.Now().Add(-time.Hour)}
	disabled := make(chan string, 10)
	disable := func(_ context.Context, account, endpoint, reason string) error {
		disabled <- reason
		return nil
	}
	// a delivery enqueued while it was enabled
	e.eps.byAccount["acme"] = []Endpoint{ep}
	run(t, e.dispatcher().Run)
	e.write(t, "acme", streams("o", 1), 1)
	waitFor(t, "enqueued", func() bool { return e.statuses(t)["pending"] == 1 })
	e.eps.mu.Lock()
	e.eps.byAccount["acme"] = nil // owner disables it
	e.eps.mu.Unlock()
	run(t, e.fastSender(SenderOptions{DisableAfter: 300 * time.Millisecond, Disable: disable}).Run)
	waitFor(t, "the delivery to fail as gone", func() bool { return e.statuses(t)["failed"] == 1 })
	time.Sleep(500 * time.Millisecond) // disabled for a while
	e.eps.mu.Lock()
	e.eps.byAccount["acme"] = []Endpoint{ep} // owner re-enables it
	e.eps.mu.Unlock()
	e.write(t, "acme", streams("p", 1), 1)
	waitFor(t, "the new delivery", func() bool { return len(rc.successes()) == 1 })
	select {
	case why := <-disabled:
		t.Errorf("disabled after one transient 503 (receiver otherwise healthy): %q", why)
	case <-time.After(500 * time.Millisecond):
	}
}
