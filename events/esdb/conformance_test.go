package esdb_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/ory/dockertest/v3"
	"github.com/ory/dockertest/v3/docker"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/esdb"
	"github.com/invoicing/invoicing/events/eventstoretest"
)

// envTestURL names a running EventStoreDB for the conformance suite, such as
// esdb://localhost:2113?tls=false. Without it the test starts one in Docker.
const envTestURL = "EVENTSTORE_TEST_URL"

// The pinned server image: a new tag is a deliberate change.
const (
	image    = "eventstore/eventstore"
	imageTag = "24.10"
)

// TestConformance holds the adapter to the port's rules. EventStoreDB cannot
// be emptied, so every subtest shares one server; the suite is written to
// reason only about its own events.
func TestConformance(t *testing.T) {
	url := serverURL(t)
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))
	eventstoretest.Run(t, func(t *testing.T) events.Store {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		s, err := esdb.Open(ctx, url, logger)
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
		return s
	})
}

// serverURL returns the server to test against, starting one in Docker when
// none is named, or skips the test saying exactly why it cannot.
func serverURL(t *testing.T) string {
	t.Helper()
	if url := os.Getenv(envTestURL); url != "" {
		return url
	}
	pool, err := dockertest.NewPool("")
	if err != nil {
		t.Skipf("EventStoreDB conformance skipped: %s is unset and no Docker client could be set up: %v", envTestURL, err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := pool.Client.PingWithContext(ctx); err != nil {
		t.Skipf("EventStoreDB conformance skipped: %s is unset and no Docker engine answers at %s: %v", envTestURL, pool.Client.Endpoint(), err)
	}
	return startServer(t, pool)
}

// startServer runs a throwaway single node with an in-memory database and
// waits until it is ready.
func startServer(t *testing.T, pool *dockertest.Pool) string {
	t.Helper()
	res, err := pool.RunWithOptions(&dockertest.RunOptions{
		Repository: image,
		Tag:        imageTag,
		Env: []string{
			"EVENTSTORE_INSECURE=true",
			"EVENTSTORE_CLUSTER_SIZE=1",
			"EVENTSTORE_RUN_PROJECTIONS=All",
			"EVENTSTORE_MEM_DB=true",
		},
		ExposedPorts: []string{"2113/tcp"},
	}, func(hc *docker.HostConfig) {
		hc.AutoRemove = true
		hc.RestartPolicy = docker.RestartPolicy{Name: "no"}
	})
	if err != nil {
		t.Fatalf("start %s:%s: %v", image, imageTag, err)
	}
	t.Cleanup(func() {
		if err := pool.Purge(res); err != nil {
			t.Logf("remove the EventStoreDB container: %v", err)
		}
	})
	_ = res.Expire(15 * 60) // the engine removes it even if this process dies

	hostPort := res.GetHostPort("2113/tcp")
	url := "esdb://" + hostPort + "?tls=false"
	pool.MaxWait = 3 * time.Minute
	if err := pool.Retry(func() error { return ready(t.Context(), hostPort, url) }); err != nil {
		t.Fatalf("EventStoreDB at %s never became ready: %v", hostPort, err)
	}
	return url
}

// ready is the server's own liveness answer, then a real gRPC call with a
// fresh client: the HTTP endpoint answers before the node accepts calls.
func ready(ctx context.Context, hostPort, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+hostPort+"/health/live", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("GET /health/live: %s, want 204", resp.Status)
	}
	s, err := esdb.Open(ctx, url, nil)
	if err != nil {
		return err
	}
	return s.Close()
}
