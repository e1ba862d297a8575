package esdb_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invoicing/invoicing/events/esdb"
)

// syncBuffer collects log output written from the client's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestOpenFailsFastWhenNothingListens(t *testing.T) {
	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	start := time.Now()
	s, err := esdb.Open(t.Context(), "esdb://127.0.0.1:1?tls=false", logger)
	took := time.Since(start)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded with nothing listening")
	}
	if took > 6*time.Second {
		t.Errorf("Open took %v to fail, want a few seconds at most", took)
	}
	if !strings.Contains(err.Error(), "127.0.0.1:1") || !strings.Contains(err.Error(), "not ready") {
		t.Errorf("error %q should name the server and say it is not ready", err)
	}
	// The client's own chatter went to the logger, not the console.
	if !strings.Contains(logs.String(), "component=esdb-client") {
		t.Errorf("no client log lines reached the slog logger; got %q", logs.String())
	}
}

// TestOpenGivesUpOnASilentAddress uses an address that drops packets (or,
// on some networks, is refused at once): either way Open must not hang.
func TestOpenGivesUpOnASilentAddress(t *testing.T) {
	if testing.Short() {
		t.Skip("waits for the probe limit")
	}
	start := time.Now()
	s, err := esdb.Open(t.Context(), "esdb://10.255.255.1:2113?tls=false", nil)
	if err == nil {
		s.Close()
		t.Fatal("Open succeeded against a silent address")
	}
	if took := time.Since(start); took > 6*time.Second {
		t.Errorf("Open took %v to fail, want at most the 5 s probe limit and change", took)
	}
}

func TestOpenHonoursItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	start := time.Now()
	if s, err := esdb.Open(ctx, "esdb://10.255.255.1:2113?tls=false", nil); err == nil {
		s.Close()
		t.Fatal("Open succeeded with a cancelled context")
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("Open took %v with a cancelled context", took)
	}
}

func TestOpenRefusesABadConnectionString(t *testing.T) {
	if _, err := esdb.Open(t.Context(), "http://localhost:2113", nil); err == nil || !strings.Contains(err.Error(), "scheme") {
		t.Errorf("err = %v, want one about the scheme", err)
	}
}
