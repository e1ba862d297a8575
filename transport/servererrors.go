package transport

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// ShapeServerErrors wraps the HTTP server's listener so that the answers
// net/http gives on its own also come in the one error shape, with an
// X-Request-Id.
//
// Why it exists: a request net/http cannot read (a garbled request line or
// header, headers over MaxHeaderBytes, no Host on HTTP/1.1, an unknown
// Transfer-Encoding, an unsupported HTTP version) never reaches a handler.
// The server writes a text/plain answer straight to the connection and
// closes it (conn.serve in net/http/server.go), and offers no hook to change
// it. So the connection recognises those answers as they are written and
// rewrites them; every other byte passes through untouched.
//
// Wrap the plain TCP listener: under TLS the connection only sees
// ciphertext, and the answers pass through unchanged.
func ShapeServerErrors(ln net.Listener) net.Listener {
	return shapingListener{ln}
}

type shapingListener struct{ net.Listener }

func (l shapingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return shapingConn{c}, nil
}

type shapingConn struct{ net.Conn }

// Write rewrites an answer of net/http's own, which it always writes in one
// call, and passes everything else on.
func (c shapingConn) Write(b []byte) (int, error) {
	code, text, ok := parseServerError(b)
	if !ok {
		return c.Conn.Write(b)
	}
	if _, err := c.Conn.Write(shapedServerError(code, text)); err != nil {
		return 0, err
	}
	return len(b), nil
}

// CloseWrite keeps net/http's graceful close after a 431, which half-closes
// the connection and lingers so that a client still sending its headers
// reads the answer rather than a reset.
func (c shapingConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// serverErrorHeaders follow the status line of every answer net/http writes
// itself. A handler's response never has them there: net/http writes a
// handler's own headers first, sorted (here always X-Request-Id), then Date.
const serverErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

// parseServerError recognises exactly the answers of net/http's conn.serve:
//
//	HTTP/1.1 431 Request Header Fields Too Large<headers>431 Request Header Fields Too Large
//	HTTP/1.1 400 Bad Request<headers>400 Bad Request
//	HTTP/1.1 400 Bad Request: missing required Host header<headers>400 Bad Request: missing required Host header
//	HTTP/1.1 501 Not Implemented<headers>Unsupported transfer encoding
//
// and returns the status and net/http's explanation ("missing required Host
// header"; "" when there is none).
func parseServerError(b []byte) (code int, text string, ok bool) {
	if len(b) > 512 { // the longest is under 200 bytes; spare big writes the search
		return 0, "", false
	}
	rest, ok := bytes.CutPrefix(b, []byte("HTTP/1.1 "))
	if !ok {
		return 0, "", false
	}
	status, body, ok := bytes.Cut(rest, []byte(serverErrorHeaders))
	if !ok || len(status) < 5 || status[3] != ' ' || bytes.ContainsAny(status, "\r\n") {
		return 0, "", false
	}
	code, err := strconv.Atoi(string(status[:3]))
	if err != nil || code < 400 || code > 599 {
		return 0, "", false
	}
	reason := http.StatusText(code)
	text, ok = strings.CutPrefix(string(status[4:]), reason)
	if !ok || text != "" && !strings.HasPrefix(text, ": ") {
		return 0, "", false
	}
	text = strings.TrimPrefix(text, ": ")
	switch {
	case bytes.Equal(body, status):
	case code == http.StatusNotImplemented && string(body) == "Unsupported transfer encoding":
		text = "unsupported transfer encoding"
	default:
		return 0, "", false
	}
	return code, text, true
}

// shapedServerError is the answer for code in the error shape, under a new
// request id (the request was never read far enough to have one).
func shapedServerError(code int, text string) []byte {
	id := uuid.NewString()
	var body bytes.Buffer
	enc := json.NewEncoder(&body)
	enc.SetEscapeHTML(false)
	errCode, message := serverErrorCode(code, text)
	_ = enc.Encode(errorBody{Error: errorJSON{Code: errCode, Message: message, RequestID: id}})
	var out bytes.Buffer
	fmt.Fprintf(&out, "HTTP/1.1 %d %s\r\nConnection: close\r\nContent-Length: %d\r\nContent-Type: application/json\r\nX-Request-Id: %s\r\n\r\n",
		code, http.StatusText(code), body.Len(), id)
	out.Write(body.Bytes())
	return out.Bytes()
}

// serverErrorCode is the error table of the answers net/http gives itself.
// text is net/http's fixed wording, never the client's bytes, so it may be
// shown.
func serverErrorCode(code int, text string) (string, string) {
	switch {
	case code == http.StatusBadRequest && text == "":
		return "malformed_request", "The request is not well-formed HTTP."
	case code == http.StatusBadRequest:
		return "malformed_request", "The request is not well-formed HTTP: " + text + "."
	case code == http.StatusRequestHeaderFieldsTooLarge:
		return "request_header_fields_too_large", "The request's header fields are too large."
	case code == http.StatusNotImplemented:
		return "not_implemented", "The request's Transfer-Encoding is not supported."
	case code == http.StatusHTTPVersionNotSupported:
		return "http_version_not_supported", "The HTTP version is not supported; use HTTP/1.1."
	case code < 500:
		return "malformed_request", "The request could not be read: " + strings.ToLower(http.StatusText(code)) + "."
	}
	return "internal", "An unexpected error occurred; quote the request id when reporting it."
}
