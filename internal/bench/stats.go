// Package bench is the project's benchmark harness: `make bench` (the
// service against pgbench on the same PostgreSQL) and `make bench-scale`
// (reads at a million invoices). docs/benchmarks.md describes the method;
// cmd/bench is the command.
//
// Nothing here runs in `go test ./...` beyond the pure parts (percentiles,
// the table, the generated events, log and pgbench output parsing).
package bench

import (
	"slices"
	"time"
)

// percentile returns the nearest-rank q-quantile (0 < q ≤ 1) of sorted: the
// smallest value that at least q of the samples do not exceed. It returns 0
// for no samples.
func percentile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	// rank = ceil(q·n), computed in integers where q is a whole per mille so
	// that 0.99 of 100 is exactly 99, not 100 by a rounding error.
	n := len(sorted)
	perMille := int(q*1000 + 0.5)
	rank := (perMille*n + 999) / 1000
	rank = max(1, min(n, rank))
	return sorted[rank-1]
}

// summary is the latency distribution of one measurement.
type summary struct {
	N        int
	P50, P99 time.Duration
	Max      time.Duration
	Mean     time.Duration
}

// summarize sorts lat in place and summarises it.
func summarize(lat []time.Duration) summary {
	if len(lat) == 0 {
		return summary{}
	}
	slices.Sort(lat)
	var sum time.Duration
	for _, d := range lat {
		sum += d
	}
	return summary{
		N:    len(lat),
		P50:  percentile(lat, 0.50),
		P99:  percentile(lat, 0.99),
		Max:  lat[len(lat)-1],
		Mean: sum / time.Duration(len(lat)),
	}
}

// ms renders a duration in milliseconds with two decimals.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
