package bench

import (
	"fmt"
	"math"
	"time"
)

// ceiling is the most a phase could reach, as a ratio to a baseline's
// rate, if the service itself cost no CPU: the machine's CPUs spent only
// on what PostgreSQL and the load generator used per request in the same
// run. A ratio target above it is out of reach, on this machine, of any
// service that asks PostgreSQL for the same work.
type ceiling struct {
	ratio            float64
	postgres, client time.Duration // CPU per request
	cpus             int
}

// ceilingOf is r's ceiling against baseline on cpus CPUs; false when r
// has no rate or no measured CPU to divide by.
func ceilingOf(r, baseline phaseRow, cpus int) (ceiling, bool) {
	if r.rate <= 0 || baseline.rate <= 0 || cpus < 1 {
		return ceiling{}, false
	}
	perRequest := func(cpu time.Duration) time.Duration {
		return time.Duration(math.Round(r.use.cores(cpu) / r.rate * float64(time.Second)))
	}
	c := ceiling{postgres: perRequest(r.use.Postgres), client: perRequest(r.use.Client), cpus: cpus}
	spent := c.postgres + c.client
	if spent <= 0 {
		return ceiling{}, false
	}
	c.ratio = float64(cpus) / spent.Seconds() / baseline.rate
	return c, true
}

// describe says the ceiling and what it is made of, for a request named what.
func (c ceiling) describe(what string) string {
	return fmt.Sprintf("at most %.3f with a service of no CPU: PostgreSQL %d µs + load generator %d µs of CPU a %s, on %d CPUs",
		c.ratio, c.postgres.Microseconds(), c.client.Microseconds(), what, c.cpus)
}
