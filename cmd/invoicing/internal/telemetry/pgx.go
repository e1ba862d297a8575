package telemetry

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// PgxTracer traces pgx queries and batches as client spans (pgx.QueryTracer
// and pgx.BatchTracer). It traces only calls made within a trace, a
// request's: the projectors' batches and the event store's polling start
// none, so a busy projector does not flood the exporter with root spans.
// Spans carry the SQL text, never its arguments.
type PgxTracer struct {
	tracer trace.Tracer
}

// NewPgxTracer returns a tracer of pgx calls using tp; set it as the pool's
// ConnConfig.Tracer.
func NewPgxTracer(tp trace.TracerProvider) *PgxTracer {
	return &PgxTracer{tracer: tp.Tracer(instrumentationName)}
}

var (
	_ pgx.QueryTracer = (*PgxTracer)(nil)
	_ pgx.BatchTracer = (*PgxTracer)(nil)
)

// pgxSpanKey marks the span this tracer started, so that the End call never
// ends a span it did not start (the request's, when it declined to trace).
type pgxSpanKey struct{}

var dbSystem = attribute.String("db.system.name", "postgresql")

func (t *PgxTracer) start(ctx context.Context, name string, attrs ...attribute.KeyValue) context.Context {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	ctx, span := t.tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(attrs, dbSystem)...))
	return context.WithValue(ctx, pgxSpanKey{}, span)
}

func end(ctx context.Context, err error) {
	span, ok := ctx.Value(pgxSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "")
	}
	span.End()
}

// TraceQueryStart starts a span named after the statement's first keyword.
func (t *PgxTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	op := operation(data.SQL)
	return t.start(ctx, op, attribute.String("db.operation.name", op), attribute.String("db.query.text", data.SQL))
}

func (t *PgxTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	end(ctx, data.Err)
}

// TraceBatchStart starts one span for the batch; each statement becomes an
// event on it.
func (t *PgxTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	return t.start(ctx, "BATCH", attribute.String("db.operation.name", "BATCH"),
		attribute.Int("db.operation.batch.size", data.Batch.Len()))
}

func (t *PgxTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	span, ok := ctx.Value(pgxSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	span.AddEvent("query", trace.WithAttributes(attribute.String("db.query.text", data.SQL)))
	if data.Err != nil {
		span.RecordError(data.Err)
	}
}

func (t *PgxTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	end(ctx, data.Err)
}

// operation is a statement's first keyword, upper-cased: SELECT, INSERT,
// BEGIN. It is the span's name, so it must stay a short, bounded word.
func operation(sql string) string {
	sql = strings.TrimSpace(sql)
	if i := strings.IndexFunc(sql, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '(' || r == ';' }); i >= 0 {
		sql = sql[:i]
	}
	if sql == "" || len(sql) > 16 {
		return "QUERY"
	}
	return strings.ToUpper(sql)
}
