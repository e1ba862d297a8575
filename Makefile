# Targets: build, run, test, lint, pg-stop, clean. `make run` and `make test`
# need only Go and the system's PostgreSQL server binaries, which they install
# when missing (deploy/ensure-postgres.sh; README.md).

GO ?= go
PG_LOCAL := ./deploy/local-postgres.sh
PG_ENSURE := ./deploy/ensure-postgres.sh
# Pinned: `go run pkg@version` fetches, verifies against the checksum
# database and caches this exact version; nothing else to install.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

# Development-only settings for `make run`; override on the command line or in
# the environment, e.g. `make run LOG_LEVEL=debug`.
AUTH_HS256_SECRET ?= dev-only-insecure-hs256-secret-0123456789abcdef
LOG_LEVEL ?= info

# What `invoicing version` prints, stamped at link time (see
# cmd/invoicing/cli_version.go): `git describe` (a tag, else the abbreviated
# commit; -dirty for uncommitted changes) and the full commit. Outside a git
# checkout: "dev" and no revision. Override, e.g. `make build VERSION=v1.2.3`.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS = -X main.version=$(VERSION) -X main.revision=$(REVISION)

.PHONY: build run test lint tools lint-openapi up down pg-stop pg-ensure clean

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o bin/invoicing ./cmd/invoicing

# Installs the PostgreSQL server binaries when they are missing (apt-get, as
# root or through sudo), else says what to run.
pg-ensure:
	@$(PG_ENSURE)

# How to call the running server; printed by `make run` before it starts.
# `\$(NOTHING)` keeps a shell line continuation that make would otherwise join.
define RUN_HELP_TEXT

In another terminal, get a development token signed with the same secret:

  export TOKEN="$$(AUTH_HS256_SECRET='$(AUTH_HS256_SECRET)' go run ./cmd/invoicing dev-token --org acme)"
  # or, after `make build`: AUTH_HS256_SECRET='$(AUTH_HS256_SECRET)' bin/invoicing dev-token --org acme

then create a first company:

  curl -s -X POST localhost:8080/v1/companies \$(NOTHING)
    -H "Authorization: Bearer $$TOKEN" \$(NOTHING)
    -H 'Content-Type: application/json' \$(NOTHING)
    -H 'idempotency-key: first-company-1' \$(NOTHING)
    -d '{"legal_name":"Acme GmbH","address":{"line_1":"Hauptstr. 1","city":"Berlin","postal_code":"10115","country_code":"DE"},"default_currency":"EUR"}'

README.md's first session goes on from there: a customer, invoices, issue, void.
Stop the server with Ctrl-C, then PostgreSQL with `make pg-stop` (data is kept
in .data/pg).

endef

run: export AUTH_HS256_SECRET := $(AUTH_HS256_SECRET)
run: export LOG_LEVEL := $(LOG_LEVEL)
run: export RUN_HELP = $(RUN_HELP_TEXT)
run: pg-ensure
	@$(PG_LOCAL) start >/dev/null
	@DATABASE_URL="$$($(PG_LOCAL) url)" && export DATABASE_URL && \
	  echo "DATABASE_URL=$$DATABASE_URL" && \
	  printf '%s\n' "$$RUN_HELP" && \
	  exec $(GO) run -ldflags "$(LDFLAGS)" ./cmd/invoicing serve

# Each test package starts its own PostgreSQL through internal/pgtest, unless
# TEST_DATABASE_URL names an existing server (then no binaries are needed).
# The timeout bounds a hung test binary: cmd/invoicing takes about 300 s
# alone on the 2-core machine, and up to 890 s beside einvoice's run of
# CEN's Java validator (.ci/run), which 20 minutes left little room for.
test:
	@if [ -z "$$TEST_DATABASE_URL" ]; then $(PG_ENSURE); fi
	$(GO) test -count=1 -timeout 30m ./...

lint:
	@unformatted="$$(find . \( -path ./.git -o -path ./.data -o -path ./bin -o -path ./node_modules \) -prune \
	  -o -name '*.go' -print | xargs -r gofmt -l)" || { echo "gofmt failed" >&2; exit 1; }; \
	  if [ -n "$$unformatted" ]; then echo "gofmt -l lists (run gofmt -w):" >&2; echo "$$unformatted" >&2; exit 1; fi
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...
	@if [ -d internal/archtest ]; then echo "$(GO) test -count=1 ./internal/archtest/..."; \
	  $(GO) test -count=1 ./internal/archtest/...; fi

# The linters' pinned versions, fetched into the module cache (.ci/run).
tools:
	$(GO) install $(STATICCHECK)

pg-stop:
	@$(PG_LOCAL) stop

clean:
	rm -rf bin/

# OpenAPI lint with Redocly CLI (installed from npm into a cache on first use).
lint-openapi:
	./deploy/openapi-lint.sh

# The EventStoreDB development stack (needs a Docker engine).
up:
	VERSION='$(VERSION)' REVISION='$(REVISION)' docker compose -f deploy/compose.yaml up --build

down:
	docker compose -f deploy/compose.yaml down

# Benchmarks (docs/benchmarks.md). Each starts its own PostgreSQL with default
# durability, its shared memory in huge pages (reserved for the run as root,
# and given back; BENCH_FLAGS=-huge-pages=false for 4 kB pages), glibc's
# MALLOC_TRIM_THRESHOLD_ at 32 MiB (-pg-malloc-trim=0 for glibc's default),
# and its own build of the service, on 127.0.0.1, and stops by itself.
# Knobs from the environment: BENCH_CLIENTS (16), BENCH_DURATION
# (10s per phase), BENCH_N (1000000 invoices, bench-scale), BENCH_SCALE_CLIENTS
# (8, bench-scale's loaded reads); any other flag
# through BENCH_FLAGS, e.g. `make bench-scale BENCH_N=100000`.
# bench first reports the time to render one document (UBL, CII, PDF: Go
# benchmarks of einvoice/... on one core, -cpu 1), then runs the service benchmark.
.PHONY: bench bench-scale bench-render
bench: bench-render
	$(GO) run ./cmd/bench service $(BENCH_FLAGS)

bench-render:
	$(GO) test -run '^$$' -bench Render -benchmem -cpu 1 ./einvoice/...

bench-scale:
	$(GO) run ./cmd/bench scale $(BENCH_FLAGS)
