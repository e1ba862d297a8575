package audit

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/eventstoretest"
	"github.com/invoicing/invoicing/internal/follow"
	"github.com/invoicing/invoicing/internal/pgtest"
)

var testSealKey = ed25519.NewKeyFromSeed([]byte("0123456789abcdef0123456789abcdef"))

// runSealer runs a sealer until the test ends, or until stop is called.
func runSealer(t *testing.T, e env, opts SealerOptions) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := NewSealer(e.store, e.pool, quiet, opts)
	go func() { defer close(done); s.Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	t.Cleanup(stop)
	return stop
}

// waitChained waits until n events are chained.
func waitChained(t *testing.T, e env, n int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var got int
		if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM audit_chain`).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got == n {
			return
		}
		if got > n || time.Now().After(deadline) {
			t.Fatalf("%d events chained, want %d", got, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func verify(t *testing.T, e env, extra ...Seal) LogReport {
	t.Helper()
	r, err := VerifyLog(context.Background(), e.pool, e.store, extra, testSealKey.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestTheChainCoversEveryEventOnceInTheProjectorsOrder(t *testing.T) {
	e := newEnv(t)
	runSealer(t, e, SealerOptions{SealEvery: 100, Key: testSealKey})
	const writers, each = 16, 40
	var wg sync.WaitGroup
	for range writers {
		wg.Add(1)
		go func() { defer wg.Done(); eventstoretest.AppendCompanies(t, e.store, each) }()
	}
	wg.Wait()
	waitChained(t, e, writers*each)

	recorded, err := RecordedLinks(context.Background(), e.pool)
	if err != nil {
		t.Fatal(err)
	}
	now, err := RecomputeLinks(context.Background(), e.store)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(recorded, now) {
		t.Fatalf("the recorded chain (%d links) is not the log's order (%d events)", len(recorded), len(now))
	}
	for i, l := range recorded {
		if l.Seq != uint64(i+1) {
			t.Fatalf("link %d has seq %d", i, l.Seq)
		}
	}
	if r := verify(t, e); !r.OK() || r.Seals == 0 {
		t.Fatalf("an untouched log: %+v", r)
	}
}

// tamper runs SQL as a superuser who bypasses the immutability trigger.
func tamper(t *testing.T, e env, sql string, args ...any) {
	t.Helper()
	ctx := context.Background()
	conn, err := e.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	for _, stmt := range []string{`SET session_replication_role = replica`, sql, `RESET session_replication_role`} {
		var params []any
		if stmt == sql {
			params = args
		}
		if _, err := conn.Exec(ctx, stmt, params...); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
}

// chainedLog appends n companies and waits until they are chained and
// sealed; it returns the events' global positions in order, and stops the
// sealer (a rewrite must not race it).
func chainedLog(t *testing.T, n int) (env, []int64) {
	t.Helper()
	e := newEnv(t)
	stop := runSealer(t, e, SealerOptions{SealEvery: 1, Key: testSealKey}) // the last seal covers every event
	defer stop()
	eventstoretest.AppendCompanies(t, e.store, n)
	waitChained(t, e, n)
	rows, err := e.pool.Query(context.Background(), `SELECT global_position FROM events ORDER BY tx_id, global_position`)
	if err != nil {
		t.Fatal(err)
	}
	var positions []int64
	for rows.Next() {
		var p int64
		if err := rows.Scan(&p); err != nil {
			t.Fatal(err)
		}
		positions = append(positions, p)
	}
	return e, positions
}

func TestVerifyLogNamesTheFirstTamperedEvent(t *testing.T) {
	tests := []struct {
		name   string
		tamper func(t *testing.T, e env, gp []int64)
		seq    uint64
		kind   string
	}{
		{"one event's data changed", func(t *testing.T, e env, gp []int64) {
			tamper(t, e, `UPDATE events SET data = replace(data::text, 'Company 4', 'Company X')::json WHERE global_position = $1`, gp[4])
		}, 5, DiffChanged},
		{"an event deleted", func(t *testing.T, e env, gp []int64) {
			tamper(t, e, `DELETE FROM events WHERE global_position = $1`, gp[2])
		}, 3, DiffMissing},
		{"an event inserted", func(t *testing.T, e env, gp []int64) {
			tamper(t, e, `INSERT INTO events (global_position, tx_id, event_id, stream_name, stream_revision, event_type, data, metadata)
				OVERRIDING SYSTEM VALUE SELECT 1000000, tx_id, gen_random_uuid(), 'company-forged', 0, event_type, data, metadata
				FROM events WHERE global_position = $1`, gp[5])
		}, 7, DiffInserted},
		{"two events swapped", func(t *testing.T, e env, gp []int64) {
			// The log's order is (tx_id, global_position): swapping the
			// transaction ids of two events swaps their places.
			tamper(t, e, `UPDATE events SET tx_id = CASE global_position WHEN $1 THEN (SELECT tx_id FROM events WHERE global_position = $2)
				ELSE (SELECT tx_id FROM events WHERE global_position = $1) END
				WHERE global_position IN ($1, $2)`, gp[6], gp[7])
		}, 7, DiffReordered},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, gp := chainedLog(t, 10)
			tt.tamper(t, e, gp)
			r := verify(t, e)
			first, ok := r.First()
			if !ok || first.Seq != tt.seq || first.Kind != tt.kind {
				t.Fatalf("VerifyLog found %v, want %s at seq %d", r.Problems, tt.kind, tt.seq)
			}
		})
	}
}

func TestARewrittenChainIsCaughtByASealKeptElsewhere(t *testing.T) {
	e, gp := chainedLog(t, 10)
	kept, err := LatestSeal(context.Background(), e.pool)
	if err != nil || kept.Seq != 10 {
		t.Fatalf("latest seal = %+v, %v; want one at seq 10", kept, err)
	}
	// A superuser rewrites an event, then the whole chain and its seals to
	// match, with a key of their own.
	tamper(t, e, `UPDATE events SET data = replace(data::text, 'Company 1', 'Company X')::json WHERE global_position = $1`, gp[1])
	tamper(t, e, `TRUNCATE audit_seals, audit_chain`)
	forger := ed25519.NewKeyFromSeed([]byte("forged-key-forged-key-forged-key"))
	runSealer(t, e, SealerOptions{SealEvery: 3, Key: forger})
	waitChained(t, e, 10)

	if r, _ := VerifyLog(context.Background(), e.pool, e.store, nil, nil); !r.OK() {
		t.Fatalf("the forgery is consistent by itself, yet: %v", r.Problems)
	}
	r := verify(t, e, kept)
	if first, ok := r.First(); !ok || first.Kind != DiffSeal {
		t.Fatalf("against the kept seal: %v, want a seal difference", r.Problems)
	}
	if !slices.ContainsFunc(r.Problems, func(d Discrepancy) bool { return d.Seq == 10 && d.Kind == DiffSeal }) {
		t.Errorf("the kept seal at seq 10 is not reported: %v", r.Problems)
	}
	bad := kept
	bad.Chain = ChainHash{}.String()
	if r := verify(t, e, bad); r.OK() {
		t.Fatal("a seal whose signature does not match was accepted")
	}
}

func TestTheSealerResumesAfterACrashMidSealWithoutAGap(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// Every seal fails while this trigger exists: the batch that would
	// have taken it rolls back, links and all, as in a crash mid-seal.
	if _, err := e.pool.Exec(ctx, `
		CREATE FUNCTION crash_seal() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN RAISE EXCEPTION 'injected crash mid-seal'; END $$;
		CREATE TRIGGER crash_seal BEFORE INSERT ON audit_seals FOR EACH ROW EXECUTE FUNCTION crash_seal();`); err != nil {
		t.Fatal(err)
	}
	stop := runSealer(t, e, SealerOptions{SealEvery: 5, Key: testSealKey, Retry: follow.Retry{MinBackoff: 5 * time.Millisecond}})
	eventstoretest.AppendCompanies(t, e.store, 12)
	time.Sleep(300 * time.Millisecond) // several failed attempts
	stop()
	var chained int
	if err := e.pool.QueryRow(ctx, `SELECT count(*) FROM audit_chain`).Scan(&chained); err != nil || chained != 0 {
		t.Fatalf("%d links survived failed seals (%v); a batch and its seal commit together", chained, err)
	}
	if _, err := e.pool.Exec(ctx, `DROP TRIGGER crash_seal ON audit_seals`); err != nil {
		t.Fatal(err)
	}
	runSealer(t, e, SealerOptions{SealEvery: 5, Key: testSealKey}) // another process takes over
	eventstoretest.AppendCompanies(t, e.store, 3)
	waitChained(t, e, 15)
	if r := verify(t, e); !r.OK() {
		t.Fatalf("after the restart: %v", r.Problems)
	}
}

// A sealer whose lock session ends (a broken connection, an operator's
// pg_terminate_backend) stops at once and takes the lock again before it
// chains on, so that no second sealer can take the lock and run beside
// it; the chain goes on without a gap.
func TestASealerWhoseLockSessionEndsTakesItAgain(t *testing.T) {
	e := newEnv(t)
	runSealer(t, e, SealerOptions{Key: testSealKey, Retry: follow.Retry{MinBackoff: 5 * time.Millisecond}})
	eventstoretest.AppendCompanies(t, e.store, 10)
	waitChained(t, e, 10)
	key := follow.LockKey(sealerLock)
	gone := pgtest.EndLockSession(t, e.pool, key)
	deadline := time.Now().Add(20 * time.Second)
	for pid, held := pgtest.LockSession(t, e.pool, key); !held || pid == gone; pid, held = pgtest.LockSession(t, e.pool, key) {
		if time.Now().After(deadline) {
			t.Fatal("the sealer did not take its lock again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	eventstoretest.AppendCompanies(t, e.store, 5)
	waitChained(t, e, 15)
	if r := verify(t, e); !r.OK() {
		t.Fatalf("after the lock was taken again: %v", r.Problems)
	}
}

// A sealer that is behind reads on at once, unless Yield says the read
// models are catching up: then it reads one page per Linger.
func TestTheSealerYieldsToProjectionsCatchingUp(t *testing.T) {
	for _, yield := range []bool{false, true} {
		t.Run(fmt.Sprintf("yield=%v", yield), func(t *testing.T) {
			e := newEnv(t)
			eventstoretest.AppendCompanies(t, e.store, 100)
			var asked atomic.Int32
			stop := runSealer(t, e, SealerOptions{BatchSize: 10, Linger: time.Hour,
				Yield: func() bool { asked.Add(1); return yield }})
			if !yield {
				waitChained(t, e, 100)
				return
			}
			waitChained(t, e, 10)
			time.Sleep(300 * time.Millisecond) // the hour-long Linger: nothing more
			stop()
			waitChained(t, e, 10)
			if asked.Load() == 0 {
				t.Fatal("the sealer never asked Yield")
			}
		})
	}
}

// readCounter counts the log reads of a sealer.
type readCounter struct {
	events.Store
	reads atomic.Int32
}

func (c *readCounter) ReadAll(ctx context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	c.reads.Add(1)
	return c.Store.ReadAll(ctx, from, max)
}

// An idle sealer reads the log once per four Lingers: each read is three
// statements, and at one per Linger the sealer made most of an idle
// service's statements.
func TestAnIdleSealerReadsTheLogOncePerFourLingers(t *testing.T) {
	e := newEnv(t)
	store := &readCounter{Store: e.store}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s := NewSealer(store, e.pool, quiet, SealerOptions{Linger: 25 * time.Millisecond})
	go func() { defer close(done); s.Run(ctx) }()
	time.Sleep(time.Second)
	cancel()
	<-done
	// About 10 reads in the second, 40 at one per Linger; a slow machine
	// reads fewer.
	if n := store.reads.Load(); n < 2 || n > 20 {
		t.Errorf("an idle sealer read the log %d times in a second with a 25 ms Linger, want about 10", n)
	}
}
