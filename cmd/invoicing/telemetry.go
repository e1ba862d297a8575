package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing/invoicing/cmd/invoicing/internal/telemetry"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/projections"
	"github.com/invoicing/invoicing/transport"
)

// observability is serve's telemetry: Prometheus metrics on their own
// listener when METRICS_ADDR is set, OpenTelemetry traces when an OTLP
// endpoint is. With neither, it instruments nothing: no decorator, no
// middleware, no tracer on the pool.
type observability struct {
	logger *slog.Logger

	// Metrics; all nil when METRICS_ADDR is unset.
	registry    *prometheus.Registry
	metricsLn   net.Listener
	http        *telemetry.HTTP
	store       *telemetry.StoreMetrics
	projections *telemetry.ProjectionMetrics

	// Tracing; tracer is nil when tracing is off.
	tracer   trace.TracerProvider
	shutdown func(context.Context) error
}

// tracingShutdownTimeout bounds flushing the last spans on exit.
const tracingShutdownTimeout = 5 * time.Second

// openObservability builds the tracer provider and the metrics registry and
// binds the metrics listener, so that a taken METRICS_ADDR fails start-up.
func openObservability(ctx context.Context, cfg config, logger *slog.Logger) (*observability, error) {
	o := &observability{logger: logger}
	switch {
	case cfg.Tracing.provider != nil:
		o.tracer = cfg.Tracing.provider
	case cfg.Tracing.Enabled:
		tp, err := telemetry.NewTracerProvider(ctx)
		if err != nil {
			return nil, fmt.Errorf("tracing: %w", err)
		}
		o.tracer, o.shutdown = tp, tp.Shutdown
	}
	if cfg.MetricsAddr != "" {
		ln, err := net.Listen("tcp", cfg.MetricsAddr)
		if err != nil {
			o.close()
			return nil, fmt.Errorf("METRICS_ADDR: listen on %s: %w", cfg.MetricsAddr, err)
		}
		o.metricsLn = ln
		o.registry = telemetry.NewRegistry()
		o.http = telemetry.NewHTTP(o.registry, transport.CommandKinds())
		o.store = telemetry.NewStoreMetrics(o.registry)
		var names []string
		for _, p := range projections.All() {
			names = append(names, p.Name())
		}
		o.projections = telemetry.NewProjectionMetrics(o.registry, names)
	}
	return o, nil
}

// poolOptions puts the tracer on the pool's connections when tracing is on.
func (o *observability) poolOptions() []func(*pgxpool.Config) {
	if o.tracer == nil {
		return nil
	}
	tracer := telemetry.NewPgxTracer(o.tracer)
	return []func(*pgxpool.Config){func(c *pgxpool.Config) { c.ConnConfig.Tracer = tracer }}
}

// instrumentStore decorates the event store when metrics or tracing are on.
func (o *observability) instrumentStore(s events.Store) events.Store {
	if o.store == nil && o.tracer == nil {
		return s
	}
	var tracer trace.Tracer
	if o.tracer != nil {
		tracer = telemetry.Tracer(o.tracer)
	}
	return telemetry.InstrumentStore(s, o.store, tracer)
}

// projectionObserver is the projections' batch observer, nil without
// metrics (an untyped nil: the runners test for it).
func (o *observability) projectionObserver() projections.Observer {
	if o.projections == nil {
		return nil
	}
	return o.projections
}

// httpMetrics is transport's Metrics, nil without metrics.
func (o *observability) httpMetrics() transport.Metrics {
	if o.http == nil {
		return nil
	}
	return o.http
}

// watch registers the collectors that read the pool and the projections'
// checkpoints on each scrape.
func (o *observability) watch(pool *pgxpool.Pool, group *projections.Group, store events.Store) {
	if o.registry == nil {
		return
	}
	o.registry.MustRegister(telemetry.NewPoolCollector(pool), telemetry.NewProjectionLag(group, store))
}

// traceHandler wraps the API's handler in server spans when tracing is on.
func (o *observability) traceHandler(h http.Handler) http.Handler {
	if o.tracer == nil {
		return h
	}
	return telemetry.TraceHandler(h, o.tracer)
}

// serveMetrics serves /metrics on the metrics listener until the returned
// stop is called; without METRICS_ADDR it does nothing.
func (o *observability) serveMetrics() (stop func()) {
	if o.metricsLn == nil {
		return func() {}
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", telemetry.Handler(o.registry, o.logger))
	return serveSide(&http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}, o.metricsLn, o.logger, "metrics")
}

// sideShutdownTimeout bounds the shutdown of a side listener's server.
const sideShutdownTimeout = 5 * time.Second

// serveSide serves srv on ln, a side listener apart from the API (metrics,
// profiles), until the returned stop is called. what names it in the log.
func serveSide(srv *http.Server, ln net.Listener, logger *slog.Logger, what string) (stop func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(what+" server stopped", "error", err)
		}
	}()
	logger.Info("serving "+what, "addr", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), sideShutdownTimeout)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			logger.Warn("stopping the "+what+" server", "error", err)
		}
		<-done
	}
}

// metricsAddr is the metrics listener's address, "" without one.
func (o *observability) metricsAddr() string {
	if o.metricsLn == nil {
		return ""
	}
	return o.metricsLn.Addr().String()
}

// close flushes the last spans and releases the metrics listener if it was
// never served.
func (o *observability) close() {
	if o.metricsLn != nil {
		_ = o.metricsLn.Close() // already closed when served: harmless
	}
	if o.shutdown != nil {
		ctx, cancel := context.WithTimeout(context.Background(), tracingShutdownTimeout)
		defer cancel()
		if err := o.shutdown(ctx); err != nil {
			o.logger.Warn("flushing traces", "error", err)
		}
	}
}
