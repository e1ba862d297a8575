package openapitest

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// NewTransport wraps base (nil = http.DefaultTransport) so that every request
// sent and every response received is validated against the document; any
// violation is reported with t.Errorf naming the operation, the direction and
// kin-openapi's message. Request bodies remain readable by the server
// (buffered and restored), response bodies readable by the caller.
//
// A request is validated only when the server accepted it (2xx): tests send
// malformed requests on purpose and expect 4xx. Every response is validated
// against the operation's response for its status, which must be listed,
// headers included (a 304 too, which must have no body); a request to a path
// the document lacks must be answered 404 in the Error shape, and one with a
// method the path lacks 405 with Allow naming the path's methods. A HEAD is
// checked as the GET of its path, without a body. Authentication is left to
// the server: tests send bad tokens on purpose. An invalid document fails
// the test at once.
func NewTransport(t testing.TB, doc []byte, base http.RoundTripper) http.RoundTripper {
	t.Helper()
	s, err := loadSpec(doc)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if base == nil {
		base = http.DefaultTransport
	}
	return &validatingTransport{t: t, spec: s, base: base}
}

// NewClient returns an *http.Client using NewTransport.
func NewClient(t testing.TB, doc []byte) *http.Client {
	t.Helper()
	return &http.Client{Transport: NewTransport(t, doc, nil)}
}

type validatingTransport struct {
	t    testing.TB
	spec *spec
	base http.RoundTripper
}

// RoundTrip sends a copy of req whose body is a buffer of the original, then
// checks the exchange once the whole response body is read.
func (v *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	reqBody, err := drain(req.Body)
	if err != nil {
		return nil, fmt.Errorf("openapitest: reading the request body: %w", err)
	}
	out := req.Clone(req.Context())
	if req.Body != nil {
		out.Body = bodyOf(reqBody)
		out.GetBody = func() (io.ReadCloser, error) { return bodyOf(reqBody), nil }
	}
	resp, err := v.base.RoundTrip(out)
	if err != nil {
		return nil, err
	}
	respBody, err := drain(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("openapitest: reading the response body: %w", err)
	}
	resp.Body = bodyOf(respBody)
	for _, problem := range v.spec.check(req, reqBody, resp, respBody) {
		v.t.Errorf("openapitest: %s", problem)
	}
	return resp, nil
}

// drain reads and closes body, which may be nil.
func drain(body io.ReadCloser) ([]byte, error) {
	if body == nil {
		return nil, nil
	}
	defer body.Close()
	return io.ReadAll(body)
}

func bodyOf(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }
