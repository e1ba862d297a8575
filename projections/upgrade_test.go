package projections

import (
	"context"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events/eventstoretest"
)

// companiesV2 is the worked migration of docs/operations.md: a new column in
// the companies read model, shipped as the next version.
type companiesV2 struct{ Companies }

func (companiesV2) Version() int { return Companies{}.Version() + 1 }
func (companiesV2) Schema() string {
	return companiesSchema + "\nALTER TABLE companies ADD COLUMN display_name text GENERATED ALWAYS AS (coalesce(trading_name, legal_name)) STORED;\n"
}

func TestServeRebuildsAProjectionWhoseTablesAreOlderThanItsCode(t *testing.T) {
	e := newEnv(t) // installs the current version
	last := eventstoretest.AppendCompanies(t, e.store, 30)
	runUntil(t, e, NewRunner(Companies{}, e.store, e.pool, quiet, RunnerOptions{}), last)

	ctx := context.Background()
	stale, err := Install(ctx, e.pool, []Projection{companiesV2{}})
	if err != nil || len(stale) != 1 {
		t.Fatalf("Install with version 2 code = %v, %v; want companies reported stale", stale, err)
	}
	rebuilder := &Rebuilder{Store: e.store, Pool: e.pool, Logger: quiet}
	r := NewRunner(companiesV2{}, e.store, e.pool, quiet, RunnerOptions{Prepare: rebuilder.UpgradeIfStale})
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); r.Run(runCtx) }()
	defer func() { stop(); <-done }()
	for deadline := time.Now().Add(20 * time.Second); !r.Leading(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the runner never led after its upgrade: %v", r.Err())
		}
	}

	var version, rows, named int
	err = e.pool.QueryRow(ctx, `SELECT (SELECT version FROM projection_versions WHERE name = 'companies'),
		(SELECT count(*) FROM companies), (SELECT count(display_name) FROM companies)`).Scan(&version, &rows, &named)
	if err != nil {
		t.Fatal(err)
	}
	if want := (companiesV2{}).Version(); version != want || rows != 30 || named != 30 {
		t.Fatalf("after the upgrade: version %d, %d rows, %d with the new column; want %d, 30, 30", version, rows, named, want)
	}
	if stale, err := Install(ctx, e.pool, []Projection{Companies{}}); err == nil {
		t.Fatalf("version 1 code on version 2 tables = %v; want an error (old code must not write a newer schema)", stale)
	}
}
