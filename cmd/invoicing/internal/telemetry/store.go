package telemetry

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing/invoicing/events"
)

// StoreMetrics are the event store's metrics: append latency by outcome,
// and how often the store was unavailable, by operation.
type StoreMetrics struct {
	appendDuration *prometheus.HistogramVec
	unavailable    *prometheus.CounterVec
}

// Append outcomes, the values of the outcome label.
const (
	outcomeOK          = "ok"
	outcomeConflict    = "conflict"
	outcomeUnavailable = "unavailable"
	outcomeError       = "error"
)

// Store operations, the values of the operation label.
const (
	opAppend     = "append"
	opReadStream = "read_stream"
	opReadLast   = "read_last"
	opReadAll    = "read_all"
	opSubscribe  = "subscribe"
	opPing       = "ping"
)

// NewStoreMetrics registers the event store's metrics on reg.
func NewStoreMetrics(reg prometheus.Registerer) *StoreMetrics {
	m := &StoreMetrics{
		appendDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace, Subsystem: "event_store", Name: "append_duration_seconds",
			Help: "Event store append latency by outcome: ok, conflict (the stream was not at the expected revision: " +
				"a lost race or an idempotent retry), unavailable (the store could not be reached), error.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"outcome"}),
		unavailable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace, Subsystem: "event_store", Name: "unavailable_total",
			Help: "Event store calls that failed because the store could not be reached, by operation.",
		}, []string{"operation"}),
	}
	reg.MustRegister(m.appendDuration, m.unavailable)
	for _, o := range []string{outcomeOK, outcomeConflict, outcomeUnavailable, outcomeError} {
		m.appendDuration.WithLabelValues(o)
	}
	for _, op := range []string{opAppend, opReadStream, opReadLast, opReadAll, opSubscribe, opPing} {
		m.unavailable.WithLabelValues(op)
	}
	return m
}

// InstrumentStore decorates s with metrics (when m is not nil) and with
// spans of the request-path calls, Append, ReadStream and ReadLast (when
// tracer is not nil and the call is part of a trace). Neither adapter
// changes; the decorator forwards every call.
func InstrumentStore(s events.Store, m *StoreMetrics, tracer trace.Tracer) events.Store {
	return &instrumentedStore{inner: s, metrics: m, tracer: tracer}
}

type instrumentedStore struct {
	inner   events.Store
	metrics *StoreMetrics
	tracer  trace.Tracer
}

// unavailable counts err against op when it says the store was away.
func (s *instrumentedStore) unavailable(op string, err error) {
	if s.metrics != nil && errors.Is(err, events.ErrUnavailable) {
		s.metrics.unavailable.WithLabelValues(op).Inc()
	}
}

// span starts a span for a request-path call that is part of a trace.
func (s *instrumentedStore) span(ctx context.Context, name, stream string) (context.Context, trace.Span) {
	if s.tracer == nil || !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx, nil
	}
	return s.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(attribute.String("invoicing.event_stream", stream)))
}

func endSpan(span trace.Span, err error) {
	if span == nil {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

func (s *instrumentedStore) Append(ctx context.Context, stream string, expected events.ExpectedRevision, evs ...events.EventData) (events.AppendResult, error) {
	ctx, span := s.span(ctx, "events.Append", stream)
	start := time.Now()
	res, err := s.inner.Append(ctx, stream, expected, evs...)
	if s.metrics != nil {
		s.metrics.appendDuration.WithLabelValues(appendOutcome(err)).Observe(time.Since(start).Seconds())
	}
	s.unavailable(opAppend, err)
	// A conflict is an answer, not a failure: the command reads the stream.
	spanErr := err
	if errors.Is(err, events.ErrWrongExpectedRevision) {
		if span != nil {
			span.SetAttributes(attribute.Bool("invoicing.conflict", true))
		}
		spanErr = nil
	}
	endSpan(span, spanErr)
	return res, err
}

func appendOutcome(err error) string {
	switch {
	case err == nil:
		return outcomeOK
	case errors.Is(err, events.ErrWrongExpectedRevision):
		return outcomeConflict
	case errors.Is(err, events.ErrUnavailable):
		return outcomeUnavailable
	}
	return outcomeError
}

func (s *instrumentedStore) ReadStream(ctx context.Context, stream string) ([]events.RecordedEvent, error) {
	ctx, span := s.span(ctx, "events.ReadStream", stream)
	evs, err := s.inner.ReadStream(ctx, stream)
	s.unavailable(opReadStream, err)
	endSpan(span, notFoundIsNoError(err))
	return evs, err
}

func (s *instrumentedStore) ReadStreamFrom(ctx context.Context, stream string, from uint64) ([]events.RecordedEvent, error) {
	ctx, span := s.span(ctx, "events.ReadStreamFrom", stream)
	evs, err := s.inner.ReadStreamFrom(ctx, stream, from)
	s.unavailable(opReadStream, err)
	endSpan(span, err)
	return evs, err
}

func (s *instrumentedStore) ReadLast(ctx context.Context, stream string) (events.RecordedEvent, error) {
	ctx, span := s.span(ctx, "events.ReadLast", stream)
	ev, err := s.inner.ReadLast(ctx, stream)
	s.unavailable(opReadLast, err)
	endSpan(span, notFoundIsNoError(err))
	return ev, err
}

func notFoundIsNoError(err error) error {
	if errors.Is(err, events.ErrStreamNotFound) {
		return nil
	}
	return err
}

func (s *instrumentedStore) ReadAll(ctx context.Context, from events.Position, max int) ([]events.RecordedEvent, error) {
	evs, err := s.inner.ReadAll(ctx, from, max)
	s.unavailable(opReadAll, err)
	return evs, err
}

// ReadAllOf forwards to the store's ReadAllOf when it has one (see
// events.SkippingReader), so that a rebuild through the decorator skips as
// it would without it; otherwise it reads every payload with ReadAll.
func (s *instrumentedStore) ReadAllOf(ctx context.Context, from events.Position, max int, payloadsOf ...string) ([]events.RecordedEvent, int, error) {
	evs, scanned, err := events.ReadAllOf(ctx, s.inner, from, max, payloadsOf...)
	s.unavailable(opReadAll, err)
	return evs, scanned, err
}

func (s *instrumentedStore) SubscribeAll(ctx context.Context, from events.Position, payloadsOf ...string) (events.Subscription, error) {
	sub, err := s.inner.SubscribeAll(ctx, from, payloadsOf...)
	if err != nil {
		s.unavailable(opSubscribe, err)
		return nil, err
	}
	return &instrumentedSubscription{Subscription: sub, store: s}, nil
}

func (s *instrumentedStore) Ping(ctx context.Context) error {
	err := s.inner.Ping(ctx)
	s.unavailable(opPing, err)
	return err
}

func (s *instrumentedStore) Close() error { return s.inner.Close() }

// instrumentedSubscription counts a subscription that ended because the
// store went away, once however often Err is asked.
type instrumentedSubscription struct {
	events.Subscription
	store *instrumentedStore
	once  sync.Once
}

func (s *instrumentedSubscription) Err() error {
	err := s.Subscription.Err()
	if err != nil {
		s.once.Do(func() { s.store.unavailable(opSubscribe, err) })
	}
	return err
}
