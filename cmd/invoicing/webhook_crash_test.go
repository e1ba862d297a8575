package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/follow"
	"github.com/invoicing/invoicing/internal/pgtest"
)

// servedProcess is `invoicing serve` in a process of its own (this test
// binary, re-executed through TestExitCodes), so that a test can SIGKILL
// it: no deferred function, no shutdown, connections cut as a crash cuts
// them.
type servedProcess struct {
	url string
	cmd *exec.Cmd
	log *os.File
}

// freeAddr is a loopback address nothing listens on.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		t.Fatal(err)
	}
	return addr
}

// serveEnv is the environment of a served process: private networks
// allowed (the receiver is on loopback) and retries after at most 2 s
// instead of an hour, so that deliveries resume within seconds of the
// receiver's recovery and the test need not wait out a real schedule.
func serveEnv(dbURL, addr string) []string {
	return []string{"INVOICING_TEST_MAIN=serve", "HOME=" + os.TempDir(), "PATH=" + os.Getenv("PATH"),
		"DATABASE_URL=" + dbURL, "HTTP_ADDR=" + addr, "AUTH_HS256_SECRET=" + testSecret, "AUTH_ORG_CLAIM=org_id",
		"WEBHOOK_ALLOW_PRIVATE_NETWORKS=true", "WEBHOOK_BACKOFF_MIN=100ms", "WEBHOOK_BACKOFF_MAX=2s",
		"WEBHOOK_TIMEOUT=2s", "LOG_LEVEL=warn"}
}

// startServe starts a served process on addr and waits until it is ready.
func startServe(t *testing.T, dbURL, addr string) *servedProcess {
	t.Helper()
	p, err := launch(t, dbURL, addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// launch is startServe for any goroutine: it reports instead of failing
// the test.
func launch(t *testing.T, dbURL, addr string) (*servedProcess, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	log, err := os.CreateTemp(t.TempDir(), "serve-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-test.run=^TestExitCodes$")
	cmd.Env, cmd.Stdout, cmd.Stderr = serveEnv(dbURL, addr), log, log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &servedProcess{url: "http://" + addr, cmd: cmd, log: log}
	t.Cleanup(p.kill)
	return p, p.waitReady()
}

func (p *servedProcess) waitReady() error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(p.url + "/readyz")
		if err == nil {
			_ = res.Body.Close() // the status is all a probe needs
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	out, _ := os.ReadFile(p.log.Name()) // for the message only
	return fmt.Errorf("the service at %s did not become ready; its log:\n%s", p.url, out)
}

// kill sends SIGKILL and reaps the process; again is a no-op.
func (p *servedProcess) kill() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGKILL) // it may have exited already
	_ = p.cmd.Wait()                          // a killed process's error is expected
}

// writer sends writes with their idempotency keys again until they are
// accepted, through crashes and restarts.
type writer struct {
	url   func() string
	tok   string
	http  *http.Client
	count atomic.Int64
}

func (w *writer) write(t *testing.T, method, path, key, body string) map[string]any {
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		req, err := http.NewRequest(method, w.url()+path, strings.NewReader(body))
		if err != nil {
			t.Error(err)
			return nil
		}
		req.Header.Set("Authorization", "Bearer "+w.tok)
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", map[bool]string{true: mergePatchType, false: "application/json"}[method == http.MethodPatch])
		res, err := w.http.Do(req)
		if err != nil {
			continue // the service is down: send it again
		}
		b, err := io.ReadAll(res.Body)
		_ = res.Body.Close() // read to the end already
		if err == nil && res.StatusCode < 300 {
			w.count.Add(1)
			var m map[string]any
			if err := json.Unmarshal(b, &m); err != nil {
				t.Errorf("%s %s: %v", method, path, err)
			}
			return m
		}
		if err == nil && res.StatusCode < 500 {
			t.Errorf("%s %s: %d %s", method, path, res.StatusCode, b)
			return nil
		}
	}
	t.Errorf("%s %s was never accepted", method, path)
	return nil
}

// writeCustomers makes n writes after the company's: customers, then
// renames of them round-robin, from four writers that each own some customers (so a
// customer's renames are sequential, and its events' order is its writer's).
func (w *writer) writeCustomers(t *testing.T, prefix string, n int) {
	company := w.write(t, http.MethodPost, "/v1/companies", prefix+"-company", minimalCompany)
	if company == nil {
		t.FailNow()
	}
	base := "/v1/companies/" + company["id"].(string) + "/customers"
	var wg sync.WaitGroup
	const writers, perWriter = 4, 2
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var ids []string
			for c := 0; c < perWriter; c++ {
				cu := w.write(t, http.MethodPost, base, fmt.Sprintf("%s-cu-%d-%d", prefix, g, c), minimalCustomer)
				if cu == nil {
					return
				}
				ids = append(ids, cu["id"].(string))
			}
			renames := (n - writers*perWriter) / writers
			if g < (n-writers*perWriter)%writers {
				renames++
			}
			for i := 0; i < renames; i++ {
				id := ids[i%len(ids)]
				w.write(t, http.MethodPatch, base+"/"+id, fmt.Sprintf("%s-rename-%d-%d", prefix, g, i), fmt.Sprintf(`{"name":"Customer %d-%d"}`, g, i))
			}
		}()
	}
	wg.Wait()
}

// feed reads the account's public events (id and resource), oldest first.
func feed(t *testing.T, url, tok string) []publicEvent {
	t.Helper()
	var out []publicEvent
	path := "/v1/events?limit=100"
	for {
		req, _ := http.NewRequest(http.MethodGet, url+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var page struct {
			Data       []publicEvent `json:"data"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		}
		err = json.NewDecoder(res.Body).Decode(&page)
		_ = res.Body.Close() // decoded
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", path, res.StatusCode, err)
		}
		out = append(out, page.Data...)
		if page.Pagination.NextCursor == nil {
			return out
		}
		path = "/v1/events?limit=100&after=" + *page.Pagination.NextCursor
	}
}

// checkDelivered waits until every event of the feed has been answered
// 2xx, then checks that each resource's events were first delivered in
// their order, and that every copy of an event carried the same
// webhook-id and body.
func checkDelivered(t *testing.T, rc *hookReceiver, events []publicEvent) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		got := rc.delivered()
		missing := 0
		for _, ev := range events {
			if !got[ev.ID] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events never delivered", missing, len(events))
		}
		time.Sleep(200 * time.Millisecond)
	}
	order := map[string]int{}
	for i, ev := range events {
		order[ev.ID] = i
	}
	first, lastOf, bodies := map[string]bool{}, map[string]int{}, map[string][]byte{}
	dups := 0
	for _, h := range rc.hooks() {
		if h.event.ID != h.id {
			t.Fatalf("a delivery of event %s carries webhook-id %s", h.event.ID, h.id)
		}
		if prev, ok := bodies[h.id]; ok && !bytes.Equal(prev, h.body) {
			t.Errorf("event %s delivered with two bodies:\n%s\n%s", h.id, prev, h.body)
		}
		bodies[h.id] = h.body
		if h.status >= 300 {
			continue
		}
		if first[h.id] {
			dups++
			continue
		}
		first[h.id] = true
		if i, ok := lastOf[h.event.ResourceID]; ok && order[h.id] < i {
			t.Errorf("resource %s: event %s delivered after a later one", h.event.ResourceID, h.id)
		}
		lastOf[h.event.ResourceID] = order[h.id]
	}
	t.Logf("%d events delivered, %d requests, %d duplicate successes", len(events), len(rc.hooks()), dups)
}

// 1,000 writes while the service is SIGKILLed twice and the receiver
// answers 500 for its first minute: every event is delivered, at least
// once, each resource's in order, duplicates under the same webhook-id.
// (A real schedule would wait minutes after such an outage; the backoff is
// capped at 2 s here, see serveEnv.)
func TestEveryEventIsDeliveredThroughCrashesAndAReceiverOutage(t *testing.T) {
	if testing.Short() {
		t.Skip("kills the service twice and waits for 1,000 deliveries")
	}
	dbURL, addr := pgtest.NewDatabase(t), freeAddr(t)
	proc := startServe(t, dbURL, addr)
	downUntil := time.Now().Add(time.Minute)
	rc := newHookReceiver(t, func() int {
		if time.Now().Before(downUntil) {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	w := &writer{url: func() string { return "http://" + addr }, tok: token(t, "crashing"), http: &http.Client{Timeout: 10 * time.Second}}
	w.write(t, http.MethodPost, "/v1/webhook_endpoints", "crash-endpoint", `{"url":"`+rc.URL+`/in"}`)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, at := range []int64{300, 650} {
			for w.count.Load() < at {
				time.Sleep(10 * time.Millisecond)
			}
			proc.kill()
			time.Sleep(200 * time.Millisecond)
			var err error
			if proc, err = launch(t, dbURL, addr); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	w.writeCustomers(t, "crash", 1000-2) // the endpoint's and the company's are two

	<-done
	t.Logf("%d writes accepted", w.count.Load())
	checkDelivered(t, rc, feed(t, "http://"+addr, w.tok))
}

// leaderOf names the application (application_name) whose connection
// holds the dispatcher's lock.
func leaderOf(t *testing.T, pool *pgxpool.Pool) string {
	t.Helper()
	key := uint64(follow.LockKey("webhook-dispatcher"))
	rows, err := pool.Query(context.Background(), `SELECT l.classid::bigint, l.objid::bigint, a.application_name
		FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var hi, lo int64
		var app string
		if err := rows.Scan(&hi, &lo, &app); err != nil {
			t.Fatal(err)
		}
		if uint64(hi)<<32|uint64(lo) == key {
			return app
		}
	}
	return ""
}

// Two instances: the dispatcher's leader is killed; the other takes the
// lock and goes on from the checkpoint, and no event is skipped.
func TestTheDispatcherFailsOverToAnotherInstance(t *testing.T) {
	if testing.Short() {
		t.Skip("runs two service processes")
	}
	dbURL := pgtest.NewDatabase(t)
	withApp := func(name string) string {
		sep := "?"
		if strings.Contains(dbURL, "?") {
			sep = "&"
		}
		return dbURL + sep + "application_name=" + name
	}
	procs := map[string]*servedProcess{"inst-a": startServe(t, withApp("inst-a"), freeAddr(t))}
	procs["inst-b"] = startServe(t, withApp("inst-b"), freeAddr(t))
	pool, err := pgxpool.New(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	rc := newHookReceiver(t, nil)
	var current atomic.Value
	current.Store(procs["inst-a"].url)
	w := &writer{url: func() string { return current.Load().(string) }, tok: token(t, "failover"), http: &http.Client{Timeout: 10 * time.Second}}
	w.write(t, http.MethodPost, "/v1/webhook_endpoints", "failover-endpoint", `{"url":"`+rc.URL+`/in"}`)
	w.writeCustomers(t, "before", 100)
	var leader string
	eventually(t, 10*time.Second, "a dispatcher leader", func() bool { leader = leaderOf(t, pool); return leader != "" })
	procs[leader].kill()
	for name, p := range procs {
		if name != leader {
			current.Store(p.url)
			eventually(t, 30*time.Second, "the other instance to lead", func() bool { return leaderOf(t, pool) == name })
		}
	}
	w.writeCustomers(t, "after", 100)
	checkDelivered(t, rc, feed(t, current.Load().(string), w.tok))
}
