package bench

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The load generator's own HTTP client against net/http's server: every
// framing the server may choose, the request as the service sees it, and
// connections reused unless the server closes them.
func TestRawClientReadsEveryFramingAndReusesConnections(t *testing.T) {
	big := strings.Repeat("0123456789", 20_000) // past net/http's buffer: chunked
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo":
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/plain")
			_, _ = io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization")+" "+
				r.Header.Get("Idempotency-Key")+" "+r.Header.Get("Content-Type")+" "+string(body))
		case "/big":
			_, _ = io.WriteString(w, big)
		case "/none":
			w.WriteHeader(http.StatusNoContent)
		case "/close":
			w.Header().Set("Connection", "close")
			_, _ = io.WriteString(w, "bye")
		default:
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, `{"error":{"code":"not_found","message":"no"}}`)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newClient(srv.URL, "tok", 2)
	defer c.Close()
	ctx := context.Background()

	cases := []struct {
		name, method, path, key string
		body                    []byte
		want                    int
		wantBody                string
		newConns                int64
	}{
		{"content-length", http.MethodPost, "/echo?a=1", "k1", []byte(`{"x":1}`), 200,
			`POST /echo?a=1 Bearer tok k1 application/json {"x":1}`, 1},
		{"no body sent", http.MethodGet, "/echo", "", nil, 200, "GET /echo Bearer tok   ", 0},
		{"chunked", http.MethodGet, "/big", "", nil, 200, big, 0},
		{"no content", http.MethodDelete, "/none", "", nil, 204, "", 0},
		{"connection close", http.MethodGet, "/close", "", nil, 200, "bye", 0},
		{"after a close, a new connection", http.MethodGet, "/echo", "", nil, 200, "GET /echo Bearer tok   ", 1},
	}
	for _, tc := range cases {
		before := conns.Load()
		got, err := c.send(ctx, tc.method, tc.path, tc.body, tc.key, tc.want)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if string(got) != tc.wantBody {
			t.Errorf("%s: body %.100q, want %.100q", tc.name, got, tc.wantBody)
		}
		if n := conns.Load() - before; n != tc.newConns {
			t.Errorf("%s: %d new connections, want %d", tc.name, n, tc.newConns)
		}
	}

	err := c.expect(ctx, http.MethodGet, "/missing", http.StatusOK)
	var se *statusError
	if !errors.As(err, &se) || se.Status != 404 || se.Code != "not_found" {
		t.Fatalf("an unexpected status: %v, want HTTP 404 not_found", err)
	}
	if err := c.expect(ctx, http.MethodGet, "/big", http.StatusOK); err != nil {
		t.Fatalf("the connection after an error answer: %v", err)
	}
}
