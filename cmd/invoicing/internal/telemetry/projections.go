package telemetry

import (
	"context"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
)

// ProjectionMetrics observes the batches this process's projectors and
// rebuilds commit (it implements projections.Observer).
type ProjectionMetrics struct {
	applied        *prometheus.CounterVec
	batches        *prometheus.HistogramVec
	checkpointTime *prometheus.GaugeVec
	rebuildApplied *prometheus.CounterVec
}

// NewProjectionMetrics registers the per-batch projection metrics on reg;
// the counters of the named projections start at zero.
func NewProjectionMetrics(reg prometheus.Registerer, names []string) *ProjectionMetrics {
	m := &ProjectionMetrics{
		applied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "projection", Name: "events_applied_total",
			Help: "Events this process's projector applied to the live read models (quarantined ones included), by projection.",
		}, []string{"projection"}),
		batches: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "projection", Name: "batch_events",
			Help:    "Events per batch the live projector committed, by projection: 1 while keeping up, the batch size while catching up.",
			Buckets: []float64{1, 2, 5, 10, 25, 50, 100, 250, 500, 1000},
		}, []string{"projection"}),
		checkpointTime: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace, Subsystem: "projection", Name: "checkpoint_event_timestamp_seconds",
			Help: "When the event at the live checkpoint was recorded (Unix time), after this process's last committed batch, by projection.",
		}, []string{"projection"}),
		rebuildApplied: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "projection", Name: "rebuild_events_applied_total",
			Help: "Events this process's rebuilds applied to shadow read models, by projection: a rebuild's progress.",
		}, []string{"projection"}),
	}
	reg.MustRegister(m.applied, m.batches, m.checkpointTime, m.rebuildApplied)
	for _, n := range names {
		m.applied.WithLabelValues(n)
		m.rebuildApplied.WithLabelValues(n)
	}
	return m
}

// Committed records one committed batch.
func (m *ProjectionMetrics) Committed(b projections.CommittedBatch) {
	if b.Rebuild {
		m.rebuildApplied.WithLabelValues(b.Projection).Add(float64(b.Events))
		return
	}
	m.applied.WithLabelValues(b.Projection).Add(float64(b.Events))
	m.batches.WithLabelValues(b.Projection).Observe(float64(b.Events))
	m.checkpointTime.WithLabelValues(b.Projection).Set(float64(b.LastRecordedAt.UnixMicro()) / 1e6)
}

// CheckpointSource reads the projections' checkpoints; *projections.Group
// implements it.
type CheckpointSource interface {
	Checkpoints(ctx context.Context) ([]projections.Checkpoint, error)
}

// LagCap bounds the events counted for lag on a scrape: a projection that
// far behind reports LagCap, and its lag in seconds tells how far.
const LagCap = 1000

// lagTimeout bounds the database work of one scrape.
const lagTimeout = 3 * time.Second

// ProjectionLag reports, on every scrape, each projection's lag and
// quarantined events from the database, so any instance reports them,
// whichever runs the projectors. Cost per scrape: one query for the
// checkpoints and quarantine counts, and one read of at most LagCap events
// after the lowest checkpoint; a projection whose checkpoint that page
// cannot answer for (the page is full) gets its own read. Caught up, that
// read returns nothing.
type ProjectionLag struct {
	source CheckpointSource
	store  events.Store
	now    func() time.Time

	lagEvents, lagSeconds, quarantined *prometheus.Desc
}

// NewProjectionLag returns the lag collector; register it on the registry.
func NewProjectionLag(source CheckpointSource, store events.Store) *ProjectionLag {
	d := func(name, help string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(namespace, "projection", name), help, []string{"projection"}, nil)
	}
	return &ProjectionLag{
		source: source, store: store, now: time.Now,
		lagEvents:  d("lag_events", "Events after the projection's checkpoint, counted up to 1000 (a projection further behind reports 1000)."),
		lagSeconds: d("lag_seconds", "How long the oldest event after the projection's checkpoint has waited; 0 when caught up."),
		quarantined: d("quarantined_events", "Events the projection set aside because it could not apply them "+
			"(see invoicing projections status); they wait for invoicing projections retry."),
	}
}

func (c *ProjectionLag) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.lagEvents
	ch <- c.lagSeconds
	ch <- c.quarantined
}

func (c *ProjectionLag) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
	defer cancel()
	cps, err := c.source.Checkpoints(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.lagEvents, err)
		return
	}
	for _, cp := range cps {
		ch <- prometheus.MustNewConstMetric(c.quarantined, prometheus.GaugeValue, float64(cp.Quarantined), cp.Name)
	}
	positions := make([]events.Position, len(cps))
	for i, cp := range cps {
		positions[i] = cp.Position
	}
	lags, err := lagAfter(ctx, c.store, positions, LagCap, c.now())
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.lagEvents, err)
		return
	}
	for i, cp := range cps {
		ch <- prometheus.MustNewConstMetric(c.lagEvents, prometheus.GaugeValue, float64(lags[i].events), cp.Name)
		ch <- prometheus.MustNewConstMetric(c.lagSeconds, prometheus.GaugeValue, lags[i].seconds, cp.Name)
	}
}

type lag struct {
	events  int
	seconds float64
}

// lagAfter counts the events after each position, up to limit, and how old
// the first of them is. Positions are visited in order; a page read after
// one answers for every later position as long as it is not full (then it
// reaches the end of the store).
func lagAfter(ctx context.Context, store events.Store, positions []events.Position, limit int, now time.Time) ([]lag, error) {
	order := make([]int, len(positions))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return positions[a].Compare(positions[b]) })
	out := make([]lag, len(positions))
	var (
		page []events.RecordedEvent
		from events.Position // where page was read from
		read bool
	)
	for _, i := range order {
		p := positions[i]
		if !read || (len(page) >= limit && p != from) {
			var err error
			if page, err = store.ReadAll(ctx, p, limit); err != nil {
				return nil, err
			}
			from, read = p, true
		}
		k, _ := slices.BinarySearchFunc(page, p, func(ev events.RecordedEvent, p events.Position) int {
			if ev.Position.Compare(p) <= 0 {
				return -1
			}
			return 1
		})
		rest := page[k:]
		out[i].events = len(rest)
		if len(rest) > 0 {
			out[i].seconds = max(0, now.Sub(rest[0].RecordedAt).Seconds())
		}
	}
	return out, nil
}
