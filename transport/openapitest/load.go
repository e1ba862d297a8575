// Package openapitest checks HTTP traffic against the service's OpenAPI
// document in tests: an http.RoundTripper that validates every request the
// server accepted and every response it sent, and the list of the document's
// operations for the router-versus-document test.
//
// It uses kin-openapi, which validates OpenAPI 3.1 documents natively: type
// arrays such as `type: [string, "null"]` are honoured both by its JSON
// Schema 2020-12 validator and by its older validator, to which it falls
// back for schemas holding `$ref`s. The document is loaded as written: its
// patterns are kept within what both ECMA-262 and Go's RE2 understand (no
// look-around), so no copy of it is adapted for the tests.
package openapitest

import (
	"context"
	"crypto/sha256"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// spec is a loaded, validated document with what validation needs.
type spec struct {
	doc     *openapi3.T
	router  routers.Router
	options *openapi3filter.Options
	// schemaOptions are the options the filter adds for a 3.1 document,
	// for validating a body against a named schema outside of a route.
	schemaOptions []openapi3.SchemaValidationOption
}

type cacheEntry struct {
	once sync.Once
	spec *spec
	err  error
}

// cache holds one loaded spec per document content, so that every test of a
// run shares one load (loading and validating takes tens of milliseconds).
var cache sync.Map // [sha256.Size]byte -> *cacheEntry

// loadSpec returns the spec of doc, loading it on first use.
func loadSpec(doc []byte) (*spec, error) {
	v, _ := cache.LoadOrStore(sha256.Sum256(doc), &cacheEntry{})
	e := v.(*cacheEntry)
	e.once.Do(func() { e.spec, e.err = newSpec(doc) })
	return e.spec, e.err
}

func newSpec(data []byte) (*spec, error) {
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("openapitest: loading the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background(), openapi3.EnableMultiError()); err != nil {
		return nil, fmt.Errorf("openapitest: the OpenAPI document is invalid: %w", err)
	}
	// Route by path alone: servers name deployments, while tests talk to
	// httptest servers on random ports.
	doc.Servers = nil
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("openapitest: routing the OpenAPI document: %w", err)
	}
	// The documents the API serves besides JSON: their bodies are checked
	// as the strings the document declares.
	openapi3filter.RegisterBodyDecoder("application/xml", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/pdf", openapi3filter.FileBodyDecoder)
	formats := openapi3.WithStringFormatValidators(formatValidators())
	options := &openapi3filter.Options{
		// Tests send bad tokens on purpose; the server, not this helper,
		// judges authentication.
		AuthenticationFunc:                openapi3filter.NoopAuthenticationFunc,
		IncludeResponseStatus:             true,
		MultiError:                        true,
		SkipSettingDefaults:               true,
		RejectWhenRequestBodyNotSpecified: true,
		SchemaValidationOptions:           []openapi3.SchemaValidationOption{formats},
	}
	schemaOptions := []openapi3.SchemaValidationOption{formats}
	if doc.IsOpenAPI31OrLater() {
		schemaOptions = append(schemaOptions, openapi3.EnableJSONSchema2020())
	}
	return &spec{doc: doc, router: router, options: options, schemaOptions: schemaOptions}, nil
}

// Operations lists "METHOD /path/template" for every operation in the
// document (for the router-vs-document test), sorted. HEAD is not among
// them: the document lists GETs, each of which the server answers to HEAD
// as well.
func Operations(doc []byte) ([]string, error) {
	s, err := loadSpec(doc)
	if err != nil {
		return nil, err
	}
	var ops []string
	for path, item := range s.doc.Paths.Map() {
		for method := range item.Operations() {
			ops = append(ops, strings.ToUpper(method)+" "+path)
		}
	}
	slices.Sort(ops)
	return ops, nil
}

// schemaNamed returns the component schema called name.
func (s *spec) schemaNamed(name string) (*openapi3.Schema, error) {
	ref := s.doc.Components.Schemas[name]
	if ref == nil || ref.Value == nil {
		return nil, fmt.Errorf("openapitest: the document has no schema %q", name)
	}
	return ref.Value, nil
}
