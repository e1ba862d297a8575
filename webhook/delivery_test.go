package webhook

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

// inOrder checks that each stream's successful deliveries came in
// revision order, and returns how many public events each stream had
// delivered.
func inOrder(t *testing.T, got []received) map[string]int {
	t.Helper()
	last, n := map[string]uint64{}, map[string]int{}
	for _, r := range got {
		if prev, ok := last[r.stream]; ok && r.revision <= prev {
			t.Errorf("%s: revision %d delivered after %d", r.stream, r.revision, prev)
		}
		last[r.stream] = r.revision
		n[r.stream]++
	}
	return n
}

// publicPerStream is how many of write's n events per stream are public.
func publicPerStream(n int) int {
	count := 0
	for i := 0; i < n; i++ {
		if i == 0 || i%3 != 0 {
			count++
		}
	}
	return count
}

// Every public event reaches every endpoint that takes its type, once,
// signed so that the Standard Webhooks reference library verifies it, each
// resource's events in order; an endpoint of another account sees none.
func TestEachEndpointGetsItsEventsInOrderSigned(t *testing.T) {
	e := newEnv(t)
	all := newReceiver(t, nil)
	updates := newReceiver(t, nil)
	other := newReceiver(t, nil)
	epAll := e.eps.add(t, "acme", all.URL+"/hooks")
	epUpd := e.eps.add(t, "acme", updates.URL, "company.updated")
	e.eps.add(t, "globex", other.URL)
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{}).Run)
	names := streams("a", 5)
	e.write(t, "acme", names, 7)
	want := publicPerStream(7)
	waitFor(t, "every delivery", func() bool { return len(all.successes()) == 5*want && len(updates.successes()) == 5*(want-1) })
	for s, n := range inOrder(t, all.successes()) {
		if n != want {
			t.Errorf("%s: %d deliveries, want %d", s, n, want)
		}
	}
	inOrder(t, updates.successes())
	for _, tc := range []struct {
		rc *receiver
		ep Endpoint
	}{{all, epAll}, {updates, epUpd}} {
		wh, err := standardwebhooks.NewWebhook(tc.ep.Secrets[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range tc.rc.requests() {
			if err := wh.Verify(r.body, r.header); err != nil {
				t.Fatalf("the reference library refuses a delivery: %v", err)
			}
			if r.header.Get(HeaderID) != r.id || r.header.Get("content-type") != "application/json" {
				t.Errorf("headers %v: want webhook-id = the event id %s and a JSON body", r.header, r.id)
			}
		}
	}
	if len(other.requests()) != 0 {
		t.Errorf("another account's endpoint got %d deliveries", len(other.requests()))
	}
}

// A receiver verifying with another secret refuses a delivery, and so does
// one given it again with a fresh timestamp (a replay past the library's
// tolerance needs one: the signature covers the timestamp; the library's
// refusal of old timestamps themselves is TestStandardWebhooksVerifiesOurSignatures').
func TestAWrongSecretOrAReplayedTimestampIsRefused(t *testing.T) {
	e := newEnv(t)
	rc := newReceiver(t, nil)
	ep := e.eps.add(t, "acme", rc.URL)
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{}).Run)
	e.write(t, "acme", streams("r", 1), 1)
	waitFor(t, "the delivery", func() bool { return len(rc.requests()) == 1 })
	r := rc.requests()[0]
	wh, _ := standardwebhooks.NewWebhook(ep.Secrets[0])
	if err := wh.Verify(r.body, r.header); err != nil {
		t.Fatalf("the delivery does not verify: %v", err)
	}
	wrong, _ := Secret(testKey, "acme", "another-endpoint", 1)
	other, _ := standardwebhooks.NewWebhook(wrong)
	if err := other.Verify(r.body, r.header); err == nil {
		t.Error("a wrong secret verified the delivery")
	}
	replayed := r.header.Clone()
	replayed.Set(HeaderTimestamp, strconv.FormatInt(time.Now().Add(time.Minute).Unix(), 10))
	if err := wh.Verify(r.body, replayed); err == nil {
		t.Error("a replay with a new timestamp verified")
	}
}

// A receiver that fails gets the delivery again, with the same
// webhook-id, after a backoff, until it answers 2xx; the resource's next
// event waits for it, and every attempt is in the log.
func TestFailedAttemptsAreRetriedUntilSuccessInOrder(t *testing.T) {
	e := newEnv(t)
	var calls atomic.Int32
	rc := newReceiver(t, func(received) int {
		if calls.Add(1) <= 3 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	ep := e.eps.add(t, "acme", rc.URL)
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{}).Run)
	e.write(t, "acme", streams("b", 1), 2)
	waitFor(t, "both deliveries", func() bool { return len(rc.successes()) == 2 })
	got := rc.requests()
	if len(got) != 5 {
		t.Fatalf("%d requests, want 3 failures and 2 successes", len(got))
	}
	for _, r := range got[:4] {
		if r.header.Get(HeaderID) != got[0].header.Get(HeaderID) || r.revision != 0 {
			t.Errorf("attempt of revision %d with webhook-id %s: want revision 0's four attempts first, one id", r.revision, r.header.Get(HeaderID))
		}
	}
	list, _, err := NewDeliveries(e.pool, nil).List(context.Background(), "acme", ep.ID, "", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || len(list[0].Attempts) != 4 || list[0].Status != "succeeded" || *list[0].Attempts[0].StatusCode != 500 {
		t.Fatalf("delivery log %+v: want the first with 4 attempts (3 × 500), succeeded", list)
	}
	gap := list[0].Attempts[1].At.Sub(list[0].Attempts[0].At)
	if gap < 0 || list[0].NextAttemptAt != nil {
		t.Errorf("attempts %v: want increasing times and no next attempt once succeeded", list[0].Attempts)
	}
}

// A delivery still failing when its retry period ends fails for good; the
// resource's next event is not held back by it; a dead endpoint is
// disabled; and a manual retry sends a failed delivery again.
func TestADeliveryFailsWhenItsRetriesExpireAndCanBeRetriedByHand(t *testing.T) {
	e := newEnv(t)
	var up atomic.Bool
	rc := newReceiver(t, func(received) int {
		if up.Load() {
			return http.StatusNoContent
		}
		return http.StatusServiceUnavailable
	})
	ep := e.eps.add(t, "acme", rc.URL)
	disabled := make(chan string, 10)
	disable := func(_ context.Context, account, endpoint, reason string) error {
		disabled <- account + "/" + endpoint + ": " + reason
		return nil
	}
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{RetryFor: 300 * time.Millisecond, DisableAfter: 200 * time.Millisecond, Disable: disable}).Run)
	e.write(t, "acme", streams("c", 1), 2)
	waitFor(t, "both deliveries to fail", func() bool { return e.statuses(t)["failed"] == 2 })
	select {
	case why := <-disabled:
		t.Logf("disabled %s", why)
	case <-time.After(5 * time.Second):
		t.Error("the dead endpoint was not disabled")
	}
	log := NewDeliveries(e.pool, nil)
	list, _, err := log.List(context.Background(), "acme", ep.ID, "", 10)
	if err != nil || len(list) != 2 {
		t.Fatalf("list = %v, %v", list, err)
	}
	up.Store(true)
	d, err := log.Retry(context.Background(), "acme", ep.ID, list[0].ID, "retry-key-1")
	// The retry wakes the sender, which may have sent it already.
	if err != nil || (d.Status != "pending" || d.NextAttemptAt == nil) && d.Status != "succeeded" {
		t.Fatalf("retry = %+v, %v: want it pending, due now (or sent already)", d, err)
	}
	waitFor(t, "the retried delivery", func() bool { return len(rc.successes()) == 1 })
	// The receiver answers before the sender records the answer: until
	// then the delivery is, rightly, still pending.
	waitFor(t, "the retried delivery recorded", func() bool { return e.statuses(t)["succeeded"] == 1 })
	// The same request again (a client's retry after a timeout): no
	// second attempt.
	again, err := log.Retry(context.Background(), "acme", ep.ID, list[0].ID, "retry-key-1")
	if err != nil || again.Status != "succeeded" {
		t.Fatalf("the retry's replay = %+v, %v: want the delivery as it is, succeeded", again, err)
	}
	if _, err := log.Retry(context.Background(), "globex", ep.ID, list[0].ID, "retry-key-2"); err != ErrNotFound {
		t.Errorf("another account's retry = %v, want ErrNotFound", err)
	}
	// Only the service's one form of an id names a delivery
	// (events.ParseUUID): PostgreSQL reads the first two as the same id and
	// refuses the third.
	id := list[0].ID
	for _, other := range []string{"{" + id + "}", strings.ReplaceAll(id, "-", ""), "urn:uuid:" + id} {
		if _, err := log.Get(context.Background(), "acme", ep.ID, other); err != ErrNotFound {
			t.Errorf("get by %q = %v, want ErrNotFound", other, err)
		}
	}
}

// An endpoint that never answers in time holds only its share of the
// workers: another endpoint's deliveries go on meanwhile.
func TestADeadEndpointDoesNotDelayAnother(t *testing.T) {
	e := newEnv(t)
	hang := make(chan struct{})
	var inFlight atomic.Int32
	dead := newReceiver(t, func(received) int { inFlight.Add(1); <-hang; return http.StatusOK })
	defer close(hang) // before the servers close: they wait for their handlers
	live := newReceiver(t, nil)
	e.eps.add(t, "acme", dead.URL)
	e.eps.add(t, "acme", live.URL)
	run(t, e.dispatcher().Run)
	run(t, e.fastSender(SenderOptions{Workers: 4, PerEndpoint: 2, Timeout: time.Minute}).Run)
	start := time.Now()
	e.write(t, "acme", streams("d", 10), 2)
	waitFor(t, "the live endpoint's deliveries", func() bool { return len(live.successes()) == 20 })
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the live endpoint waited %s", took)
	}
	if n := inFlight.Load(); n < 1 || n > 2 {
		t.Errorf("the dead endpoint has %d attempts in flight, want 1 or 2 (its share)", n)
	}
}

// TestALeaseHoldsWhateverTheClaimersClocks: a delivery one sender holds
// is not taken by another whose clock runs an hour ahead (or behind), so
// clock skew between instances sends nothing twice; the lease is the
// database's. Once the holder gives it back, any sender takes it.
func TestALeaseHoldsWhateverTheClaimersClocks(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	past := time.Now().Add(-3 * time.Hour) // due by every clock below
	addDeliveries(t, e, "due", 1, "pending", &past)
	clocked := func(skew time.Duration) *Sender {
		return e.fastSender(SenderOptions{Now: func() time.Time { return time.Now().Add(skew) }})
	}
	holder := clocked(0)
	held, err := holder.claim(ctx, 1)
	if err != nil || len(held) != 1 {
		t.Fatalf("claim = %v, %v; want the due delivery", held, err)
	}
	for _, skew := range []time.Duration{time.Hour, -time.Hour} {
		if got, err := clocked(skew).claim(ctx, 1); err != nil || len(got) != 0 {
			t.Errorf("a sender %s off claimed %d deliveries (%v), want none while the lease holds", skew, len(got), err)
		}
	}
	holder.release(held[0])
	if got, err := clocked(time.Hour).claim(ctx, 1); err != nil || len(got) != 1 {
		t.Errorf("after the release, claim = %v, %v; want the delivery", got, err)
	}
}
