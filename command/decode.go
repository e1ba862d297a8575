package command

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// ErrMalformedBody means a request body is not one well-formed JSON object
// this service can read without guessing: a syntax error, trailing data, a
// key given twice, a lone UTF-16 surrogate escape, or bytes that are not
// UTF-8.
var ErrMalformedBody = errors.New("the body must be one well-formed JSON object")

// MalformedBodyError says where and why a body is malformed. Path is empty
// when the problem is not at one field (a syntax error, trailing data).
type MalformedBodyError struct {
	Violations []Violation
	Reason     string
}

func (e *MalformedBodyError) Error() string {
	if len(e.Violations) == 0 {
		return ErrMalformedBody.Error() + ": " + e.Reason
	}
	return ErrMalformedBody.Error() + ": " + (&ValidationError{Violations: e.Violations}).Error()
}

// Unwrap makes errors.Is(err, ErrMalformedBody) hold.
func (e *MalformedBodyError) Unwrap() error { return ErrMalformedBody }

// maxBodyDepth bounds nesting; no request of this API nests deeper than 4.
const maxBodyDepth = 32

// decodeObject decodes a request body into the generic form the Parse
// functions validate, keeping numbers as json.Number so that they are seen
// exactly. Unlike encoding/json it refuses what it would otherwise resolve
// silently: duplicate keys (encoding/json keeps the last) and lone surrogate
// escapes such as "\ud800" (encoding/json stores U+FFFD, text the client
// never sent), each reported at its path.
//
// A body holding neither is decoded by encoding/json in one call
// (decodePlain): walking its tokens one by one, which finds the paths of
// what is refused, took ten times as long, and every write request's body
// goes through here. Any other body is walked.
func decodeObject(raw []byte) (map[string]any, error) {
	if !utf8.Valid(raw) {
		return nil, &MalformedBodyError{Reason: "the body is not valid UTF-8"}
	}
	if obj, ok := decodePlain(raw); ok {
		return obj, nil
	}
	return walkObject(raw)
}

// decodePlain decodes raw with encoding/json when the result is what
// walkObject would return: one object and nothing after it, nested no
// deeper than maxBodyDepth, without a lone surrogate escape, and with as
// many members decoded as there are in the text (fewer: a key was given
// twice). ok is false for every other body, which walkObject then words.
func decodePlain(raw []byte) (obj map[string]any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&obj); err != nil || obj == nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	// raw is one JSON value now, which the scans below rely on.
	members, depth, uEscapes := shape(raw)
	if depth > maxBodyDepth || (uEscapes && hasLoneSurrogate(raw)) || countMembers(obj) != members {
		return nil, false
	}
	return obj, true
}

// shape counts the members of every object in raw, one well-formed JSON
// value (a colon outside a string is a member's), says how deeply its
// objects and arrays nest, and whether a string holds a \u escape (only
// those can be lone surrogates).
func shape(raw []byte) (members, depth int, uEscapes bool) {
	inString, nesting := false, 0
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString && c == '\\':
			i++ // the escaped character, a quote or a backslash too
			uEscapes = uEscapes || raw[i] == 'u'
		case c == '"':
			inString = !inString
		case inString:
		case c == ':':
			members++
		case c == '{' || c == '[':
			nesting++
			depth = max(depth, nesting)
		case c == '}' || c == ']':
			nesting--
		}
	}
	return members, depth, uEscapes
}

// countMembers counts the members of v's objects, v's own included.
func countMembers(v any) int {
	n := 0
	switch v := v.(type) {
	case map[string]any:
		n = len(v)
		for _, m := range v {
			n += countMembers(m)
		}
	case []any:
		for _, item := range v {
			n += countMembers(item)
		}
	}
	return n
}

// walkObject decodes raw token by token, so that it can say at which path
// a key is given twice or a string holds a lone surrogate escape.
func walkObject(raw []byte) (map[string]any, error) {
	d := &bodyDecoder{dec: json.NewDecoder(bytes.NewReader(raw)), raw: raw}
	d.dec.UseNumber()
	v, err := d.value("", 0)
	if err != nil {
		return nil, &MalformedBodyError{Reason: err.Error()}
	}
	if _, err := d.dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &MalformedBodyError{Reason: "trailing data after the object"}
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return nil, &MalformedBodyError{Reason: fmt.Sprintf("got a JSON %s, want an object", jsonKind(v))}
	}
	if len(d.violations) > 0 {
		return nil, &MalformedBodyError{Violations: d.violations, Reason: "see the paths"}
	}
	return obj, nil
}

// bodyDecoder walks the token stream, keeping the raw text of each string
// token to look at its escapes.
type bodyDecoder struct {
	dec        *json.Decoder
	raw        []byte
	violations []Violation
}

// token returns the next token and the raw bytes it was read from (with any
// separators before it, which hold no backslash).
func (d *bodyDecoder) token() (json.Token, []byte, error) {
	start := d.dec.InputOffset()
	tok, err := d.dec.Token()
	return tok, d.raw[start:d.dec.InputOffset()], err
}

func (d *bodyDecoder) value(path string, depth int) (any, error) {
	tok, raw, err := d.token()
	if err != nil {
		return nil, syntaxError(err)
	}
	if depth > maxBodyDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxBodyDepth)
	}
	switch t := tok.(type) {
	case json.Delim:
		if t == '{' {
			return d.object(path, depth)
		}
		return d.array(path, depth)
	case string:
		d.checkEscapes(path, raw)
	}
	return tok, nil
}

func (d *bodyDecoder) object(path string, depth int) (map[string]any, error) {
	m := map[string]any{}
	for d.dec.More() {
		tok, raw, err := d.token()
		if err != nil {
			return nil, syntaxError(err)
		}
		key, _ := tok.(string) // object keys are always strings
		at := join(path, key)
		d.checkEscapes(at, raw)
		if _, dup := m[key]; dup {
			d.violations = append(d.violations, Violation{Path: at, Message: "is given more than once"})
		}
		if m[key], err = d.value(at, depth+1); err != nil {
			return nil, err
		}
	}
	_, err := d.dec.Token() // '}'
	return m, syntaxError(err)
}

func (d *bodyDecoder) array(path string, depth int) ([]any, error) {
	items := []any{}
	for d.dec.More() {
		v, err := d.value(index(path, len(items)), depth+1)
		if err != nil {
			return nil, err
		}
		items = append(items, v)
	}
	_, err := d.dec.Token() // ']'
	return items, syntaxError(err)
}

func (d *bodyDecoder) checkEscapes(path string, raw []byte) {
	if hasLoneSurrogate(raw) {
		d.violations = append(d.violations, Violation{Path: path,
			Message: "holds a lone UTF-16 surrogate escape (\\uD800 to \\uDFFF not in a high-low pair), which is not text"})
	}
}

// hasLoneSurrogate reports whether the raw JSON string text escapes a UTF-16
// surrogate that is not part of a high-low pair. The decoder has already
// checked the syntax, so every escape is complete.
func hasLoneSurrogate(raw []byte) bool {
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		i++ // the escaped character; a `\\` is skipped whole
		if raw[i] != 'u' {
			continue
		}
		r := hex4(raw[i+1 : i+5])
		i += 4
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if !bytes.HasPrefix(raw[i+1:], []byte(`\u`)) || i+7 > len(raw) {
				return true
			}
			if low := hex4(raw[i+3 : i+7]); low < 0xDC00 || low > 0xDFFF {
				return true
			}
			i += 6
		}
	}
	return false
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		}
	}
	return r
}

// syntaxError words a decoder error for the client, nil for nil.
func syntaxError(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("the body ends before the JSON value does")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "array"
	case string:
		return "string"
	case json.Number:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	}
	return "value"
}
