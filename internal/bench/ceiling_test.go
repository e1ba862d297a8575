package bench

import (
	"strings"
	"testing"
	"time"
)

// phaseOf is a phase of rate requests a second over 10 s that used
// postgres and client cores.
func phaseOf(rate, postgres, client float64) phaseRow {
	wall := 10 * time.Second
	cpu := func(cores float64) time.Duration { return time.Duration(cores * float64(wall)) }
	return phaseRow{rate: rate, use: usage{Wall: wall, Postgres: cpu(postgres), Client: cpu(client), Service: cpu(0.8)}}
}

func TestTheCeilingIsTheRateOfTheCPUsOnPostgreSQLAndTheLoadGeneratorAlone(t *testing.T) {
	baseline := phaseOf(20_000, 1.4, 0.3)
	for _, tc := range []struct {
		name          string
		row           phaseRow
		cpus          int
		ok            bool
		ratio         float64
		postgres, gen time.Duration
	}{
		// 900 + 100 µs a request: 2 CPUs do 2,000 a second, 0.1 of 20,000.
		{"create", phaseOf(1_000, 0.9, 0.1), 2, true, 0.1, 900 * time.Microsecond, 100 * time.Microsecond},
		{"more CPUs, higher ceiling", phaseOf(1_000, 0.9, 0.1), 8, true, 0.4, 900 * time.Microsecond, 100 * time.Microsecond},
		{"no request", phaseOf(0, 0.9, 0.1), 2, false, 0, 0, 0},
		{"no CPU measured", phaseOf(1_000, 0, 0), 2, false, 0, 0, 0},
		{"no CPU", phaseOf(1_000, 0.9, 0.1), 0, false, 0, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, ok := ceilingOf(tc.row, baseline, tc.cpus)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			if d := c.ratio - tc.ratio; d > 1e-9 || d < -1e-9 {
				t.Errorf("ratio = %v, want %v", c.ratio, tc.ratio)
			}
			if c.postgres != tc.postgres || c.client != tc.gen {
				t.Errorf("per request: PostgreSQL %v, load generator %v; want %v, %v", c.postgres, c.client, tc.postgres, tc.gen)
			}
		})
	}
}

func TestTheTargetsSayEachRatiosCeiling(t *testing.T) {
	rows := []phaseRow{phaseOf(20_000, 1.4, 0.3), phaseOf(50_000, 1.4, 0.5),
		phaseOf(1_000, 0.9, 0.1), phaseOf(9_000, 0.63, 0.18), phaseOf(2_000, 0.9, 0.1)}
	got := serviceTargets(rows, lagSummary{}, 100<<20)
	create, get := strings.Index(got, "create ÷ pgbench INSERT"), strings.Index(got, "get ÷ pgbench select-only")
	createCeiling := strings.Index(got, "µs of CPU a create")
	getCeiling := strings.Index(got, "µs of CPU a get")
	if create < 0 || get < 0 || !(create < createCeiling && createCeiling < get && get < getCeiling) {
		t.Errorf("each ratio's ceiling should follow it:\n%s", got)
	}
	if !strings.Contains(got, "PostgreSQL 900 µs + load generator 100 µs of CPU a create") {
		t.Errorf("the create's ceiling should name its CPU per request:\n%s", got)
	}
}
