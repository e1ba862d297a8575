package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/invoicing/invoicing/internal/pgtest"
)

// The outage test's bounds. Everything it does ends by itself: the load by
// time and count, each request by its own timeout, the settling by a
// deadline.
const (
	outageWorkers    = 8
	outageMaxCreates = 5000        // hard cap on creates sent by the load
	outageBefore     = time.Second // load against a healthy database
	// outageDown is how long the database stays stopped before Start. A
	// projector backing off exponentially from 0.1 s since the stop, with
	// crash recovery, is then between its retries at 1.5 s and 3.1 s: with
	// no cap on its backoff well under a second, it misses the 1 s promise,
	// and a create it had not projected before the stop, wrongly answered
	// 201, reads as 404 once the database is back.
	outageDown          = 1500 * time.Millisecond
	outageGrace         = time.Second      // allowed to recover, counted from the first accepted connection
	outageAfter         = 2 * time.Second  // load that must succeed at once
	outageWaitTimeout   = 3 * time.Second  // the service's read-your-writes wait
	outageRequestBudget = 15 * time.Second // one HTTP request
	outageRetryPause    = 50 * time.Millisecond
	outageGetBudget     = 20 * time.Second // GETs after a 201 until one is not 5xx
	outageReadyPoll     = 50 * time.Millisecond
	outageLoadBudget    = time.Minute // no create is sent later than this after the load began
	outageSettleBudget  = time.Minute // retrying every create that did not get a 201
	outageReadyBudget   = time.Minute // waiting for /readyz after the restart
)

// outagePhase is the state of the database when a request was sent.
type outagePhase int32

const (
	phaseBefore    outagePhase = iota // running; requests validated against the document
	phaseDown                         // being stopped, stopped, or restarting
	phaseGrace                        // accepting again for less than outageGrace
	phaseRecovered                    // accepting for outageGrace or more; validated again
)

func (p outagePhase) String() string {
	return [...]string{"before the stop", "stop to restart", "first second after restart", "recovered"}[p]
}

// outageCreate is one create sent by the load, and what came of it.
type outageCreate struct {
	kind       string // "company" or "invoice"
	key, body  string
	phase      outagePhase
	start, end time.Time
	status     int    // 0: no answer (err)
	err        error  // transport error
	resBody    []byte // the answer's body: the created resource after a 201
	id         string
	// After a 201, GETs until one answers other than 5xx: getFirst is the
	// first GET's status, getStatus and getBody the last's, getAt when.
	getFirst, getStatus int
	getBody             []byte
	getAt               time.Time
}

// outageRun is the state shared by the load's workers.
type outageRun struct {
	s          *service
	plain      *http.Client // unvalidated: for requests that may meet the outage
	tok        string
	companyID  string
	customerID string

	phase atomic.Int32
	// validated is read-held by every request sent with s.client; the
	// driver write-locks it to leave phaseBefore, so that no validated
	// request is in flight when the database stops.
	validated sync.RWMutex
	sent      atomic.Int64
	// stop ends the load: no new creates; those in flight finish.
	stop atomic.Bool
	// abort also ends the readiness poller, when the test ends early.
	abort atomic.Bool

	mu      sync.Mutex
	creates []outageCreate
}

// TestImmediatePostgresStopNeverTurnsA201IntoA404 runs creates from eight
// clients while PostgreSQL is stopped immediately (no checkpoint: crash
// recovery on restart) and started again. The promise under test: a 201
// means readable, so a GET right after a 201 never answers 404; a create
// that did not get a 201 succeeds when retried with its idempotency key,
// and makes one resource, not two; and one second after the database
// accepts connections again, every create succeeds at once.
func TestImmediatePostgresStopNeverTurnsA201IntoA404(t *testing.T) {
	pg := pgtest.NewServer(t)
	dbURL := pg.NewDatabase(t)
	s := newService(t, func(c *config) {
		c.DatabaseURL = dbURL
		c.WaitTimeout = outageWaitTimeout
	})
	// s.client dials over http.DefaultTransport, which may park a dialed
	// but never used connection; the server's shutdown waits up to 5 s for
	// such a one (net/http treats it as idle only then), as long as its
	// grace. Close them first: cleanups run last-registered first.
	t.Cleanup(func() {
		if tr, ok := http.DefaultTransport.(*http.Transport); ok {
			tr.CloseIdleConnections()
		}
	})
	tok := token(t, "acme")
	company := s.createCompany(t, tok, "outage-setup-company", minimalCompany)
	companyID := company["id"].(string)
	customerID := s.createCustomer(t, tok, companyID, "outage-setup-customer", minimalCustomer)["id"].(string)

	run := &outageRun{
		s: s, tok: tok, companyID: companyID, customerID: customerID,
		plain: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: outageWorkers}},
	}
	t.Cleanup(run.plain.CloseIdleConnections)
	var wg sync.WaitGroup
	defer wg.Wait() // should the driver fail: no request may outlive the test
	defer run.abort.Store(true)
	defer run.stop.Store(true)
	hardStop := time.Now().Add(outageLoadBudget)
	for w := range outageWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.work(w, hardStop)
		}()
	}

	time.Sleep(outageBefore)
	run.validated.Lock() // waits out the validated requests in flight
	run.phase.Store(int32(phaseDown))
	run.validated.Unlock()
	stopCalled := time.Now()
	pg.StopImmediate()
	stopped := time.Now()
	time.Sleep(outageDown)
	startCalled := time.Now()
	accepted := pg.Start()
	run.phase.Store(int32(phaseGrace))
	readyCh := make(chan time.Time, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		readyCh <- run.firstReady(accepted.Add(outageReadyBudget))
	}()
	time.Sleep(time.Until(accepted.Add(outageGrace)))
	run.phase.Store(int32(phaseRecovered))
	var readyAt time.Time
	select {
	case readyAt = <-readyCh:
	default:
		t.Errorf("GET /readyz did not answer 200 within %v of PostgreSQL accepting connections again: "+
			"the pool, the event store and every projector must resume by then", outageGrace)
	}
	time.Sleep(outageAfter)
	run.stop.Store(true)
	if readyAt.IsZero() {
		readyAt = <-readyCh
	}
	wg.Wait()

	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	t.Logf("timeline: the immediate stop took %v; the database was down %v before Start; "+
		"it accepted a connection %v after Start was called (crash recovery included)",
		ms(stopped.Sub(stopCalled)), ms(startCalled.Sub(stopped)), ms(accepted.Sub(startCalled)))
	if readyAt.IsZero() {
		t.Errorf("GET /readyz never answered 200 within %v of the restart", outageReadyBudget)
	} else {
		t.Logf("GET /readyz first answered 200 %v after PostgreSQL first accepted a connection", ms(readyAt.Sub(accepted)))
	}
	creates := run.creates
	sort.Slice(creates, func(i, j int) bool { return creates[i].start.Before(creates[j].start) })
	logOutcomes(t, creates, accepted)

	checkReadAfterCreate(t, creates, accepted)
	checkRecoveredAtOnce(t, creates)
	run.settle(t, creates)
	run.checkReplaysAndReads(t, creates)
	run.checkNoDuplicates(t, creates)
}

// work sends creates until told to stop, or the load's cap or deadline is
// reached: four invoices for every company, each with a key of its own, and
// after each 201 a GET of what it created.
func (r *outageRun) work(worker int, deadline time.Time) {
	for i := 0; !r.stop.Load() && time.Now().Before(deadline); i++ {
		if r.sent.Add(1) > outageMaxCreates {
			return
		}
		ph := outagePhase(r.phase.Load())
		validated := ph == phaseBefore || ph == phaseRecovered
		if validated {
			r.validated.RLock()
			if outagePhase(r.phase.Load()) != ph { // the driver moved on meanwhile
				r.validated.RUnlock()
				r.sent.Add(-1)
				continue
			}
		}
		c := r.create(worker, i, ph, validated)
		if validated {
			r.validated.RUnlock()
		}
		r.mu.Lock()
		r.creates = append(r.creates, c)
		r.mu.Unlock()
		if c.status != http.StatusCreated {
			time.Sleep(outageRetryPause) // a client pauses after a failure
		}
	}
}

func (r *outageRun) create(worker, i int, ph outagePhase, validated bool) outageCreate {
	ctx := context.Background()
	client := r.plain
	if validated {
		client = r.s.client
	}
	c := outageCreate{kind: "invoice", key: fmt.Sprintf("outage-w%d-%05d", worker, i), phase: ph}
	if i%5 == 4 {
		c.kind = "company"
		c.body = fmt.Sprintf(`{"legal_name":"Outage %s GmbH","external_reference":%q,"default_currency":"EUR",`+
			`"address":{"line_1":"Hauptstr. 1","city":"Berlin","postal_code":"10115","country_code":"DE"}}`, c.key, c.key)
	} else {
		c.body = fmt.Sprintf(`{"customer_id":%q,"issue_date":"2025-01-15","external_reference":%q,`+
			`"lines":[{"description":"Consulting","quantity":"1.5","unit_amount_minor":10000,"tax_rate_bps":1900}]}`, r.customerID, c.key)
	}
	c.start = time.Now()
	res, err := r.call(ctx, client, http.MethodPost, r.createPath(c.kind), c.key, c.body)
	c.end = time.Now()
	c.status, c.err, c.resBody = res.status, err, res.body
	if c.status != http.StatusCreated {
		return c
	}
	c.id = idOf(res.body)
	// The GET right after a 201 fails while the database is down, which
	// proves nothing either way; like a client, try again until it answers.
	// That answer must be 200: what a 201 confirmed was in the read
	// models, and an immediate stop loses no commit.
	deadline := time.Now().Add(outageGetBudget)
	for {
		get, err := r.call(ctx, client, http.MethodGet, r.getPath(c.kind, c.id), "", "")
		if err == nil {
			c.getStatus, c.getBody = get.status, get.body
		} else {
			c.getStatus, c.getBody = 0, nil
		}
		if c.getFirst == 0 {
			c.getFirst = c.getStatus
		}
		if (c.getStatus != 0 && c.getStatus < 500) || time.Now().After(deadline) {
			break
		}
		time.Sleep(outageRetryPause)
	}
	c.getAt = time.Now()
	return c
}

// firstReady polls GET /readyz until it answers 200, and returns when it
// did; the zero time if it did not before deadline.
func (r *outageRun) firstReady(deadline time.Time) time.Time {
	for !r.abort.Load() && time.Now().Before(deadline) {
		res, err := r.call(context.Background(), r.s.client, http.MethodGet, "/readyz", "", "")
		if err == nil && res.status == http.StatusOK {
			return time.Now()
		}
		time.Sleep(outageReadyPoll)
	}
	return time.Time{}
}

// logOutcomes logs, per phase, how many creates got which answer, and when
// creates resumed after the restart.
func logOutcomes(t *testing.T, creates []outageCreate, accepted time.Time) {
	t.Helper()
	type cell struct {
		phase outagePhase
		what  string
	}
	counts := map[cell]int{}
	for _, c := range creates {
		what := fmt.Sprint(c.status)
		if c.err != nil {
			what = "no answer"
		}
		if c.status == http.StatusCreated {
			what += " then GET "
			if c.getFirst != c.getStatus {
				what += fmt.Sprintf("%d…", c.getFirst)
			}
			what += fmt.Sprint(c.getStatus)
		}
		counts[cell{c.phase, what}]++
	}
	cells := make([]cell, 0, len(counts))
	for k := range counts {
		cells = append(cells, k)
	}
	sort.Slice(cells, func(i, j int) bool {
		if cells[i].phase != cells[j].phase {
			return cells[i].phase < cells[j].phase
		}
		return cells[i].what < cells[j].what
	})
	var b strings.Builder
	for _, k := range cells {
		fmt.Fprintf(&b, "\n  %-28s %-20s %5d", k.phase, k.what, counts[k])
	}
	t.Logf("%d creates by %d clients:%s", len(creates), outageWorkers, b.String())

	// Creates resumed at the start of the first success after the last
	// failure sent once the database accepted connections again.
	var firstOK, firstOKAnswered, lastFail, resumed time.Time
	for _, c := range creates {
		if c.start.Before(accepted) {
			continue
		}
		if ok := c.status == http.StatusCreated && c.getFirst == http.StatusOK; ok {
			if firstOK.IsZero() {
				firstOK = c.start
			}
			if firstOKAnswered.IsZero() || c.end.Before(firstOKAnswered) {
				firstOKAnswered = c.end
			}
			if resumed.IsZero() {
				resumed = c.start
			}
		} else {
			lastFail, resumed = c.start, time.Time{}
		}
	}
	since := func(ts time.Time) string {
		if ts.IsZero() {
			return "never"
		}
		d := ts.Sub(accepted).Round(time.Millisecond)
		if d < 0 {
			return d.String()
		}
		return "+" + d.String()
	}
	t.Logf("relative to the first accepted connection after the restart: first readable 201 sent at %s, answered at %s; "+
		"last failed create sent at %s; every create readable from %s on",
		since(firstOK), since(firstOKAnswered), since(lastFail), since(resumed))
	t.Logf("create latency before the stop: %s; once recovered: %s",
		latencies(creates, phaseBefore), latencies(creates, phaseRecovered))
}

// latencies summarises how long the creates sent in phase took.
func latencies(creates []outageCreate, phase outagePhase) string {
	var ds []time.Duration
	for _, c := range creates {
		if c.phase == phase {
			ds = append(ds, c.end.Sub(c.start))
		}
	}
	if len(ds) == 0 {
		return "none sent"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	ms := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("median %v, 90th percentile %v, max %v (%d creates)",
		ms(ds[len(ds)/2]), ms(ds[len(ds)*9/10]), ms(ds[len(ds)-1]), len(ds))
}

// checkReadAfterCreate: the GET right after a 201 finds what the 201
// answered. While the database is down the GET fails, and is retried until
// it answers; that answer must be 200, never 404.
func checkReadAfterCreate(t *testing.T, creates []outageCreate, accepted time.Time) {
	t.Helper()
	at := func(ts time.Time) string { return fmt.Sprintf("%+.3fs", ts.Sub(accepted).Seconds()) }
	notFound := 0
	var bad []string
	for _, c := range creates {
		if c.status != http.StatusCreated || (c.getStatus == http.StatusOK && sameJSON(c.getBody, c.resBody)) {
			continue
		}
		if c.getStatus == http.StatusNotFound {
			notFound++
		}
		bad = append(bad, fmt.Sprintf("%s %s: sent at %s (%s), 201 at %s; first GET %d, last GET at %s: %s",
			c.kind, c.key, at(c.start), c.phase, at(c.end), c.getFirst, at(c.getAt), answer(c.getStatus, nil, c.getBody)))
	}
	if len(bad) > 0 {
		t.Errorf("%d creates answered 201 but were not readable right after (%d GETs answered 404); a 201 must mean readable. "+
			"Times are relative to PostgreSQL accepting connections again:\n  %s",
			len(bad), notFound, strings.Join(firstN(bad, 10), "\n  "))
	}
}

// checkRecoveredAtOnce: creates sent outageGrace after the database accepted
// connections again answer 201 at once, and are readable.
func checkRecoveredAtOnce(t *testing.T, creates []outageCreate) {
	t.Helper()
	n := 0
	var bad []string
	for _, c := range creates {
		if c.phase != phaseRecovered {
			continue
		}
		n++
		if c.status != http.StatusCreated || c.getFirst != http.StatusOK {
			bad = append(bad, fmt.Sprintf("%s %s: %s after %v; GET %d",
				c.kind, c.key, answer(c.status, c.err, c.resBody), c.end.Sub(c.start).Round(time.Millisecond), c.getFirst))
		}
	}
	if n < outageWorkers {
		t.Errorf("only %d creates were sent once the database had recovered, too few to judge: the load reached its cap (%d) or requests were very slow", n, outageMaxCreates)
	}
	if len(bad) > 0 {
		t.Errorf("%d of %d creates sent %v or more after PostgreSQL accepted connections again did not answer a readable 201; "+
			"projectors and pools must resume within %v:\n  %s", len(bad), n, outageGrace, outageGrace, strings.Join(firstN(bad, 10), "\n  "))
	}
}

// settle retries every create that did not answer 201, with its key, until
// it does, and keeps the 201 body.
func (r *outageRun) settle(t *testing.T, creates []outageCreate) {
	t.Helper()
	deadline := time.Now().Add(outageSettleBudget)
	retried, attempts := 0, 0
	begun := time.Now()
	for i := range creates {
		c := &creates[i]
		if c.status == http.StatusCreated {
			continue
		}
		retried++
		for c.status != http.StatusCreated {
			if time.Now().After(deadline) {
				t.Fatalf("%s %s still not created with its key %v after the load: last answer %s",
					c.kind, c.key, outageSettleBudget, answer(c.status, c.err, c.resBody))
			}
			attempts++
			res, err := r.call(context.Background(), r.plain, http.MethodPost, r.createPath(c.kind), c.key, c.body)
			c.status, c.err, c.resBody = res.status, err, res.body
			if c.status != http.StatusCreated {
				time.Sleep(100 * time.Millisecond)
			}
		}
		c.id = idOf(c.resBody)
	}
	t.Logf("retried %d creates that had not answered 201, with their keys: %d attempts, %v",
		retried, attempts, time.Since(begun).Round(time.Millisecond))
}

// checkReplaysAndReads replays every create with its key through the
// validating client, which must answer 201 with the body of the first 201,
// and GETs each resource, which must match it.
func (r *outageRun) checkReplaysAndReads(t *testing.T, creates []outageCreate) {
	t.Helper()
	begun := time.Now()
	var mu sync.Mutex
	var badReplay, badRead []string
	next := make(chan outageCreate)
	var wg sync.WaitGroup
	for range outageWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				replay, read := r.replayAndRead(c)
				mu.Lock()
				if replay != "" {
					badReplay = append(badReplay, replay)
				}
				if read != "" {
					badRead = append(badRead, read)
				}
				mu.Unlock()
			}
		}()
	}
	for _, c := range creates {
		next <- c
	}
	close(next)
	wg.Wait()
	t.Logf("replayed and read back %d creates in %v", len(creates), time.Since(begun).Round(time.Millisecond))
	sort.Strings(badReplay)
	sort.Strings(badRead)
	if len(badReplay) > 0 {
		t.Errorf("%d of %d creates replayed with their key did not answer 201 with the first 201's body:\n  %s",
			len(badReplay), len(creates), strings.Join(firstN(badReplay, 10), "\n  "))
	}
	if len(badRead) > 0 {
		t.Errorf("%d of %d created resources are not readable as created, after the outage:\n  %s",
			len(badRead), len(creates), strings.Join(firstN(badRead, 10), "\n  "))
	}
}

// replayAndRead replays c with its key and GETs what it created; it
// describes what went wrong, if anything.
func (r *outageRun) replayAndRead(c outageCreate) (replay, read string) {
	again, err := r.call(context.Background(), r.s.client, http.MethodPost, r.createPath(c.kind), c.key, c.body)
	if err != nil || again.status != http.StatusCreated || !sameJSON(again.body, c.resBody) {
		replay = fmt.Sprintf("%s %s: %s, first 201 %s", c.kind, c.key, answer(again.status, err, again.body), c.resBody)
	}
	got, err := r.call(context.Background(), r.s.client, http.MethodGet, r.getPath(c.kind, c.id), "", "")
	if err != nil || got.status != http.StatusOK || !sameJSON(got.body, c.resBody) {
		read = fmt.Sprintf("%s %s (sent %s): GET %s, 201 %s", c.kind, c.key, c.phase, answer(got.status, err, got.body), c.resBody)
	}
	return replay, read
}

// checkNoDuplicates lists every company and invoice: each key made exactly
// one, and nothing else exists.
func (r *outageRun) checkNoDuplicates(t *testing.T, creates []outageCreate) {
	t.Helper()
	want := map[string]map[string]string{"company": {r.companyID: "outage-setup-company"}, "invoice": {}}
	for _, c := range creates {
		want[c.kind][c.id] = c.key
	}
	lists := map[string]string{"company": "/v1/companies", "invoice": "/v1/companies/" + r.companyID + "/invoices"}
	for kind, path := range lists {
		seen := map[string]int{}
		ids := r.s.walk(t, path, r.tok, 100, url.Values{})
		for _, id := range ids {
			seen[id]++
		}
		var bad []string
		for id, n := range seen {
			if key, ok := want[kind][id]; !ok {
				bad = append(bad, fmt.Sprintf("%s %s was created by no key's 201", kind, id))
			} else if n != 1 {
				bad = append(bad, fmt.Sprintf("%s %s of key %s listed %d times", kind, id, key, n))
			}
		}
		for id, key := range want[kind] {
			if seen[id] == 0 {
				bad = append(bad, fmt.Sprintf("%s %s of key %s not listed", kind, id, key))
			}
		}
		if len(bad) > 0 || len(ids) != len(want[kind]) {
			sort.Strings(bad)
			t.Errorf("listed %d %ss for %d keys:\n  %s", len(ids), kind, len(want[kind]), strings.Join(firstN(bad, 10), "\n  "))
		}
	}
}

func (r *outageRun) createPath(kind string) string {
	if kind == "company" {
		return "/v1/companies"
	}
	return "/v1/companies/" + r.companyID + "/invoices"
}

func (r *outageRun) getPath(kind, id string) string {
	return r.createPath(kind) + "/" + id
}

// call sends one request within outageRequestBudget; unlike service.do it
// may run on any goroutine and reports a failure instead of ending the test.
func (r *outageRun) call(ctx context.Context, client *http.Client, method, path, key, body string) (response, error) {
	ctx, cancel := context.WithTimeout(ctx, outageRequestBudget)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, r.s.url+path, rd)
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Authorization", "Bearer "+r.tok)
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return response{status: res.StatusCode, header: res.Header, body: b}, err
}

func idOf(body []byte) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(body, &v) // an empty id fails the GET, which reports it
	return v.ID
}

// sameJSON reports whether a and b are JSON documents with equal values.
func sameJSON(a, b []byte) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return false
	}
	return reflect.DeepEqual(va, vb)
}

// answer describes a response for a failure message.
func answer(status int, err error, body []byte) string {
	if err != nil {
		return "no answer: " + err.Error()
	}
	body = bytes.TrimSpace(body)
	const limit = 300
	if len(body) > limit {
		body = append(bytes.Clone(body[:limit]), "…"...)
	}
	return fmt.Sprintf("%d %s", status, body)
}

func firstN(s []string, n int) []string {
	if len(s) > n {
		return append(s[:n:n], fmt.Sprintf("… and %d more", len(s)-n))
	}
	return s
}
