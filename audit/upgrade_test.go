package audit

import (
	"context"
	"io/fs"
	"os"
	"path"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events/eventstoretest"
	"github.com/invoicing/invoicing/internal/pgmigrate"
	"github.com/invoicing/invoicing/internal/pgtest"
)

// projectionsDir holds the projections' migrations, which
// projections.Migrate applies as the component "projections".
const projectionsDir = "../projections/migrations"

// releasedProjections is the projections' migration set as released before
// the audit package had migrations of its own: today's files, but 004 as it
// was then, creating the chain's tables (kept verbatim in testdata).
func releasedProjections(t *testing.T) fs.FS {
	t.Helper()
	files := fstest.MapFS{}
	entries, err := os.ReadDir(projectionsDir)
	if err != nil {
		t.Fatal(err)
	}
	read := func(file string) *fstest.MapFile {
		body, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		return &fstest.MapFile{Data: body}
	}
	for _, e := range entries {
		files[e.Name()] = read(path.Join(projectionsDir, e.Name()))
	}
	files["004_audit_chain.sql"] = read("testdata/projections_004_audit_chain.sql")
	return files
}

// migrateProjections applies a set of projections' migrations, as
// projections.Migrate does.
func migrateProjections(fsys fs.FS, dir string) func(context.Context, *pgxpool.Pool) error {
	return func(ctx context.Context, pool *pgxpool.Pool) error {
		return pgmigrate.Apply(ctx, pool, "projections", fsys, dir)
	}
}

func TestADatabaseChainedBeforeAuditHadItsMigrationsUpgradesIntact(t *testing.T) {
	url := pgtest.NewDatabase(t)
	e := newEnvAt(t, url, migrateProjections(releasedProjections(t), "."))
	stop := runSealer(t, e, SealerOptions{SealEvery: 1, Key: testSealKey})
	eventstoretest.AppendCompanies(t, e.store, 6)
	waitChained(t, e, 6)
	stop()
	ctx := context.Background()
	kept, err := LatestSeal(ctx, e.pool)
	if err != nil || kept.Seq != 6 {
		t.Fatalf("the seal before the upgrade = %+v, %v; want one at seq 6", kept, err)
	}
	before, err := RecordedLinks(ctx, e.pool)
	if err != nil {
		t.Fatal(err)
	}

	// The upgrade: the new binary applies today's sets.
	for _, migrate := range []func(context.Context, *pgxpool.Pool) error{migrateProjections(os.DirFS(projectionsDir), "."), Migrate} {
		if err := migrate(ctx, e.pool); err != nil {
			t.Fatalf("upgrading: %v", err)
		}
	}
	after, err := RecordedLinks(ctx, e.pool)
	if err != nil || !slices.Equal(before, after) {
		t.Fatalf("the chain after the upgrade: %d links (%v), want the %d from before", len(after), err, len(before))
	}
	eventstoretest.AppendCompanies(t, e.store, 2)
	seal, err := SealNow(ctx, e.store, e.pool, testSealKey)
	if err != nil || seal.Seq != 8 {
		t.Fatalf("SealNow after the upgrade = %+v, %v; want a seal at seq 8", seal, err)
	}
	if r := verify(t, e, kept, seal); !r.OK() || r.Chained != 8 {
		t.Fatalf("after the upgrade: %+v", r)
	}
}

// An older binary started on a database a newer one created (a rolled-back
// deploy) finds the projections' 004 recorded and does not create the
// chain's tables again.
func TestAnOlderBinaryStartsOnADatabaseCreatedSince(t *testing.T) {
	url := pgtest.NewDatabase(t)
	e := newEnvAt(t, url, migrateProjections(os.DirFS(projectionsDir), "."), Migrate)
	eventstoretest.AppendCompanies(t, e.store, 3)
	if _, err := SealNow(context.Background(), e.store, e.pool, testSealKey); err != nil {
		t.Fatal(err)
	}
	if err := migrateProjections(releasedProjections(t), ".")(context.Background(), e.pool); err != nil {
		t.Fatalf("the released projections' migrations on a new database: %v", err)
	}
	if r := verify(t, e); !r.OK() || r.Chained != 3 {
		t.Fatalf("after the older binary's migrations: %+v", r)
	}
}
