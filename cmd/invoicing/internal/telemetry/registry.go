// Package telemetry is the service's observability: Prometheus metrics on a
// registry the caller constructs and passes around (nothing is registered
// globally), and OpenTelemetry tracing with an explicit tracer provider.
//
// Every metric name starts with invoicing_, uses base units (seconds,
// events) and carries only bounded labels: route templates, methods, status
// codes, kinds, outcomes and projection names, never an id.
//
// It is wiring, not a library: it implements projections.Observer and wraps
// the events.Store, so it sits under cmd/invoicing, where Go's internal rule
// lets only the service's command import it and no package below can
// import it back into a cycle.
package telemetry

import (
	"fmt"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

const namespace = "invoicing"

// NewRegistry returns a registry holding the Go runtime and process
// collectors; the service's own metrics are registered on it by the
// constructors of this package.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return reg
}

// maxScrapesInFlight bounds concurrent scrapes: each one reads the
// projections' checkpoints and a page of events (see ProjectionLag).
const maxScrapesInFlight = 2

// Handler serves reg's metrics in the Prometheus text format. A collector
// that fails is logged and left out; the other metrics are still served.
func Handler(reg *prometheus.Registry, logger *slog.Logger) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{
		ErrorLog:            errorLog{logger},
		ErrorHandling:       promhttp.ContinueOnError,
		Registry:            reg,
		MaxRequestsInFlight: maxScrapesInFlight,
	})
}

// errorLog is promhttp.Logger over slog.
type errorLog struct{ logger *slog.Logger }

func (l errorLog) Println(v ...any) {
	l.logger.Warn("metrics: collecting failed", "error", fmt.Sprint(v...))
}
