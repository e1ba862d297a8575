package pgtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// lockSessionSQL finds the backend holding the session advisory lock of a
// bigint key in the current database: PostgreSQL shows such a lock with
// the key's high half as classid, its low half as objid, and objsubid 1.
const lockSessionSQL = `
	SELECT pid FROM pg_locks
	WHERE locktype = 'advisory' AND granted AND objsubid = 1
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND classid::bigint = $1 AND objid::bigint = $2`

// LockSession returns the backend holding the advisory lock key, and
// whether one does.
func LockSession(t testing.TB, pool *pgxpool.Pool, key int64) (pid int64, held bool) {
	t.Helper()
	k := uint64(key)
	err := pool.QueryRow(context.Background(), lockSessionSQL, int64(k>>32), int64(k&0xffffffff)).Scan(&pid)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false
	}
	if err != nil {
		t.Fatalf("find the session of lock %d: %v", key, err)
	}
	return pid, true
}

// EndLockSession ends the backend holding the advisory lock key, as a
// broken connection or an operator's pg_terminate_backend would, waits
// until that backend no longer holds it, and returns its pid.
func EndLockSession(t testing.TB, pool *pgxpool.Pool, key int64) (pid int64) {
	t.Helper()
	pid, held := LockSession(t, pool, key)
	if !held {
		t.Fatalf("no session holds lock %d", key)
	}
	if _, err := pool.Exec(context.Background(), `SELECT pg_terminate_backend($1)`, pid); err != nil {
		t.Fatalf("end backend %d: %v", pid, err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if now, held := LockSession(t, pool, key); !held || now != pid {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("backend %d still holds lock %d", pid, key)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
