package pgerr

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// OutageReset empties a pool of its connections once a statement fails
// because the server went away. A restarted PostgreSQL leaves every pooled
// connection dead, and pgx finds out only by using each one (it pings only
// connections idle for over a second): without the reset, each of them
// would fail one more request after the server is back.
//
// It is a pgx tracer (ConnConfig.Tracer); Attach gives it the pool once the
// pool exists.
type OutageReset struct {
	pool    atomic.Pointer[pgxpool.Pool]
	pending atomic.Bool
}

// Attach sets the pool to reset.
func (o *OutageReset) Attach(pool *pgxpool.Pool) { o.pool.Store(pool) }

// TraceQueryStart implements pgx.QueryTracer.
func (o *OutageReset) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

// TraceQueryEnd implements pgx.QueryTracer.
func (o *OutageReset) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	o.failed(ctx, data.Err)
}

// TraceBatchStart implements pgx.BatchTracer.
func (o *OutageReset) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

// TraceBatchQuery implements pgx.BatchTracer.
func (o *OutageReset) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

// TraceBatchEnd implements pgx.BatchTracer.
func (o *OutageReset) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	o.failed(ctx, data.Err)
}

// TracePrepareStart implements pgx.PrepareTracer. A copy first describes
// its table's columns with a prepare, on a connection's first copy into
// it, and returns that step's error without tracing the copy's end.
func (o *OutageReset) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	return ctx
}

// TracePrepareEnd implements pgx.PrepareTracer.
func (o *OutageReset) TracePrepareEnd(ctx context.Context, _ *pgx.Conn, data pgx.TracePrepareEndData) {
	o.failed(ctx, data.Err)
}

// TraceCopyFromStart implements pgx.CopyFromTracer: a projection's batch
// copies its rows, and the server can go in the middle of a copy.
func (o *OutageReset) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceCopyFromStartData) context.Context {
	return ctx
}

// TraceCopyFromEnd implements pgx.CopyFromTracer.
func (o *OutageReset) TraceCopyFromEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceCopyFromEndData) {
	o.failed(ctx, data.Err)
}

// failed resets the pool, off the failing goroutine (which still holds its
// connection), when err says the server is gone. A statement its caller
// cancelled says nothing about the server.
func (o *OutageReset) failed(ctx context.Context, err error) {
	if ctx.Err() != nil || !Unavailable(err) || !o.pending.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer o.pending.Store(false)
		if pool := o.pool.Load(); pool != nil {
			pool.Reset()
		}
	}()
}
