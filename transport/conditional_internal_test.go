package transport

import "testing"

func TestNoneMatchFollowsRFC9110(t *testing.T) {
	const tag = `W/"a1.2"`
	tests := []struct {
		name   string
		fields []string
		want   bool
	}{
		{"no field", nil, false},
		{"the same weak tag", []string{`W/"a1.2"`}, true},
		{"the strong form matches by weak comparison", []string{`"a1.2"`}, true},
		{"another version", []string{`W/"a1.1"`}, false},
		{"a star", []string{`*`}, true},
		{"in a list", []string{`"x", W/"a1.2" , "y"`}, true},
		{"in a second field", []string{`"x"`, `W/"a1.2"`}, true},
		{"a list without it", []string{`"x", W/"y"`}, false},
		{"empty elements are skipped", []string{`, ,W/"a1.2"`}, true},
		{"a lowercase w/ is not weak", []string{`w/"a1.2"`}, false},
		{"unquoted", []string{`a1.2`}, false},
		{"a malformed element ends the list", []string{`"x" junk, W/"a1.2"`}, false},
		{"an unterminated tag", []string{`W/"a1.2`}, false},
		{"a space inside a tag", []string{`"a1 .2"`}, false},
		{"empty", []string{``}, false},
	}
	for _, tt := range tests {
		if got := noneMatch(tt.fields, tag); got != tt.want {
			t.Errorf("%s: noneMatch(%q) = %v, want %v", tt.name, tt.fields, got, tt.want)
		}
		// If-Match reads the same lists the same way (RFC 9110 §13.1.1):
		// the write goes ahead exactly when If-None-Match would match.
		if got := ifMatch(tt.fields).Holds("a1", 2); got != tt.want {
			t.Errorf("%s: ifMatch(%q).Holds = %v, want %v", tt.name, tt.fields, got, tt.want)
		}
	}
}

func TestIfMatchParsesTheList(t *testing.T) {
	p := ifMatch([]string{`"a", W/"b.1"`, `"c"`})
	if p.Any || len(p.Tags) != 3 || p.Tags[0] != `"a"` || p.Tags[1] != `"b.1"` || p.Tags[2] != `"c"` {
		t.Errorf("ifMatch = %+v", p)
	}
	if p := ifMatch([]string{`*`}); !p.Any {
		t.Errorf("ifMatch(*) = %+v, want Any", p)
	}
}

func TestETagNamesIDAndVersion(t *testing.T) {
	if got := etag("0190a0c0-0000-7000-8000-000000000000", 3); got != `W/"0190a0c0-0000-7000-8000-000000000000.3"` {
		t.Errorf("etag = %s", got)
	}
}

func TestBearerChallenge(t *testing.T) {
	for header, want := range map[string]string{
		"":                   `Bearer realm="invoicing"`,
		"Basic dXNlcjpwYXNz": `Bearer realm="invoicing"`,
		"Bearer":             `Bearer realm="invoicing"`,
		"Bearer   ":          `Bearer realm="invoicing"`,
		"bearer not.a.jwt":   `Bearer realm="invoicing", error="invalid_token", error_description="The access token is malformed, expired or not issued for this service."`,
		"Bearer a b":         `Bearer realm="invoicing", error="invalid_token", error_description="The access token is malformed, expired or not issued for this service."`,
	} {
		if got := bearerChallenge(header); got != want {
			t.Errorf("bearerChallenge(%q) = %s, want %s", header, got, want)
		}
	}
}
