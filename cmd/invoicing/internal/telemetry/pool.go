package telemetry

import (
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// poolCollector reads pgxpool.Stat on every scrape: a snapshot under the
// pool's lock, no database round trip. Connections the projectors hijack
// for their advisory locks have left the pool and are not counted.
type poolCollector struct {
	pool *pgxpool.Pool

	maxConns, conns                                *prometheus.Desc
	acquires, acquireWait, emptyAcquires, canceled *prometheus.Desc
	newConns, lifetimeDestroys, idleDestroys       *prometheus.Desc
}

// NewPoolCollector returns a collector of pool's statistics.
func NewPoolCollector(pool *pgxpool.Pool) prometheus.Collector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "db_pool", name), help, labels, nil)
	}
	return &poolCollector{
		pool:             pool,
		maxConns:         d("max_connections", "The pool's maximum size."),
		conns:            d("connections", "Connections in the pool by state: acquired (in use), idle, constructing.", "state"),
		acquires:         d("acquires_total", "Successful acquisitions of a connection from the pool."),
		acquireWait:      d("acquire_wait_seconds_total", "Total time spent acquiring connections, successful acquisitions only."),
		emptyAcquires:    d("empty_acquires_total", "Successful acquisitions that had to wait for a connection because none was idle."),
		canceled:         d("canceled_acquires_total", "Acquisitions given up because their context ended."),
		newConns:         d("new_connections_total", "Connections opened."),
		lifetimeDestroys: d("max_lifetime_destroys_total", "Connections closed for exceeding the maximum lifetime."),
		idleDestroys:     d("max_idle_destroys_total", "Connections closed for exceeding the maximum idle time."),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.maxConns, c.conns, c.acquires, c.acquireWait, c.emptyAcquires,
		c.canceled, c.newConns, c.lifetimeDestroys, c.idleDestroys} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.pool.Stat()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v)
	}
	gauge(c.maxConns, float64(s.MaxConns()))
	gauge(c.conns, float64(s.AcquiredConns()), "acquired")
	gauge(c.conns, float64(s.IdleConns()), "idle")
	gauge(c.conns, float64(s.ConstructingConns()), "constructing")
	counter(c.acquires, float64(s.AcquireCount()))
	counter(c.acquireWait, s.AcquireDuration().Seconds())
	counter(c.emptyAcquires, float64(s.EmptyAcquireCount()))
	counter(c.canceled, float64(s.CanceledAcquireCount()))
	counter(c.newConns, float64(s.NewConnsCount()))
	counter(c.lifetimeDestroys, float64(s.MaxLifetimeDestroyCount()))
	counter(c.idleDestroys, float64(s.MaxIdleDestroyCount()))
}
