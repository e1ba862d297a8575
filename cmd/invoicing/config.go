package main

import (
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/invoicing/invoicing/audit"
	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events/esdb"
	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/auth"
)

// The HTTP server's timeouts by default; docs/configuration.md's table
// states them. Without them a client that sends headers and then stalls or
// trickles its body holds a connection and a goroutine for ever.
const (
	// DefaultReadHeaderTimeout bounds reading a request's headers.
	DefaultReadHeaderTimeout = 10 * time.Second
	// DefaultReadTimeout bounds reading a whole request, headers and body
	// (HTTP_READ_TIMEOUT); a body not in by then gets 408.
	DefaultReadTimeout = 30 * time.Second
	// DefaultWriteTimeout bounds a request from the end of its headers to
	// the end of its response (HTTP_WRITE_TIMEOUT), so it covers the body
	// read and a create's read-your-writes wait as well.
	DefaultWriteTimeout = 60 * time.Second
	// DefaultIdleTimeout bounds how long a kept-alive connection waits for
	// its next request (HTTP_IDLE_TIMEOUT).
	DefaultIdleTimeout = 120 * time.Second
)

// httpTimeouts are the http.Server fields of the same names; zero means
// none, as there.
type httpTimeouts struct {
	ReadHeader time.Duration
	Read       time.Duration
	Write      time.Duration
	Idle       time.Duration
}

// config is every setting of `serve`, read once from the environment.
type config struct {
	HTTPAddr      string
	HTTP          httpTimeouts
	DatabaseURL   string
	EventStoreURL string
	MaxBodyBytes  int64
	LogLevel      slog.Level
	Auth          authConfig
	ShutdownGrace time.Duration
	WaitTimeout   time.Duration
	// Delivery tunes webhook delivery (webhook_delivery.go).
	Delivery deliveryConfig
	// MetricsAddr is where Prometheus metrics are served (METRICS_ADDR);
	// "" serves none and collects none.
	MetricsAddr string
	// PprofAddr is where Go's runtime profiles (net/http/pprof) are served
	// (PPROF_ADDR); "" serves none. For profiling a benchmark run.
	PprofAddr string
	Tracing   tracingConfig
	Audit     auditConfig
	Webhooks  webhooksConfig
}

// webhooksConfig is the webhook endpoints' settings.
type webhooksConfig struct {
	// AllowPrivateNetworks lifts the URL guard (WEBHOOK_ALLOW_PRIVATE_NETWORKS=true):
	// plain http and any address, for tests and on-premises receivers.
	AllowPrivateNetworks bool
	// SecretKey is the master key of the signing secrets
	// (WEBHOOK_SECRET_KEY); nil: the one kept in the database.
	SecretKey []byte
}

// auditConfig tunes the sealer that records the event log's audit chain.
type auditConfig struct {
	// Off keeps this instance from ever sealing (AUDIT_SEALER=off), for
	// instances meant to serve the API only; one instance seals at a time
	// anyway, whichever holds the lock.
	Off          bool
	SigningKey   ed25519.PrivateKey // AUDIT_SIGNING_KEY; nil: seals are unsigned
	SealEvery    int                // AUDIT_SEAL_EVERY events
	SealInterval time.Duration      // AUDIT_SEAL_INTERVAL
}

// tracingConfig switches OpenTelemetry tracing on. The exporter and the SDK
// read their other settings (headers, timeout, sampler, resource) from the
// standard OTEL_* variables themselves.
type tracingConfig struct {
	// Enabled is set by OTEL_EXPORTER_OTLP_ENDPOINT or
	// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, unless OTEL_SDK_DISABLED=true.
	Enabled bool
	// provider, when set (by tests), is used instead of an OTLP exporter's
	// and turns tracing on.
	provider trace.TracerProvider
}

type authConfig struct {
	HS256Secret string
	JWKSURL     string
	Issuer      string
	Audience    string
	OrgClaim    string
}

func loadConfig(getenv func(string) string) (config, error) {
	cfg := config{
		HTTPAddr:      or(getenv("HTTP_ADDR"), ":8080"),
		DatabaseURL:   getenv("DATABASE_URL"),
		EventStoreURL: getenv("EVENTSTORE_URL"),
		MaxBodyBytes:  transport.DefaultMaxBodyBytes,
		HTTP: httpTimeouts{
			ReadHeader: DefaultReadHeaderTimeout, Read: DefaultReadTimeout,
			Write: DefaultWriteTimeout, Idle: DefaultIdleTimeout,
		},
		ShutdownGrace: 30 * time.Second,
		WaitTimeout:   command.DefaultWaitTimeout,
		Auth: authConfig{
			HS256Secret: getenv("AUTH_HS256_SECRET"),
			JWKSURL:     getenv("AUTH_JWKS_URL"),
			Issuer:      getenv("AUTH_ISSUER"),
			Audience:    getenv("AUTH_AUDIENCE"),
			OrgClaim:    or(getenv("AUTH_ORG_CLAIM"), auth.DefaultOrgClaim),
		},
	}
	var problems []error
	if cfg.DatabaseURL == "" {
		problems = append(problems, errors.New("DATABASE_URL is required (make run supplies a local one)"))
	}
	if cfg.Auth.HS256Secret == "" && cfg.Auth.JWKSURL == "" {
		problems = append(problems, errors.New("set AUTH_JWKS_URL or AUTH_HS256_SECRET: no token could be verified"))
	}
	if v := getenv("MAX_BODY_BYTES"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			problems = append(problems, fmt.Errorf("MAX_BODY_BYTES=%q: want a positive integer", v))
		}
		cfg.MaxBodyBytes = n
	}
	cfg.HTTP.Read = duration(getenv, "HTTP_READ_TIMEOUT", cfg.HTTP.Read, &problems)
	cfg.HTTP.Write = duration(getenv, "HTTP_WRITE_TIMEOUT", cfg.HTTP.Write, &problems)
	cfg.HTTP.Idle = duration(getenv, "HTTP_IDLE_TIMEOUT", cfg.HTTP.Idle, &problems)
	// The write deadline starts when the headers are in, so a create may
	// spend up to the read timeout on its body and then wait for the read
	// models; a shorter write timeout would cut its 201 off.
	if need := cfg.HTTP.Read + cfg.WaitTimeout; cfg.HTTP.Write <= need {
		problems = append(problems, fmt.Errorf("HTTP_WRITE_TIMEOUT=%s: want more than HTTP_READ_TIMEOUT plus the %s read-your-writes wait (%s)", cfg.HTTP.Write, cfg.WaitTimeout, need))
	}
	cfg.HTTP.ReadHeader = min(cfg.HTTP.ReadHeader, cfg.HTTP.Read)
	loadDeliveryConfig(getenv, &cfg, &problems)
	if err := cfg.LogLevel.UnmarshalText([]byte(or(getenv("LOG_LEVEL"), "info"))); err != nil {
		problems = append(problems, fmt.Errorf("LOG_LEVEL: %w", err))
	}
	if u := cfg.EventStoreURL; u != "" && !esdb.IsConnectionString(u) {
		// Only the scheme is echoed: the rest may hold a password.
		scheme, _, _ := strings.Cut(u, "://")
		problems = append(problems, fmt.Errorf("EVENTSTORE_URL: scheme %q: want an esdb://, esdb+discover://, kurrentdb:// or kurrentdb+discover:// connection string", scheme))
	}
	loadTelemetryConfig(getenv, &cfg, &problems)
	loadAuditConfig(getenv, &cfg, &problems)
	loadWebhooksConfig(getenv, &cfg, &problems)
	if err := errors.Join(problems...); err != nil {
		return config{}, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

func or(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// duration reads the environment variable name as a positive Go duration
// ("45s", "2m"), keeping def when it is unset.
func duration(getenv func(string) string, name string, def time.Duration, problems *[]error) time.Duration {
	v := getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		*problems = append(*problems, fmt.Errorf("%s=%q: want a positive duration such as 30s", name, v))
		return def
	}
	return d
}

// loadAuditConfig reads the sealer's settings. The signing key is never
// echoed.
func loadAuditConfig(getenv func(string) string, cfg *config, problems *[]error) {
	cfg.Audit = auditConfig{SealEvery: audit.DefaultSealEvery, SealInterval: audit.DefaultSealInterval}
	switch v := getenv("AUDIT_SEALER"); v {
	case "", "on":
	case "off":
		cfg.Audit.Off = true
	default:
		*problems = append(*problems, fmt.Errorf("AUDIT_SEALER=%q: want on or off", v))
	}
	key, err := signingKey(getenv)
	if err != nil {
		*problems = append(*problems, err)
	}
	cfg.Audit.SigningKey = key
	if v := getenv("AUDIT_SEAL_EVERY"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			*problems = append(*problems, fmt.Errorf("AUDIT_SEAL_EVERY=%q: want a positive number of events", v))
		}
		cfg.Audit.SealEvery = n
	}
	cfg.Audit.SealInterval = duration(getenv, "AUDIT_SEAL_INTERVAL", cfg.Audit.SealInterval, problems)
}

// signingKey reads AUDIT_SIGNING_KEY, the key that signs seals: the
// sealer's, and `audit seal`'s; nil when it is unset.
func signingKey(getenv func(string) string) (ed25519.PrivateKey, error) {
	v := getenv("AUDIT_SIGNING_KEY")
	if v == "" {
		return nil, nil
	}
	key, err := audit.ParseSigningKey(v)
	if err != nil {
		return nil, fmt.Errorf("AUDIT_SIGNING_KEY: %w", err)
	}
	return key, nil
}

// loadWebhooksConfig reads WEBHOOK_ALLOW_PRIVATE_NETWORKS and
// WEBHOOK_SECRET_KEY (never echoed).
func loadWebhooksConfig(getenv func(string) string, cfg *config, problems *[]error) {
	switch v := getenv("WEBHOOK_ALLOW_PRIVATE_NETWORKS"); v {
	case "", "false":
	case "true":
		cfg.Webhooks.AllowPrivateNetworks = true
	default:
		*problems = append(*problems, fmt.Errorf("WEBHOOK_ALLOW_PRIVATE_NETWORKS=%q: want true or false", v))
	}
	if v := getenv("WEBHOOK_SECRET_KEY"); v != "" {
		key, err := parseWebhookKey(v)
		if err != nil {
			*problems = append(*problems, err)
		}
		cfg.Webhooks.SecretKey = key
	}
}

// checkSideAddr checks the listen address of a side listener (metrics,
// profiles): host:port with a numeric port, not the API's own.
func checkSideAddr(name, addr, httpAddr string, problems *[]error) {
	if addr == "" {
		return
	}
	_, port, err := net.SplitHostPort(addr)
	if n, perr := strconv.Atoi(port); err != nil || perr != nil || n < 0 || n > 65535 {
		*problems = append(*problems, fmt.Errorf("%s=%q: want host:port or :port with a numeric port", name, addr))
	} else if addr == httpAddr {
		*problems = append(*problems, fmt.Errorf("%s=%q: must differ from HTTP_ADDR", name, addr))
	}
}

// loadTelemetryConfig reads METRICS_ADDR and whether to export traces.
func loadTelemetryConfig(getenv func(string) string, cfg *config, problems *[]error) {
	cfg.MetricsAddr = getenv("METRICS_ADDR")
	checkSideAddr("METRICS_ADDR", cfg.MetricsAddr, cfg.HTTPAddr, problems)
	cfg.PprofAddr = getenv("PPROF_ADDR")
	checkSideAddr("PPROF_ADDR", cfg.PprofAddr, cfg.HTTPAddr, problems)
	if cfg.PprofAddr != "" && cfg.PprofAddr == cfg.MetricsAddr {
		*problems = append(*problems, fmt.Errorf("PPROF_ADDR=%q: must differ from METRICS_ADDR", cfg.PprofAddr))
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		v := getenv(name)
		if v == "" {
			continue
		}
		cfg.Tracing.Enabled = true
		// The value is not echoed: it may carry credentials.
		if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			*problems = append(*problems, fmt.Errorf("%s: want an http:// or https:// URL such as http://collector:4318", name))
		}
	}
	if !cfg.Tracing.Enabled {
		return
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if v := getenv(name); v != "" && v != "http/protobuf" {
			*problems = append(*problems, fmt.Errorf("%s=%q: only http/protobuf is supported", name, v))
		}
	}
}
