package bench

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// op is one request of a closed-loop client: worker is the client's number,
// seq the number of its request. It returns an error for anything but the
// expected answer; an error's text (a status code, say) is counted, not
// printed per request.
type op func(ctx context.Context, worker, seq int) error

// loadResult is what a closed loop measured.
type loadResult struct {
	OK      int             // requests that succeeded
	Failed  int             // requests that returned an error
	Elapsed time.Duration   // wall time from the first start to the last end
	Latency []time.Duration // of the successful requests, unsorted
	Errors  map[string]int  // error text → count
}

// rate is successful requests per second.
func (r loadResult) rate() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.OK) / r.Elapsed.Seconds()
}

// errorSummary lists the most frequent errors, for the report.
func (r loadResult) errorSummary() string {
	if len(r.Errors) == 0 {
		return ""
	}
	keys := slices.Collect(maps.Keys(r.Errors))
	slices.SortFunc(keys, func(a, b string) int { return r.Errors[b] - r.Errors[a] })
	var parts []string
	for i, k := range keys {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("(%d more kinds)", len(keys)-3))
			break
		}
		parts = append(parts, fmt.Sprintf("%d× %s", r.Errors[k], k))
	}
	return strings.Join(parts, "; ")
}

// runFor runs clients closed-loop clients, each sending its next request as
// soon as the last one answered, for d. Requests in flight at the end are
// waited for and counted; Elapsed covers them.
func runFor(ctx context.Context, clients int, d time.Duration, op op) loadResult {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return run(ctx, clients, func(int) bool { return ctx.Err() == nil }, op)
}

// runForWhile is runFor that also stops once while returns false (nil:
// never); Elapsed then ends with the last request.
func runForWhile(ctx context.Context, clients int, d time.Duration, while func() bool, op op) loadResult {
	if while == nil {
		return runFor(ctx, clients, d, op)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return run(ctx, clients, func(int) bool { return ctx.Err() == nil && while() }, op)
}

// runCount runs clients closed-loop clients until total requests have been
// sent (or ctx ends).
func runCount(ctx context.Context, clients, total int, op op) loadResult {
	var sent atomic.Int64
	return run(ctx, clients, func(int) bool { return ctx.Err() == nil && sent.Add(1) <= int64(total) }, op)
}

func run(ctx context.Context, clients int, more func(worker int) bool, op op) loadResult {
	type partial struct {
		lat    []time.Duration
		failed int
		errs   map[string]int
	}
	parts := make([]partial, clients)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := partial{lat: make([]time.Duration, 0, 4096), errs: map[string]int{}}
			// Requests get their own context: the phase's deadline ends the
			// loop, not the request in flight, which is measured to its end.
			reqCtx := context.WithoutCancel(ctx)
			for seq := 0; more(w); seq++ {
				t0 := time.Now()
				err := op(reqCtx, w, seq)
				if err != nil {
					p.failed++
					p.errs[err.Error()]++
					continue
				}
				p.lat = append(p.lat, time.Since(t0))
			}
			parts[w] = p
		}()
	}
	wg.Wait()
	res := loadResult{Elapsed: time.Since(start), Errors: map[string]int{}}
	for _, p := range parts {
		res.Latency = append(res.Latency, p.lat...)
		res.Failed += p.failed
		for k, v := range p.errs {
			res.Errors[k] += v
		}
	}
	res.OK = len(res.Latency)
	return res
}
