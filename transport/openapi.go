package transport

import _ "embed"

// openAPIDocument is the service's OpenAPI 3.1 contract, served verbatim at
// GET /v1/openapi.yaml and used by the contract tests. It is a string so that
// no caller can alter it: OpenAPIDocument hands out copies.
//
//go:embed openapi.yaml
var openAPIDocument string

// OpenAPIDocument returns the embedded OpenAPI document (YAML).
func OpenAPIDocument() []byte { return []byte(openAPIDocument) }
