package transport_test

import (
	"slices"
	"testing"

	"github.com/invoicing/invoicing/transport"
	"github.com/invoicing/invoicing/transport/openapitest"
)

func TestRouterAndDocumentListTheSameOperations(t *testing.T) {
	routed, err := transport.Operations()
	if err != nil {
		t.Fatal(err)
	}
	documented, err := openapitest.Operations(transport.OpenAPIDocument())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(routed)
	slices.Sort(documented)
	for _, op := range routed {
		if !slices.Contains(documented, op) {
			t.Errorf("%s is routed but not in the OpenAPI document", op)
		}
	}
	for _, op := range documented {
		if !slices.Contains(routed, op) {
			t.Errorf("%s is in the OpenAPI document but not routed", op)
		}
	}
	if len(routed) != 14 {
		t.Errorf("%d operations routed, want 14: %v", len(routed), routed)
	}
}
