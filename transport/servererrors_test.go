package transport_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/transport"
)

// rawServer serves h on a loopback port, through ShapeServerErrors when
// shaped, and returns its address.
func rawServer(t *testing.T, h http.Handler, shaped bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, MaxHeaderBytes: 1 << 10, ReadHeaderTimeout: 5 * time.Second}
	served := ln
	if shaped {
		served = transport.ShapeServerErrors(ln)
	}
	go srv.Serve(served)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	return c
}

func apiHandler() http.Handler {
	return transport.NewHandler(transport.Config{Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))})
}

func TestServerWrittenErrorsComeInTheErrorShape(t *testing.T) {
	addr := rawServer(t, apiHandler(), true)
	tests := []struct {
		name, request string
		status        int
		code, inMsg   string
	}{
		{"a garbage request line", "GARBAGE\r\n\r\n", 400, "malformed_request", "well-formed HTTP"},
		{"headers over MaxHeaderBytes", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 8<<10) + "\r\n\r\n",
			431, "request_header_fields_too_large", "too large"},
		{"no Host on HTTP/1.1", "GET /healthz HTTP/1.1\r\n\r\n", 400, "malformed_request", "missing required Host header"},
		{"a malformed Host", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", 400, "malformed_request", "malformed Host header"},
		{"an invalid header name", "GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400, "malformed_request", "well-formed HTTP"},
		{"an invalid header value", "GET /healthz HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", 400, "malformed_request", "well-formed HTTP"},
		{"an unknown Transfer-Encoding", "POST /v1/companies HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", 501, "not_implemented", "Transfer-Encoding"},
		{"HTTP/2.0 over HTTP/1", "GET /healthz HTTP/2.0\r\nHost: x\r\n\r\n", 505, "http_version_not_supported", "HTTP version"},
	}
	ids := map[string]bool{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dial(t, addr)
			if _, err := io.WriteString(c, tt.request); err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(c) // the server closes the connection
			if err != nil {
				t.Fatal(err)
			}
			res, err := http.ReadResponse(bufio.NewReader(bytes.NewReader(raw)), nil)
			if err != nil {
				t.Fatalf("%v\n%q", err, raw)
			}
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != tt.status || res.Header.Get("Content-Type") != "application/json" || !res.Close {
				t.Errorf("status %d, Content-Type %q, close %v; want %d, application/json, true\n%q",
					res.StatusCode, res.Header.Get("Content-Type"), res.Close, tt.status, raw)
			}
			if !bytes.HasSuffix(raw, body) || res.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
				t.Errorf("Content-Length %q for a body of %d bytes, or bytes after it:\n%q", res.Header.Get("Content-Length"), len(body), raw)
			}
			var got struct {
				Error struct {
					Code      string `json:"code"`
					Message   string `json:"message"`
					RequestID string `json:"request_id"`
				} `json:"error"`
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&got); err != nil {
				t.Fatalf("not the error shape: %v\n%s", err, body)
			}
			e := got.Error
			if e.Code != tt.code || !strings.Contains(e.Message, tt.inMsg) {
				t.Errorf("error = %+v, want code %s and a message with %q", e, tt.code, tt.inMsg)
			}
			if id := res.Header.Get("X-Request-Id"); id != e.RequestID || uuid.Validate(id) != nil || ids[id] {
				t.Errorf("X-Request-Id %q, error.request_id %q; want one new UUID in both", id, e.RequestID)
			}
			ids[e.RequestID] = true
		})
	}
}

// dateLine is the one part of a response that may differ between servers.
var dateLine = regexp.MustCompile(`(?m)^Date: [^\r]*\r$`)

// exchange sends request on one connection and returns the raw bytes of the
// n responses it reads back.
func exchange(t *testing.T, addr, request string, n int) string {
	t.Helper()
	c := dial(t, addr)
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	br := bufio.NewReader(io.TeeReader(c, &raw))
	for range n {
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%v\n%q", err, raw.String())
		}
		if _, err := io.Copy(io.Discard, res.Body); err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	return dateLine.ReplaceAllString(raw.String(), "Date: (now)\r")
}

func TestOtherResponsesPassThroughUntouched(t *testing.T) {
	// Two requests on one kept-alive connection, a 200 and a handler's 404.
	keepAlive := "GET /healthz HTTP/1.1\r\nHost: x\r\nX-Request-Id: first\r\n\r\n" +
		"GET /no/such/route HTTP/1.1\r\nHost: x\r\nX-Request-Id: second\r\n\r\n"
	want := exchange(t, rawServer(t, apiHandler(), false), keepAlive, 2)
	got := exchange(t, rawServer(t, apiHandler(), true), keepAlive, 2)
	if got != want || !strings.Contains(got, "200 OK") || !strings.Contains(got, "404 Not Found") {
		t.Errorf("through ShapeServerErrors:\n%q\nwant:\n%q", got, want)
	}

	// A handler's own text/plain 400 that closes the connection, as close to
	// net/http's own answer as a handler can get, is not rewritten.
	lookalike := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Connection", "close")
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, "400 Bad Request")
	})
	request := "GET / HTTP/1.1\r\nHost: x\r\n\r\n"
	want = exchange(t, rawServer(t, lookalike, false), request, 1)
	got = exchange(t, rawServer(t, lookalike, true), request, 1)
	if got != want || !strings.Contains(got, "text/plain") {
		t.Errorf("through ShapeServerErrors:\n%q\nwant:\n%q", got, want)
	}
}
