package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/invoicing/invoicing/events"
)

// CanonicalJSON re-encodes a JSON value in the JSON Canonicalization Scheme
// (RFC 8785): no insignificant white space, object members sorted by the
// UTF-16 code units of their names, strings with only the escapes
// ECMAScript's JSON.stringify makes, numbers as ECMAScript prints them. Two
// encodings of the same value give the same bytes, so an auditor can
// recompute a hash from parsed JSON in any language.
func CanonicalJSON(raw []byte) ([]byte, error) {
	return appendCanonicalJSON(make([]byte, 0, len(raw)), raw)
}

// appendCanonicalJSON appends the canonical form of raw to out.
func appendCanonicalJSON(out, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		var v any
		return nil, fmt.Errorf("canonical JSON: %w", json.Unmarshal(raw, &v))
	}
	c := canonicalizer{src: raw, out: out}
	if _, err := c.value(c.space(0)); err != nil {
		return nil, err
	}
	return c.out, nil
}

// canonicalizer writes the canonical form of valid JSON as it reads it, in
// one pass, without building a tree. An object's member values are written
// in document order, each value's output span noted with its name; once the
// object is read, the spans are put in name order (moved through scratch).
// The audit chain canonicalises every event, so this runs once per event
// appended and once per event a verifier reads; decoding into
// map[string]any and writing that out cost four times as much as the first
// streaming version, which in turn rescanned each nested value once per
// level to sort members before writing them, and cost 2.5 times this one.
//
// src has passed json.Valid, so scanning it needs no checks. Where a
// value's meaning is not its bytes (strings with escapes or invalid UTF-8,
// numbers other than plain integers), encoding/json decodes it, so the
// result is what decoding the whole document would give; duplicate names
// keep their last value, as a map would.
type canonicalizer struct {
	src, out, scratch []byte
	members           []member // a stack: each open object's, innermost last
}

// member is an object member: its decoded name, and where its canonical
// value was written in out.
type member struct {
	name       []byte
	start, end int
}

func (c *canonicalizer) value(i int) (int, error) {
	switch c.src[i] {
	case '{':
		return c.object(i)
	case '[':
		return c.array(i)
	case '"':
		return c.stringValue(i)
	case 't':
		c.out = append(c.out, "true"...)
		return i + len("true"), nil
	case 'f':
		c.out = append(c.out, "false"...)
		return i + len("false"), nil
	case 'n':
		c.out = append(c.out, "null"...)
		return i + len("null"), nil
	}
	end := c.scalarEnd(i)
	if lit := c.src[i:end]; plainInteger(lit) {
		c.out = append(c.out, lit...)
		return end, nil
	}
	var err error
	c.out, err = appendCanonicalNumber(c.out, json.Number(c.src[i:end]))
	return end, err
}

// stringValue writes the string at src[i]: as it is when it has no escape
// and is valid UTF-8 (json.Valid leaves no control character or quote
// unescaped in it), else decoded and escaped canonically.
func (c *canonicalizer) stringValue(i int) (int, error) {
	s, end, err := c.str(i)
	if err == nil && s == nil {
		c.out = append(c.out, c.src[i:end]...)
		return end, nil
	}
	c.out = appendCanonicalString(c.out, s)
	return end, err
}

func (c *canonicalizer) array(i int) (int, error) {
	c.out = append(c.out, '[')
	i = c.space(i + 1)
	for first := true; c.src[i] != ']'; first = false {
		if !first {
			c.out = append(c.out, ',')
			i = c.space(i + 1) // past the comma
		}
		var err error
		if i, err = c.value(i); err != nil {
			return i, err
		}
		i = c.space(i)
	}
	c.out = append(c.out, ']')
	return i + 1, nil
}

func (c *canonicalizer) object(i int) (int, error) {
	base, start := len(c.members), len(c.out)
	defer func() { c.members = c.members[:base] }()
	i = c.space(i + 1)
	for c.src[i] != '}' {
		if c.src[i] == ',' {
			i = c.space(i + 1)
		}
		name, end, err := c.name(i)
		if err != nil {
			return end, err
		}
		i = c.space(c.space(end) + 1) // past the colon
		m := member{name: name, start: len(c.out)}
		if i, err = c.value(i); err != nil {
			return i, err
		}
		m.end = len(c.out)
		c.members = append(c.members, m)
		i = c.space(i)
	}
	c.writeMembers(start, c.members[base:])
	return i + 1, nil
}

// writeMembers replaces the member values written from out[start:] with
// the object: its members sorted by name, the last of equal names kept.
func (c *canonicalizer) writeMembers(start int, members []member) {
	slices.SortStableFunc(members, func(x, y member) int { return compareUTF16(x.name, y.name) })
	c.scratch = append(c.scratch[:0], c.out[start:]...)
	c.out = append(c.out[:start], '{')
	for k, m := range members {
		if k+1 < len(members) && bytes.Equal(members[k+1].name, m.name) {
			continue // a later member of the same name wins
		}
		if c.out[len(c.out)-1] != '{' {
			c.out = append(c.out, ',')
		}
		c.out = appendCanonicalString(c.out, m.name)
		c.out = append(c.out, ':')
		c.out = append(c.out, c.scratch[m.start-start:m.end-start]...)
	}
	c.out = append(c.out, '}')
}

// name returns the decoded member name at src[i] and the index after it.
func (c *canonicalizer) name(i int) ([]byte, int, error) {
	s, end, err := c.str(i)
	if s == nil && err == nil {
		return c.src[i+1 : end-1], end, nil
	}
	return s, end, err
}

// str returns the index after the string at src[i] and, if its bytes are
// not its value (an escape, or invalid UTF-8), its decoded value; nil
// otherwise.
func (c *canonicalizer) str(i int) ([]byte, int, error) {
	end, escaped := c.stringEnd(i)
	if !escaped && utf8.Valid(c.src[i+1:end-1]) {
		return nil, end, nil
	}
	var s string
	if err := json.Unmarshal(c.src[i:end], &s); err != nil {
		return nil, end, fmt.Errorf("canonical JSON: %w", err)
	}
	return append([]byte{}, s...), end, nil
}

// stringEnd returns the index after the string at src[i] and whether it
// holds an escape.
func (c *canonicalizer) stringEnd(i int) (end int, escaped bool) {
	for j := i + 1; ; j++ {
		switch c.src[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
}

// scalarEnd returns the index after the number or literal at src[i].
func (c *canonicalizer) scalarEnd(i int) int {
	for ; i < len(c.src); i++ {
		switch c.src[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
	}
	return i
}

// space returns the index of the first byte at or after i that is not
// JSON white space.
func (c *canonicalizer) space(i int) int {
	for i < len(c.src) && (c.src[i] == ' ' || c.src[i] == '\t' || c.src[i] == '\n' || c.src[i] == '\r') {
		i++
	}
	return i
}

// plainInteger reports whether a number literal is an integer that
// ECMAScript prints exactly as written: no sign but a minus, no fraction or
// exponent, not -0, and at most 15 digits (below 2^53, so exact).
func plainInteger(lit []byte) bool {
	digits := bytes.TrimPrefix(lit, []byte("-"))
	if len(digits) == 0 || len(digits) > 15 || (len(digits) > 1 && digits[0] == '0') || string(lit) == "-0" {
		return false
	}
	for _, d := range digits {
		if d < '0' || d > '9' {
			return false
		}
	}
	return true
}

// compareUTF16 orders member names by their UTF-16 code units. For ASCII
// names, all the service writes, that is byte order, compared without
// converting anything.
func compareUTF16(x, y []byte) int {
	if isASCII(x) && isASCII(y) {
		return bytes.Compare(x, y)
	}
	return slices.Compare(utf16.Encode([]rune(string(x))), utf16.Encode([]rune(string(y))))
}

func isASCII(s []byte) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plainString reports whether s is valid UTF-8 with nothing to escape: it
// is then written as it is.
func plainString[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.ValidString(string(s))
}

// appendCanonicalString escapes what JSON.stringify escapes: the quote, the
// backslash and the C0 controls (short forms where they exist, else \u00xx
// in lower case); everything else is written as UTF-8.
func appendCanonicalString[T string | []byte](b []byte, s T) []byte {
	b = append(b, '"')
	if plainString(s) {
		return append(append(b, s...), '"')
	}
	for _, r := range string(s) {
		switch r {
		case '"':
			b = append(b, `\"`...)
		case '\\':
			b = append(b, `\\`...)
		case '\b':
			b = append(b, `\b`...)
		case '\f':
			b = append(b, `\f`...)
		case '\n':
			b = append(b, `\n`...)
		case '\r':
			b = append(b, `\r`...)
		case '\t':
			b = append(b, `\t`...)
		default:
			if r < 0x20 {
				b = fmt.Appendf(b, `\u%04x`, r)
			} else {
				b = utf8.AppendRune(b, r)
			}
		}
	}
	return append(b, '"')
}

// appendCanonicalNumber prints a number as ECMAScript's Number.toString does
// (RFC 8785 §3.2.2.3): integers up to 1e21 in full, others in the shortest
// form that reads back to the same double.
func appendCanonicalNumber(b []byte, n json.Number) ([]byte, error) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return b, fmt.Errorf("canonical JSON: number %s is not a finite double", n)
	}
	if f == 0 {
		return append(b, '0'), nil // also -0
	}
	digits, exp := shortestDigits(f)
	if f < 0 {
		b = append(b, '-')
	}
	return append(b, ecmaNumber(digits, exp)...), nil
}

// shortestDigits returns the shortest decimal digits d1d2…dk of |f| and the
// exponent n such that |f| = 0.d1d2…dk × 10^n.
func shortestDigits(f float64) (string, int) {
	s := strconv.FormatFloat(math.Abs(f), 'e', -1, 64) // d.ddde±x
	mantissa, expText, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expText) // FormatFloat always writes a valid exponent
	return strings.Replace(mantissa, ".", "", 1), exp + 1
}

// ecmaNumber lays out digits with decimal exponent n as ECMAScript does.
func ecmaNumber(digits string, n int) string {
	k := len(digits)
	switch {
	case k <= n && n <= 21:
		return digits + strings.Repeat("0", n-k)
	case 0 < n && n <= 21:
		return digits[:n] + "." + digits[n:]
	case -6 < n && n <= 0:
		return "0." + strings.Repeat("0", -n) + digits
	}
	e := n - 1
	sign := "+"
	if e < 0 {
		sign, e = "-", -e
	}
	if k == 1 {
		return digits + "e" + sign + strconv.Itoa(e)
	}
	return digits[:1] + "." + digits[1:] + "e" + sign + strconv.Itoa(e)
}

// FormatRecordedAt is how a recorded time is written wherever auditors read
// it (exports, the chain's canonical form): UTC, RFC 3339, fraction trimmed.
func FormatRecordedAt(t time.Time) string {
	return t.UTC().Format(time.RFC3339Nano)
}

// CanonicalEvent returns the bytes of an event that the audit chain hashes:
// the canonical JSON (RFC 8785) of the object
//
//	{"data": …, "id": "<uuid>", "metadata": …, "recorded_at": "<RFC 3339>",
//	 "revision": <n>, "stream": "…", "type": "…"}
//
// with data and metadata as the JSON values the event holds and recorded_at
// as FormatRecordedAt writes it. Every field an export line shows is
// covered, so the export alone lets anyone recompute it.
func CanonicalEvent(ev events.RecordedEvent) ([]byte, error) {
	// data, metadata and the rest of the envelope: about 200 bytes.
	b := make([]byte, 0, len(ev.Data)+len(ev.Metadata)+256)
	b = append(b, `{"data":`...)
	b, err := appendCanonicalJSON(b, rawOrNull(ev.Data))
	if err == nil {
		b = append(b, `,"id":`...)
		b = appendCanonicalString(b, uuid.UUID(ev.ID).String())
		b = append(b, `,"metadata":`...)
		b, err = appendCanonicalJSON(b, rawOrEmpty(ev.Metadata))
	}
	if err == nil {
		b, err = appendEnvelopeTail(b, ev)
	}
	if err != nil {
		return nil, fmt.Errorf("canonical event %s@%d: %w", ev.Stream, ev.Revision, err)
	}
	return b, nil
}

// appendEnvelopeTail writes the envelope's members after metadata in their
// canonical order (recorded_at, revision, stream, type: ASCII names,
// sorted; data, id and metadata come before them), around data and
// metadata already in canonical form: the event's data is parsed once, not
// once more as part of the envelope.
func appendEnvelopeTail(b []byte, ev events.RecordedEvent) ([]byte, error) {
	b = append(b, `,"recorded_at":`...)
	b = appendCanonicalString(b, FormatRecordedAt(ev.RecordedAt))
	b = append(b, `,"revision":`...)
	b, err := appendCanonicalNumber(b, json.Number(strconv.FormatUint(ev.Revision, 10)))
	b = append(b, `,"stream":`...)
	b = appendCanonicalString(b, ev.Stream)
	b = append(b, `,"type":`...)
	b = appendCanonicalString(b, ev.Type)
	return append(b, '}'), err
}

func rawOrNull(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage(`null`)
	}
	return m
}

func rawOrEmpty(m json.RawMessage) json.RawMessage {
	if len(m) == 0 {
		return json.RawMessage(`{}`)
	}
	return m
}
