package openapitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// check returns the violations of the document by one exchange, each naming
// the operation and the direction.
//
// A HEAD request is checked as the GET of the same path, without a body:
// the document lists GETs only, and HEAD answers as GET does. A 304 is
// checked here, as kin-openapi leaves it alone: the operation must list it,
// its headers must match and there is no body. A 405 is checked against
// the path's documented 405 (an Error with Allow), and Allow must list
// exactly the path's documented methods, HEAD with GET.
func (s *spec) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) []string {
	vreq := req.Clone(context.Background())
	vreq.Body = bodyOf(reqBody)
	vreq.ContentLength = int64(len(reqBody))
	head := req.Method == http.MethodHead
	if head {
		vreq.Method = http.MethodGet
	}
	route, pathParams, err := s.router.FindRoute(vreq)
	switch {
	case errors.Is(err, routers.ErrMethodNotAllowed):
		return s.checkMethodNotAllowed(req, resp, respBody)
	case err != nil:
		return s.checkUnrouted(req, resp, respBody)
	}
	name := fmt.Sprintf("%s (%s %s)", route.Operation.OperationID, req.Method, req.URL.Path)
	input := &openapi3filter.RequestValidationInput{
		Request:    vreq,
		PathParams: pathParams,
		Route:      route,
		Options:    s.options,
	}
	var problems []string
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		err := openapi3filter.ValidateRequest(context.Background(), input)
		err = errors.Join(err, undeclaredQuery(route, req))
		if err != nil {
			problems = append(problems, fmt.Sprintf(
				"%s: request violates the document, yet the server answered %d: %v", name, resp.StatusCode, err))
		}
	}
	if resp.StatusCode == http.StatusNotModified {
		err = s.checkNotModified(route, resp, respBody)
	} else {
		err = s.validateResponse(input, resp, respBody, head)
	}
	if head && len(respBody) > 0 {
		err = errors.Join(err, fmt.Errorf("a HEAD response has a body of %d bytes", len(respBody)))
	}
	if err != nil {
		problems = append(problems, fmt.Sprintf(
			"%s: response %d violates the document: %v", name, resp.StatusCode, err))
	}
	return problems
}

// validateResponse checks a response against the operation input names,
// without its body when the request was a HEAD.
func (s *spec) validateResponse(input *openapi3filter.RequestValidationInput, resp *http.Response, body []byte, head bool) error {
	opts := s.options
	if head {
		o := *s.options
		o.ExcludeResponseBody = true
		opts = &o
	}
	rin := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   bodyOf(body),
		Options:                opts,
	}
	return errors.Join(openapi3filter.ValidateResponse(context.Background(), rin), requestIDMismatch(resp, body))
}

// checkNotModified checks a 304: listed by the operation, its headers as
// documented, no body.
func (s *spec) checkNotModified(route *routers.Route, resp *http.Response, body []byte) error {
	ref := route.Operation.Responses.Status(http.StatusNotModified)
	if ref == nil || ref.Value == nil {
		return errors.New("status is not supported")
	}
	err := s.checkHeaders(ref.Value, resp.Header)
	if len(body) > 0 {
		err = errors.Join(err, fmt.Errorf("a 304 has a body of %d bytes", len(body)))
	}
	return err
}

// checkHeaders checks that the documented headers of a response are there
// when required and match their schemas when present.
func (s *spec) checkHeaders(doc *openapi3.Response, got http.Header) error {
	names := make([]string, 0, len(doc.Headers))
	for name := range doc.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	var errs []error
	for _, name := range names {
		h := doc.Headers[name].Value
		values := got.Values(name)
		switch {
		case len(values) == 0 && h.Required:
			errs = append(errs, fmt.Errorf("response header %q missing", name))
		case len(values) > 0 && h.Schema != nil && h.Schema.Value != nil:
			if err := h.Schema.Value.VisitJSON(values[0], s.schemaOptions...); err != nil {
				errs = append(errs, fmt.Errorf("response header %q: %w", name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// checkMethodNotAllowed checks the answer to a documented path asked with
// a method the document does not list for it: the path's 405, whose Allow
// names the path's methods.
func (s *spec) checkMethodNotAllowed(req *http.Request, resp *http.Response, body []byte) []string {
	name := fmt.Sprintf("%s %s (a method the path does not document)", req.Method, req.URL.Path)
	if resp.StatusCode != http.StatusMethodNotAllowed {
		return []string{fmt.Sprintf("%s: response %d; want 405 with Allow", name, resp.StatusCode)}
	}
	route, params := s.anyRoute(req)
	if route == nil {
		return []string{name + ": no documented method routes the path"}
	}
	input := &openapi3filter.RequestValidationInput{Request: route.probe, PathParams: params, Route: route.Route, Options: s.options}
	err := s.validateResponse(input, resp, body, req.Method == http.MethodHead)
	var want []string
	for method := range route.PathItem.Operations() {
		want = append(want, strings.ToUpper(method))
		if strings.EqualFold(method, http.MethodGet) {
			want = append(want, http.MethodHead)
		}
	}
	slices.Sort(want)
	if got := resp.Header.Get("Allow"); got != strings.Join(want, ", ") {
		err = errors.Join(err, fmt.Errorf("header Allow is %q, want the path's methods %q", got, strings.Join(want, ", ")))
	}
	if err != nil {
		return []string{fmt.Sprintf("%s: response 405 violates the document: %v", name, err)}
	}
	return nil
}

// probedRoute is a route found for req's path under another method, and
// the request that found it.
type probedRoute struct {
	*routers.Route
	probe *http.Request
}

// anyRoute finds the route of req's path under any documented method.
func (s *spec) anyRoute(req *http.Request) (*probedRoute, map[string]string) {
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		probe := req.Clone(context.Background())
		probe.Method = m
		probe.Body = http.NoBody
		if route, params, err := s.router.FindRoute(probe); err == nil {
			return &probedRoute{Route: route, probe: probe}, params
		}
	}
	return nil, nil
}

// checkUnrouted checks the answer to a request for a path the document does
// not have: 404 in the Error shape, with an X-Request-Id.
func (s *spec) checkUnrouted(req *http.Request, resp *http.Response, body []byte) []string {
	name := fmt.Sprintf("%s %s (no operation in the document)", req.Method, req.URL.Path)
	if resp.StatusCode != http.StatusNotFound {
		return []string{fmt.Sprintf("%s: response %d; want 404 in the Error shape", name, resp.StatusCode)}
	}
	err := s.validateError(resp, body, req.Method == http.MethodHead)
	if resp.Header.Get("X-Request-Id") == "" {
		err = errors.Join(err, errors.New(`response header "X-Request-Id" missing`))
	}
	if err != nil {
		return []string{fmt.Sprintf("%s: response %d is not an Error: %v", name, resp.StatusCode, err)}
	}
	return nil
}

// validateError checks that body is an application/json document matching
// the Error schema, and that it repeats the X-Request-Id header; for a HEAD,
// only the Content-Type.
func (s *spec) validateError(resp *http.Response, body []byte, head bool) error {
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return fmt.Errorf("Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
	}
	if head {
		return nil
	}
	var value any
	if err := json.Unmarshal(body, &value); err != nil {
		return fmt.Errorf("body is not JSON: %w", err)
	}
	schema, err := s.schemaNamed("Error")
	if err != nil {
		return err
	}
	opts := append(slices.Clip(s.schemaOptions), openapi3.VisitAsResponse(), openapi3.MultiErrors())
	if err := schema.VisitJSON(value, opts...); err != nil {
		return fmt.Errorf("body doesn't match schema #/components/schemas/Error: %w", err)
	}
	return requestIDMismatch(resp, body)
}

// requestIDMismatch reports an error body whose error.request_id differs
// from the X-Request-Id header; the shape itself is the schema's business.
func requestIDMismatch(resp *http.Response, body []byte) error {
	if resp.StatusCode < 400 {
		return nil
	}
	var e struct {
		Error struct {
			RequestID *string `json:"request_id"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || e.Error.RequestID == nil {
		return nil
	}
	if header := resp.Header.Get("X-Request-Id"); *e.Error.RequestID != header {
		return fmt.Errorf("error.request_id %q differs from the X-Request-Id header %q", *e.Error.RequestID, header)
	}
	return nil
}

// undeclaredQuery reports query parameters the operation does not declare,
// which the server must reject (docs/decisions.md: unknown name, 422).
func undeclaredQuery(route *routers.Route, req *http.Request) error {
	var names []string
	for name := range req.URL.Query() {
		if route.Operation.Parameters.GetByInAndName(openapi3.ParameterInQuery, name) == nil &&
			route.PathItem.Parameters.GetByInAndName(openapi3.ParameterInQuery, name) == nil {
			names = append(names, name)
		}
	}
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	return fmt.Errorf("undeclared query parameters %q", names)
}
