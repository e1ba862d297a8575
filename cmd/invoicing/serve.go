package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/multitracer"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/audit"
	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/einvoice/pdf"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/events/pgstore"
	"github.com/invoicing/invoicing/internal/pgarray"
	"github.com/invoicing/invoicing/internal/pgerr"
	"github.com/invoicing/invoicing/projections"
	"github.com/invoicing/invoicing/query"
	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/auth"
	"github.com/invoicing/invoicing/webhook"
)

// serve applies migrations, starts the projectors and the HTTP server, and
// on ctx's end (SIGTERM) stops accepting, drains in-flight requests, stops
// the projectors after their current batch and returns nil.
func serve(ctx context.Context, cfg config, logOut io.Writer) error {
	logger := slog.New(slog.NewJSONHandler(logOut, &slog.HandlerOptions{Level: cfg.LogLevel}))
	app, err := open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer app.close()

	stopPprof, err := servePprof(cfg.PprofAddr, logger)
	if err != nil {
		return err
	}
	defer stopPprof()
	ln, err := net.Listen("tcp", cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.HTTPAddr, err)
	}
	return app.run(ctx, ln, cfg.ShutdownGrace)
}

// app is the wired service.
type app struct {
	pool   *pgxpool.Pool
	store  events.Store
	group  *projections.Group
	sealer *audit.Sealer
	// sealerOff: this instance never seals (AUDIT_SEALER=off).
	sealerOff bool
	handler   http.Handler
	logger    *slog.Logger
	timeouts  httpTimeouts
	obs       *observability
	// webhookKey is the master key of the webhook signing secrets
	// (webhook.Secret), webhookGuard the URL guard (registrations and
	// deliveries: its DialContext).
	webhookKey   []byte
	webhookGuard *webhook.Guard
	// webhooks delivers the public events to the endpoints.
	webhooks *webhookDelivery
}

func open(ctx context.Context, cfg config, logger *slog.Logger) (*app, error) {
	verifier, err := auth.NewVerifier(auth.Config{
		HS256Secret: []byte(cfg.Auth.HS256Secret), JWKSURL: cfg.Auth.JWKSURL,
		Issuer: cfg.Auth.Issuer, Audience: cfg.Auth.Audience, OrgClaim: cfg.Auth.OrgClaim,
	})
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	renderer, err := pdf.NewRenderer() // before anything that needs closing
	if err != nil {
		return nil, err
	}
	obs, err := openObservability(ctx, cfg, logger)
	if err != nil {
		return nil, err
	}
	pool, store, err := openDatabases(ctx, cfg, logger, obs.poolOptions()...)
	if err != nil {
		obs.close()
		return nil, err
	}
	store = obs.instrumentStore(store)
	rebuilder := &projections.Rebuilder{Store: store, Pool: pool, Logger: logger, Observer: obs.projectionObserver()}
	group := projections.NewGroup(projections.All(), store, pool, logger, projections.RunnerOptions{
		Prepare: rebuilder.UpgradeIfStale, Observer: obs.projectionObserver(),
	})
	obs.watch(pool, group, store)
	queries := query.New(pool)
	masterKey, err := webhookMasterKey(ctx, cfg.Webhooks.SecretKey, pool)
	if err != nil {
		store.Close()
		pool.Close()
		obs.close()
		return nil, err
	}
	guard := newURLGuard(cfg.Webhooks.AllowPrivateNetworks)
	if cfg.Delivery.resolver != nil {
		guard.Resolver = cfg.Delivery.resolver
	}
	commands := command.NewHandler(command.Config{
		Store: store, Waiter: group, Directory: command.CachedDirectory(directory{queries}, command.DefaultDirectoryCacheSize), Logger: logger, WaitTimeout: cfg.WaitTimeout,
		WebhookEndpoints: webhookEndpointDirectory{queries}, URLChecker: urlGuard{guard}, WebhookSecrets: webhookSecrets(masterKey),
		PublicEventTypes: publicEventTypes,
	})
	sealer := audit.NewSealer(store, pool, logger, audit.SealerOptions{
		SealEvery: cfg.Audit.SealEvery, SealInterval: cfg.Audit.SealInterval, Key: cfg.Audit.SigningKey,
		Yield: group.CatchingUp,
	})
	a := &app{pool: pool, store: store, group: group, sealer: sealer, sealerOff: cfg.Audit.Off, logger: logger, timeouts: cfg.HTTP, obs: obs,
		webhookKey: masterKey, webhookGuard: guard}
	a.webhooks = newWebhookDelivery(deliveryWiring{cfg: cfg.Delivery, store: store, pool: pool, logger: logger, group: group,
		queries: queries, commands: commands, key: masterKey, guard: guard, obs: obs})
	a.handler = obs.traceHandler(transport.NewHandler(transport.Config{
		Commands: commands, Queries: queries, Auth: verifier, Logger: logger,
		MaxBodyBytes: cfg.MaxBodyBytes, Ready: a.ready, QuarantinedEvents: group.QuarantineCount,
		Metrics: obs.httpMetrics(), PDF: renderer, EventStore: store,
		Deliveries: a.webhooks.log, WebhookEndpointExists: webhookEndpointExists(queries),
	}))
	return a, nil
}

// openDatabases connects to PostgreSQL and the event store and applies
// pending migrations: the event store's, the projections' bookkeeping, the
// tables of projections that have none yet, and the audit chain's.
// poolOptions adjust the pool's configuration (serve's tracer).
func openDatabases(ctx context.Context, cfg config, logger *slog.Logger, poolOptions ...func(*pgxpool.Config)) (*pgxpool.Pool, events.Store, error) {
	pool, err := openPool(ctx, cfg.DatabaseURL, poolOptions...)
	if err != nil {
		return nil, nil, err
	}
	store, err := openStore(ctx, cfg, pool, logger)
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	err = migrateReadModels(ctx, pool)
	if err == nil {
		err = migrateAudit(ctx, pool)
	}
	if err == nil {
		err = migrateWebhooks(ctx, pool)
	}
	if err != nil {
		store.Close()
		pool.Close()
		return nil, nil, err
	}
	return pool, store, nil
}

// migrateReadModels creates the projections' bookkeeping and the tables of
// new projections, and refuses tables newer than this binary's code (a
// rolled-back deploy must rebuild, not write into a newer schema).
func migrateReadModels(ctx context.Context, pool *pgxpool.Pool) error {
	if err := projections.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("migrate read models: %w", err)
	}
	if _, err := projections.Install(ctx, pool, projections.All()); err != nil {
		return fmt.Errorf("install read models: %w", err)
	}
	return nil
}

// migrateAudit creates the audit chain's tables.
func migrateAudit(ctx context.Context, pool *pgxpool.Pool) error {
	if err := audit.Migrate(ctx, pool); err != nil {
		return fmt.Errorf("migrate the audit chain: %w", err)
	}
	return nil
}

// DefaultPoolMaxConns is the pool size unless DATABASE_URL sets
// pool_max_conns. pgx's own default, max(4, cores), made creates wait for a
// connection most of their time (issue 10): a create takes several short
// turns at the pool, and the projectors, the listener and the sealer hold
// connections too. PostgreSQL's default max_connections is 100, so two
// instances and the CLI still fit.
const DefaultPoolMaxConns = 32

// readBufferSize is what a connection reads from its socket at once. pgx
// reads 8 KB at a time: a list's hundred rows (about 100 KB) took 13 reads,
// a 2,000-event page of the log (3 MB) about 400, each a system call and
// often a wait on the poller. Measured (docs/benchmarks.md, issue 25's
// ninth session): make bench's list 3,298 and 3,356 → 3,645 and 3,643 a
// second, the service's CPU a list 264–274 → 230–236 µs; a page of the log
// 12.8–14.9 → 10.7–11.5 ms. 32 connections hold 2 MB of it.
const readBufferSize = 64 << 10

// bufferedFrontend is pgx's protocol reader over a readBufferSize buffer
// (pgconn.Config.BuildFrontend). A message longer than the buffer is read
// straight into pgx's own.
func bufferedFrontend(r io.Reader, w io.Writer) *pgproto3.Frontend {
	return pgproto3.NewFrontend(bufio.NewReaderSize(r, readBufferSize), w)
}

func openPool(ctx context.Context, url string, options ...func(*pgxpool.Config)) (*pgxpool.Pool, error) {
	pcfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	// An idle open transaction holds back every projector (see
	// events/pgstore/order.go); none of ours stays open, so cut any that does.
	pcfg.ConnConfig.RuntimeParams["idle_in_transaction_session_timeout"] = "30000"
	if !strings.Contains(url, "pool_max_conns") {
		pcfg.MaxConns = DefaultPoolMaxConns
	}
	for _, o := range options {
		o(pcfg)
	}
	// Every connection encodes the projections' batch arrays with room
	// made first (internal/pgarray), whatever an option set.
	optionsAfterConnect := pcfg.AfterConnect
	pcfg.AfterConnect = func(ctx context.Context, conn *pgx.Conn) error {
		pgarray.Register(conn.TypeMap())
		if optionsAfterConnect != nil {
			return optionsAfterConnect(ctx, conn)
		}
		return nil
	}
	pcfg.ConnConfig.BuildFrontend = bufferedFrontend
	reset := &pgerr.OutageReset{}
	if pcfg.ConnConfig.Tracer == nil {
		pcfg.ConnConfig.Tracer = reset
	} else {
		pcfg.ConnConfig.Tracer = multitracer.New(pcfg.ConnConfig.Tracer, reset)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	reset.Attach(pool)
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := pool.Ping(pingCtx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to PostgreSQL: %w", err)
	}
	return pool, nil
}

// openStore selects the event store: EventStoreDB when EVENTSTORE_URL is
// set, else the PostgreSQL store in DATABASE_URL.
func openStore(ctx context.Context, cfg config, pool *pgxpool.Pool, logger *slog.Logger) (events.Store, error) {
	if cfg.EventStoreURL != "" {
		return openEventStoreDB(ctx, cfg.EventStoreURL, logger)
	}
	if err := pgstore.Migrate(ctx, pool); err != nil {
		return nil, fmt.Errorf("migrate event store: %w", err)
	}
	return pgstore.New(pool, logger, pgstore.Options{}), nil
}

func (a *app) ready(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	return errors.Join(a.pool.Ping(ctx), a.store.Ping(ctx), a.group.Err())
}

func (a *app) run(ctx context.Context, ln net.Listener, grace time.Duration) error {
	projCtx, stopProjections := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		a.group.Run(projCtx)
	}()
	go func() {
		defer wg.Done()
		if !a.sealerOff {
			a.sealer.Run(projCtx)
		}
	}()
	a.webhooks.run(projCtx, &wg)
	stopMetrics := a.obs.serveMetrics()
	defer stopMetrics()
	srv := &http.Server{
		Handler:           a.handler,
		ReadHeaderTimeout: a.timeouts.ReadHeader,
		ReadTimeout:       a.timeouts.Read,
		WriteTimeout:      a.timeouts.Write,
		IdleTimeout:       a.timeouts.Idle,
	}
	serveErr := make(chan error, 1)
	// Through ShapeServerErrors, net/http's own answers to requests it
	// cannot read come in the error shape too.
	go func() { serveErr <- srv.Serve(transport.ShapeServerErrors(ln)) }()
	a.logger.Info("serving", "addr", ln.Addr().String())

	var err error
	select {
	case err = <-serveErr:
	case <-ctx.Done():
		a.logger.Info("shutting down", "grace", grace.String())
		shutCtx, cancel := context.WithTimeout(context.Background(), grace)
		err = srv.Shutdown(shutCtx)
		cancel()
	}
	stopProjections()
	wg.Wait()
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func (a *app) close() {
	a.obs.close()
	a.store.Close()
	a.pool.Close()
}
