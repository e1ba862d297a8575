package transport_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/openapitest"
)

// TestRouterAndDocumentListTheSameOperations holds the route table to the
// document: the same operations, plus a HEAD route for every GET (the
// document lists GETs only; HEAD answers as GET does, without the body).
func TestRouterAndDocumentListTheSameOperations(t *testing.T) {
	routed, err := transport.Operations()
	if err != nil {
		t.Fatal(err)
	}
	documented, err := openapitest.Operations(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	want := slices.Clone(documented)
	for _, op := range documented {
		if path, ok := strings.CutPrefix(op, "GET "); ok {
			want = append(want, "HEAD "+path)
		}
	}
	slices.Sort(routed)
	slices.Sort(want)
	for _, op := range routed {
		if !slices.Contains(want, op) {
			t.Errorf("%s is routed but not in the OpenAPI document", op)
		}
	}
	for _, op := range want {
		if !slices.Contains(routed, op) {
			t.Errorf("%s is in the OpenAPI document (HEAD: for its GET) but not routed", op)
		}
	}
	if len(documented) != 40 || len(routed) != 60 {
		t.Errorf("%d operations documented (want 40), %d routed (want 60 with HEAD): %v", len(documented), len(routed), routed)
	}
}
