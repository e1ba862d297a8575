package transport

import (
	"errors"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/invoicing/invoicing/command"
)

func TestDecodePatchMediaTypes(t *testing.T) {
	parse := func(raw []byte) (command.Parsed[string], error) { return command.Parsed[string]{}, nil }
	for _, tc := range []struct {
		contentType string
		ok          bool
	}{
		{"application/merge-patch+json", true},
		{"application/merge-patch+json; charset=utf-8", true},
		{"application/json", true},
		{"Application/JSON; charset=utf-8", true},
		{"application/json-patch+json", false},
		{"text/plain", false},
		{"", false},
	} {
		r := httptest.NewRequest("PATCH", "/", strings.NewReader(`{}`))
		r.Header.Set("Content-Type", tc.contentType)
		_, err := decodePatch(r, 1024, parse)
		if got := err == nil; got != tc.ok || (err != nil && !errors.Is(err, errUnsupportedPatchMediaType)) {
			t.Errorf("Content-Type %q: %v, want ok=%v", tc.contentType, err, tc.ok)
		}
	}
}
