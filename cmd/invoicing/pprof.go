package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves Go's runtime profiles (/debug/pprof/...) on their own
// listener when PPROF_ADDR is set, so that a benchmark run can be profiled
// (`go tool pprof http://ADDR/debug/pprof/profile?seconds=10`). Like the
// metrics it needs no token: keep it on loopback. The returned stop closes
// it; without PPROF_ADDR, or when it cannot listen, nothing is served.
func servePprof(addr string, logger *slog.Logger) (stop func(), err error) {
	if addr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("PPROF_ADDR: listen on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	// No write timeout: a CPU profile answers after the seconds it asks for.
	return serveSide(&http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}, ln, logger, "profiles"), nil
}
