// Command bench is the project's benchmark harness (docs/benchmarks.md):
//
//	go run ./cmd/bench service [flags]   # make bench
//	go run ./cmd/bench scale [flags]     # make bench-scale
//
// Both start their own PostgreSQL with default durability and their own
// build of the service, talk to 127.0.0.1 only, stop by themselves and
// delete what they created. Defaults of the main knobs come from the
// environment (BENCH_CLIENTS, BENCH_DURATION, BENCH_N), so that
// `make bench BENCH_DURATION=3s` works. The harness is internal/bench.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/invoicing/invoicing/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := bench.Main(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench: %v\n", err)
		if errors.Is(err, bench.ErrUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}
