package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/follow"
	"github.com/invoicing/invoicing/internal/pgtest"
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

// A dispatcher whose lock session ends (a broken connection, an operator's
// pg_terminate_backend) goes on reading the log on other connections; it
// must stop leading at once, so that whichever dispatcher takes the lock
// next (the standby, or itself again) leads alone. Every event still has
// one delivery, and the checkpoint ends at the last event.
func TestADispatcherThatLostItsLockStepsDown(t *testing.T) {
	e := newEnv(t)
	e.eps.add(t, "acme", "http://receiver.invalid/")
	opts := DispatcherOptions{Retry: follow.Retry{StandbyPoll: 20 * time.Millisecond}}
	first := NewDispatcher(e.store, e.pool, quiet, testPublic, e.eps, opts)
	second := NewDispatcher(e.store, e.pool, quiet, testPublic, e.eps, opts)
	run(t, first.Run)
	waitFor(t, "the first to lead", first.Leading)
	run(t, second.Run)
	e.write(t, "acme", streams("f", 2), 3)
	waitFor(t, "the first batch enqueued", func() bool { return e.statuses(t)["pending"] == 2*publicPerStream(3) })
	gone := pgtest.EndLockSession(t, e.pool, follow.LockKey(dispatcherLock))
	waitFor(t, "a dispatcher to take the lock again", func() bool {
		pid, held := pgtest.LockSession(t, e.pool, follow.LockKey(dispatcherLock))
		return held && pid != gone
	})
	// Before any event: a stale leader's next commit would fail on the
	// checkpoint, which is not what is tested here.
	for range 25 {
		if first.Leading() && second.Leading() {
			t.Fatal("both dispatchers lead: the one whose lock session ended did not step down")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if first.Leading() == second.Leading() {
		t.Fatalf("leading: first %v, second %v; want exactly one", first.Leading(), second.Leading())
	}
	e.write(t, "acme", streams("g", 2), 3)
	want := 4 * publicPerStream(3)
	waitFor(t, "every delivery enqueued", func() bool { return e.statuses(t)["pending"] == want })
	var n, distinct int
	var checkpointLo, lastLo int64
	err := e.pool.QueryRow(context.Background(), `
		SELECT (SELECT count(*) FROM webhook_deliveries), (SELECT count(DISTINCT event_id) FROM webhook_deliveries),
			(SELECT position_lo FROM webhook_checkpoint), (SELECT max(global_position) FROM events)`).Scan(&n, &distinct, &checkpointLo, &lastLo)
	if err != nil {
		t.Fatal(err)
	}
	if n != want || distinct != want || checkpointLo != lastLo {
		t.Errorf("%d deliveries of %d events, checkpoint at %d; want %d of %d, at %d", n, distinct, checkpointLo, want, want, lastLo)
	}
}

// Two leaders at once (the first's lock lost between its check and its
// commit): the checkpoint moves only from where the committing leader
// left it, so a stale leader's batch rolls back instead of moving it back.
func TestTheCheckpointMovesOnlyFromWhereItsLeaderLeftIt(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	start, first, second := events.Position{}, events.NewPosition(10, 5), events.NewPosition(12, 9)
	delivery := func() []newDelivery {
		return []newDelivery{{id: uuid.NewString(), endpointID: "ep", accountID: "acme", eventID: uuid.New(),
			eventType: "invoice.created", stream: "s", pos: first}}
	}
	steps := []struct {
		from, to events.Position
		rows     []newDelivery // a batch with deliveries commits in a transaction, one without in a statement
		want     error
	}{
		{start, second, nil, nil},
		{start, first, delivery(), errCheckpointMoved}, // a leader that loaded it before the first commit
		{start, first, nil, errCheckpointMoved},
		{second, first, delivery(), nil}, // from where it is: equality, not order
		{second, second, delivery(), errCheckpointMoved},
		{second, second, nil, errCheckpointMoved},
	}
	enqueued := 0
	for i, s := range steps {
		if err := commit(ctx, e.pool, s.from, s.to, s.rows); !errors.Is(err, s.want) {
			t.Fatalf("step %d: %s -> %s: %v, want %v", i, s.from, s.to, err, s.want)
		}
		if s.want == nil {
			enqueued += len(s.rows)
		}
		var n int
		if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries`).Scan(&n); err != nil || n != enqueued {
			t.Fatalf("step %d: %d deliveries (%v), want %d: a refused move enqueues nothing", i, n, err, enqueued)
		}
	}
	if got, err := loadCheckpoint(ctx, e.pool); err != nil || got != first {
		t.Fatalf("checkpoint %s, %v; want %s", got, err, first)
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
