package openapitest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"slices"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
)

// check returns the violations of the document by one exchange, each naming
// the operation and the direction.
func (s *spec) check(req *http.Request, reqBody []byte, resp *http.Response, respBody []byte) []string {
	vreq := req.Clone(context.Background())
	vreq.Body = bodyOf(reqBody)
	vreq.ContentLength = int64(len(reqBody))
	route, pathParams, err := s.router.FindRoute(vreq)
	if err != nil {
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
	rin := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: input,
		Status:                 resp.StatusCode,
		Header:                 resp.Header,
		Body:                   bodyOf(respBody),
		Options:                s.options,
	}
	err = errors.Join(openapi3filter.ValidateResponse(context.Background(), rin), requestIDMismatch(resp, respBody))
	if err != nil {
		problems = append(problems, fmt.Sprintf(
			"%s: response %d violates the document: %v", name, resp.StatusCode, err))
	}
	return problems
}

// checkUnrouted checks the answer to a request the document has no operation
// for: 404 or 405, in the Error shape, with an X-Request-Id.
func (s *spec) checkUnrouted(req *http.Request, resp *http.Response, body []byte) []string {
	name := fmt.Sprintf("%s %s (no operation in the document)", req.Method, req.URL.Path)
	if resp.StatusCode != http.StatusNotFound && resp.StatusCode != http.StatusMethodNotAllowed {
		return []string{fmt.Sprintf("%s: response %d; want 404 or 405 in the Error shape", name, resp.StatusCode)}
	}
	err := s.validateError(resp, body)
	if resp.Header.Get("X-Request-Id") == "" {
		err = errors.Join(err, errors.New(`response header "X-Request-Id" missing`))
	}
	if err != nil {
		return []string{fmt.Sprintf("%s: response %d is not an Error: %v", name, resp.StatusCode, err)}
	}
	return nil
}

// validateError checks that body is an application/json document matching
// the Error schema, and that it repeats the X-Request-Id header.
func (s *spec) validateError(resp *http.Response, body []byte) error {
	mediaType, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil || mediaType != "application/json" {
		return fmt.Errorf("Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
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
