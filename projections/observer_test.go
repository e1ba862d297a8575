package projections

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/eventstoretest"
)

// batchLog is an Observer that keeps what it is told.
type batchLog struct {
	mu      sync.Mutex
	batches []CommittedBatch
}

func (l *batchLog) Committed(b CommittedBatch) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.batches = append(l.batches, b)
}

func (l *batchLog) take() []CommittedBatch {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.batches
	l.batches = nil
	return out
}

func TestObserversAreToldOfEveryCommittedBatchAndCheckpointsTellWhere(t *testing.T) {
	e := newEnv(t)
	before := time.Now().Add(-time.Minute)
	last := eventstoretest.AppendCompanies(t, e.store, 25)
	ctx := context.Background()

	live := &batchLog{}
	runUntil(t, e, NewRunner(Companies{}, e.store, e.pool, quiet, RunnerOptions{BatchSize: 10, Observer: live}), last)
	total := 0
	for _, b := range live.take() {
		if b.Projection != "companies" || b.Rebuild || b.Events < 1 || b.Events > 10 || b.LastRecordedAt.Before(before) {
			t.Errorf("live batch %+v", b)
		}
		total += b.Events
		if total == 25 && b.Position != last {
			t.Errorf("the last batch ends at %s, want %s", b.Position, last)
		}
	}
	if total != 25 {
		t.Errorf("live batches hold %d events, want 25", total)
	}

	rebuilt := &batchLog{}
	r := &Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet, BatchSize: 10, Observer: rebuilt}
	if err := r.Rebuild(ctx, Companies{}); err != nil {
		t.Fatal(err)
	}
	var sizes []int
	for _, b := range rebuilt.take() {
		if !b.Rebuild || b.Projection != "companies" {
			t.Errorf("rebuild batch %+v", b)
		}
		sizes = append(sizes, b.Events)
	}
	if len(sizes) != 3 || sizes[0] != 10 || sizes[1] != 10 || sizes[2] != 5 {
		t.Errorf("rebuild batches of %v events, want 10, 10, 5", sizes)
	}

	g := NewGroup([]Projection{Companies{}, Customers{}}, e.store, e.pool, quiet, RunnerOptions{})
	cps, err := g.Checkpoints(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]events.Position{"companies": last, "customers": {}}
	if len(cps) != 2 {
		t.Fatalf("checkpoints %+v, want 2", cps)
	}
	for _, cp := range cps {
		if cp.Position != want[cp.Name] || cp.Quarantined != 0 {
			t.Errorf("checkpoint %+v, want %s with nothing quarantined", cp, want[cp.Name])
		}
	}
}
