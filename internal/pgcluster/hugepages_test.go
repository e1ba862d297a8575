package pgcluster

import (
	"errors"
	"runtime"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStartWithAsksForTheHugePagesItsSharedMemoryTakes: the server's own
// count reaches the decision, and the server runs with what was decided.
func TestStartWithAsksForTheHugePagesItsSharedMemoryTakes(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PostgreSQL has huge pages on Linux only")
	}
	asked := 0
	c, err := StartWith(Options{Settings: []string{"shared_buffers=64MB"}, HugePages: func(need int) (bool, error) {
		asked = need
		return false, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Stop() })
	// 64 MB of buffers in 2 MB pages is 32 pages, plus the rest of the
	// shared memory; a count ignoring the settings (128 MB) would be ≥ 64.
	if asked <= 32 || asked >= 64 {
		t.Errorf("asked for %d huge pages with shared_buffers=64MB, want between 32 and 64", asked)
	}
	conn, err := pgx.Connect(t.Context(), c.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	var setting string
	if err := conn.QueryRow(t.Context(), "SELECT current_setting('huge_pages')").Scan(&setting); err != nil {
		t.Fatal(err)
	}
	if setting != "off" {
		t.Errorf("huge_pages = %s after the decision said no, want off", setting)
	}
}

// TestStartWithReturnsTheDecisionsError: no server starts on a decision that
// failed.
func TestStartWithReturnsTheDecisionsError(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("PostgreSQL has huge pages on Linux only")
	}
	refused := errors.New("no pages")
	c, err := StartWith(Options{HugePages: func(int) (bool, error) { return false, refused }})
	if !errors.Is(err, refused) {
		if c != nil {
			_ = c.Stop()
		}
		t.Fatalf("StartWith = %v, want the decision's error", err)
	}
}
