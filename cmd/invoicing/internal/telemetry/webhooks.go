package telemetry

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/invoicing/invoicing/webhook"
)

// WebhookMetrics counts this process's delivery attempts by result
// (webhook.Result*): pass its Observe as webhook.SenderOptions.Observe.
type WebhookMetrics struct {
	deliveries *prometheus.CounterVec
}

// NewWebhookMetrics registers the attempt counter on reg, each result
// starting at zero.
func NewWebhookMetrics(reg prometheus.Registerer) *WebhookMetrics {
	m := &WebhookMetrics{deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Subsystem: "webhook", Name: "deliveries_total",
		Help: "Webhook delivery attempts this process made, by result: succeeded (2xx in time), " +
			"retried (failed, another attempt follows), failed (failed for good: the retry period ended or the endpoint is gone).",
	}, []string{"result"})}
	reg.MustRegister(m.deliveries)
	for _, r := range []string{webhook.ResultSucceeded, webhook.ResultRetried, webhook.ResultFailed} {
		m.deliveries.WithLabelValues(r)
	}
	return m
}

// Observe counts one attempt.
func (m *WebhookMetrics) Observe(result string) { m.deliveries.WithLabelValues(result).Inc() }

// WebhookStatsSource reads the delivery queue; *webhook.Deliveries is one.
type WebhookStatsSource interface {
	Stats(ctx context.Context) (webhook.Stats, error)
}

// WebhookQueue reports the shared delivery queue on every scrape, so any
// instance reports it: deliveries waiting for a retry, and how long the
// oldest pending one has waited (what an alert on a stuck queue wants).
type WebhookQueue struct {
	source                  WebhookStatsSource
	retriesPending, oldestS *prometheus.Desc
}

// NewWebhookQueue returns the queue collector; register it on the registry.
func NewWebhookQueue(source WebhookStatsSource) *WebhookQueue {
	return &WebhookQueue{
		source: source,
		retriesPending: prometheus.NewDesc(prometheus.BuildFQName(namespace, "webhook", "retries_pending"),
			"Pending webhook deliveries that have failed at least once and wait for their next attempt.", nil, nil),
		oldestS: prometheus.NewDesc(prometheus.BuildFQName(namespace, "webhook", "oldest_pending_seconds"),
			"Age of the oldest pending webhook delivery; 0 when none is pending.", nil, nil),
	}
}

func (c *WebhookQueue) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.retriesPending
	ch <- c.oldestS
}

func (c *WebhookQueue) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), lagTimeout)
	defer cancel()
	s, err := c.source.Stats(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.retriesPending, err)
		return
	}
	ch <- prometheus.MustNewConstMetric(c.retriesPending, prometheus.GaugeValue, float64(s.RetriesPending))
	ch <- prometheus.MustNewConstMetric(c.oldestS, prometheus.GaugeValue, s.OldestPending.Seconds())
}
