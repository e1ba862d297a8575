package pgtest

import (
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/invoicing/invoicing/internal/pgcluster"
)

// Server is a PostgreSQL cluster of its own for one test, which the test may
// stop and restart to inject an outage. It is never the shared cluster of
// NewDatabase. NewServer starts it; t.Cleanup stops it and deletes it.
//
// Its methods report failures with t.Fatalf, so call them from the test's
// goroutine.
type Server struct {
	t   testing.TB
	mu  sync.Mutex
	srv *pgcluster.Cluster
	up  bool
}

// NewServer starts a dedicated cluster for t, as NewDatabase starts the
// shared one (system binaries, a temporary directory, an unprivileged user
// when root), on a free 127.0.0.1 port that it keeps across restarts.
//
// When TEST_DATABASE_URL is set the test is skipped: the tests are then
// meant to run against that external server, and the point of a Server is to
// stop it, which must never be done to a server this process does not own.
func NewServer(t testing.TB) *Server {
	t.Helper()
	if u := os.Getenv(EnvURL); u != "" {
		t.Skipf("pgtest: %s is set (%s): this test stops and restarts PostgreSQL, which it may do only "+
			"to a cluster it starts itself, and tests are meant to use the external server; "+
			"unset %s to run it on a throwaway cluster", EnvURL, pgcluster.Redact(u), EnvURL)
	}
	srv, err := pgcluster.Start(dedicatedSettings())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Stop(); err != nil {
			t.Errorf("pgtest: stopping the dedicated PostgreSQL: %v", err)
		}
	})
	return &Server{t: t, srv: srv, up: true}
}

// dedicatedSettings are the shared cluster's settings with
// synchronous_commit on. An immediate stop loses the WAL still in shared
// memory; with synchronous_commit off a commit is acknowledged before its WAL
// reaches the kernel, so an acknowledged commit could vanish in the stop and
// a test would blame the code under test. fsync stays off: the kernel
// survives the stop, so what was written to it is not lost.
func dedicatedSettings() []string {
	settings := make([]string, 0, len(serverSettings))
	for _, s := range serverSettings {
		if strings.HasPrefix(s, "synchronous_commit=") {
			s = "synchronous_commit=on"
		}
		settings = append(settings, s)
	}
	return settings
}

// URL returns the admin connection string (database postgres). It stays the
// same across StopImmediate and Start.
func (s *Server) URL() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.srv.URL()
}

// NewDatabase creates a fresh, empty database on s and returns its
// connection string. It is not dropped: the whole cluster is deleted when
// the test ends, and the server may well be stopped by then.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	admin := s.URL()
	name, err := createDatabase(admin)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	dbURL, err := withDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return dbURL
}

// StopImmediate stops the server as `pg_ctl stop -m immediate` does
// (SIGQUIT to the postmaster): sessions are cut at once, no checkpoint is
// written, and the next Start runs crash recovery. It returns once the
// postmaster and its backends have exited; from then on connections are
// refused.
func (s *Server) StopImmediate() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.up {
		s.t.Fatalf("pgtest: StopImmediate: the server is already stopped")
	}
	s.up = false
	if err := s.srv.StopImmediate(); err != nil {
		s.t.Fatalf("pgtest: immediate stop: %v; log %s:\n%s", err, s.srv.LogPath(), s.srv.LogTail())
	}
}

// Start starts the stopped server again with the same data directory on the
// same port, waits until it accepts connections (after crash recovery), and
// returns when it first accepted one.
func (s *Server) Start() time.Time {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.up {
		s.t.Fatalf("pgtest: Start: the server is already running")
	}
	accepted, err := s.srv.Restart()
	if err != nil {
		s.t.Fatalf("pgtest: restart on port %d: %v", s.srv.Port(), err)
	}
	s.up = true
	return accepted
}
