package transport

import (
	"net/http"
	"strings"

	"github.com/invoicing/invoicing/command"
)

// Conditional GETs (RFC 9110 §8.8.3, §13.1.2). A single resource carries an
// ETag made of its id and version; a GET or HEAD whose If-None-Match names
// it is answered 304 with no body. Lists carry none (docs/decisions.md).

// etag is the entity tag of a single resource (command.ETag). It is weak:
// it names the resource's version, not the bytes, which a new optional
// field or a rebuilt read model may change while the resource stays the
// same.
func etag(id string, version int) string {
	return command.ETag(id, version)
}

// writeResource answers a GET or HEAD of one resource: 200 with the body and
// its ETag, or 304 and no body when If-None-Match names that ETag.
func writeResource(w http.ResponseWriter, r *http.Request, tag string, body any) {
	w.Header().Set("ETag", tag)
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && noneMatch(r.Header.Values("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	writeJSON(w, http.StatusOK, body)
}

// noneMatch reports whether If-None-Match field values name tag: "*", or a
// list with an entity tag equal to it by weak comparison (the opaque tags
// are equal, W/ or not). A malformed list stops at the first element that
// is not an entity tag, which then matches nothing (as net/http's file
// server does).
func noneMatch(fields []string, tag string) bool {
	want := strings.TrimPrefix(tag, "W/")
	list := strings.Join(fields, ",")
	for {
		list = strings.TrimLeft(list, " \t,")
		if list == "" {
			return false
		}
		if list[0] == '*' {
			return true
		}
		opaque, rest, ok := scanETag(list)
		if !ok {
			return false
		}
		if opaque == want {
			return true
		}
		list = rest
	}
}

// ifMatch parses If-Match field values (RFC 9110 §13.1.1) into the
// precondition a write checks: "*", or the list of entity tags, kept as
// their opaque tags for weak comparison. A malformed list keeps the tags
// before the first element that is not one, as noneMatch reads it; an
// empty or wholly malformed list names no version, so the write fails its
// precondition rather than ignoring a condition the client meant.
func ifMatch(fields []string) *command.Precondition {
	p := &command.Precondition{}
	list := strings.Join(fields, ",")
	for {
		list = strings.TrimLeft(list, " \t,")
		if list == "" {
			return p
		}
		if list[0] == '*' {
			return &command.Precondition{Any: true}
		}
		opaque, rest, ok := scanETag(list)
		if !ok {
			return p
		}
		p.Tags = append(p.Tags, opaque)
		list = rest
	}
}

// scanETag reads one entity tag from the start of s and returns its opaque
// tag (with its quotes, without W/) and what follows it.
func scanETag(s string) (opaque, rest string, ok bool) {
	s = strings.TrimPrefix(s, "W/")
	if len(s) < 2 || s[0] != '"' {
		return "", "", false
	}
	for i := 1; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"':
			return s[:i+1], s[i+1:], true
		case c == 0x21 || c >= 0x23 && c != 0x7f: // etagc, obs-text included
		default:
			return "", "", false
		}
	}
	return "", "", false
}
