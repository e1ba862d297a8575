package telemetry

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// HTTP counts and times requests and counts successful commands; it
// implements transport.Metrics.
type HTTP struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	commands *prometheus.CounterVec
}

// Command results, the values of the result label.
const (
	resultApplied  = "applied"
	resultReplayed = "replayed"
)

// NewHTTP registers the HTTP and command metrics on reg. kinds are the
// command kinds transport reports; their series start at zero.
func NewHTTP(reg prometheus.Registerer, kinds []string) *HTTP {
	h := &HTTP{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "http", Name: "requests_total",
			Help: "HTTP requests answered, by route template (\"unmatched\" when no route matched), method and status code.",
		}, []string{"route", "method", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "http", Name: "request_duration_seconds",
			Help:    "Time from a request's arrival to the end of its handler, by route template, method and status code. A create's includes its read-your-writes wait.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"route", "method", "status"}),
		commands: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Name: "commands_total",
			Help: "Successful commands by kind (company, customer, invoice, issue, void) and result: applied (appended new events) or replayed (answered an earlier request with the same idempotency key).",
		}, []string{"kind", "result"}),
	}
	reg.MustRegister(h.requests, h.duration, h.commands)
	for _, k := range kinds {
		h.commands.WithLabelValues(k, resultApplied)
		h.commands.WithLabelValues(k, resultReplayed)
	}
	return h
}

// Request observes one answered request.
func (h *HTTP) Request(route, method string, status int, elapsed time.Duration) {
	code := strconv.Itoa(status)
	h.requests.WithLabelValues(route, method, code).Inc()
	h.duration.WithLabelValues(route, method, code).Observe(elapsed.Seconds())
}

// Command observes one successful command.
func (h *HTTP) Command(kind string, replayed bool) {
	result := resultApplied
	if replayed {
		result = resultReplayed
	}
	h.commands.WithLabelValues(kind, result).Inc()
}
