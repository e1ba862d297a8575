package auth

import (
	"errors"
	"strings"
	"testing"
)

func TestParseBearer(t *testing.T) {
	tests := []struct {
		name   string
		header string
		want   string // "" means an error wrapping ErrUnauthenticated
	}{
		{"Bearer scheme yields the token", "Bearer abc.def.ghi", "abc.def.ghi"},
		{"the scheme is case-insensitive", "bEaReR abc", "abc"},
		{"surrounding spaces are ignored", "  Bearer   abc  ", "abc"},
		{"a missing header is unauthenticated", "", ""},
		{"a blank header is unauthenticated", "   ", ""},
		{"the scheme alone is garbled", "Bearer", ""},
		{"the scheme and a space is garbled", "Bearer ", ""},
		{"another scheme is garbled", "Basic dXNlcjpwYXNz", ""},
		{"a bare token is garbled", "abc.def.ghi", ""},
		{"a token with spaces is garbled", "Bearer abc def", ""},
		{"a tab instead of a space is garbled", "Bearer\tabc", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseBearer(tt.header)
			if tt.want == "" {
				if !errors.Is(err, ErrUnauthenticated) {
					t.Errorf("ParseBearer(%q) = %q, %v; want ErrUnauthenticated", tt.header, got, err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseBearer(%q) = %q, %v; want %q", tt.header, got, err, tt.want)
			}
		})
	}
}

func FuzzParseBearer(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  x", "", "Basic a", "Bearer a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		token, err := ParseBearer(header)
		if err != nil {
			if !errors.Is(err, ErrUnauthenticated) {
				t.Fatalf("ParseBearer(%q) error %v does not wrap ErrUnauthenticated", header, err)
			}
			return
		}
		if token == "" || strings.ContainsAny(token, " \t") || !strings.Contains(header, token) {
			t.Fatalf("ParseBearer(%q) = %q", header, token)
		}
	})
}
