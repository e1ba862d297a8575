package bench

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// rawConn is one HTTP/1.1 keep-alive connection of the load generator.
//
// The measured phases used net/http's client at first. On this machine it
// costs about 100 µs of CPU a request (two goroutines per connection, header
// maps, a context per request), against pgbench's 18 µs a transaction, and
// the load generator shares the 2 cores with the service it measures: every
// microsecond it spends is taken from the service. A request here is built
// by appending into a reused buffer and sent in one write; the answer is
// read by its Content-Length (or its chunks) into another reused buffer.
// Only what the harness needs is supported: no redirects, no 1xx, no
// trailers kept, no compression (none is asked for).
type rawConn struct {
	conn  net.Conn
	r     *bufio.Reader
	req   []byte // the request being written
	body  []byte // the last answer's body
	close bool   // the server said Connection: close
}

// requestTimeout bounds one request on a raw connection, as http.Client's
// Timeout did.
const requestTimeout = 30 * time.Second

func dialRaw(addr string) (*rawConn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// request is what a rawConn sends.
type request struct {
	method, path, host, auth, idemKey string
	body                              []byte
}

// roundTrip sends req and reads the answer: its status, and its body in
// rc.body (valid until the next round trip).
func (rc *rawConn) roundTrip(req request) (status int, err error) {
	if err := rc.conn.SetDeadline(time.Now().Add(requestTimeout)); err != nil {
		return 0, err
	}
	rc.req = appendRequest(rc.req[:0], req)
	if _, err := rc.conn.Write(rc.req); err != nil {
		return 0, err
	}
	status, length, chunked, err := rc.readHead()
	if err != nil {
		return 0, err
	}
	switch {
	case status == 204 || status == 304:
		rc.body = rc.body[:0]
	case chunked:
		err = rc.readChunks()
	case length >= 0:
		rc.body = grow(rc.body, length)
		_, err = io.ReadFull(rc.r, rc.body)
	default: // neither: the body ends with the connection
		rc.close = true
		rc.body, err = io.ReadAll(rc.r)
	}
	return status, err
}

func appendRequest(b []byte, req request) []byte {
	b = append(b, req.method...)
	b = append(b, ' ')
	b = append(b, req.path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, req.host...)
	b = append(b, "\r\nAuthorization: "...)
	b = append(b, req.auth...)
	b = append(b, "\r\n"...)
	if req.idemKey != "" {
		b = append(b, "Idempotency-Key: "...)
		b = append(b, req.idemKey...)
		b = append(b, "\r\n"...)
	}
	if req.body != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(req.body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	return append(b, req.body...)
}

// readHead reads the status line and the header fields, keeping the three
// that frame the body. length is -1 when there is no Content-Length.
func (rc *rawConn) readHead() (status, length int, chunked bool, err error) {
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return 0, 0, false, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, 0, false, fmt.Errorf("malformed status line %q", line)
	}
	if status, err = strconv.Atoi(string(line[9:12])); err != nil {
		return 0, 0, false, fmt.Errorf("malformed status line %q", line)
	}
	length = -1
	for {
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return 0, 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			return status, length, chunked, nil
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, 0, false, fmt.Errorf("malformed header line %q", line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil || length < 0 {
				return 0, 0, false, fmt.Errorf("malformed Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			rc.close = rc.close || bytes.EqualFold(value, []byte("close"))
		}
	}
}

// readChunks reads a chunked body into rc.body, and the trailer after it.
func (rc *rawConn) readChunks() error {
	rc.body = rc.body[:0]
	for {
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseUint(string(size), 16, 31)
		if err != nil {
			return fmt.Errorf("malformed chunk size %q", line)
		}
		if n == 0 {
			return rc.skipTrailer()
		}
		start := len(rc.body)
		rc.body = grow(rc.body, start+int(n))
		if _, err := io.ReadFull(rc.r, rc.body[start:]); err != nil {
			return err
		}
		if crlf, err := rc.r.ReadSlice('\n'); err != nil || len(bytes.TrimRight(crlf, "\r\n")) != 0 {
			return errors.New("malformed chunk end")
		}
	}
}

func (rc *rawConn) skipTrailer() error {
	for {
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(bytes.TrimRight(line, "\r\n")) == 0 {
			return nil
		}
	}
}

// grow returns b resized to n bytes, keeping its first bytes.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		nb := make([]byte, n, max(n, 2*cap(b)))
		copy(nb, b)
		return nb
	}
	return b[:n]
}
