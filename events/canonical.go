package events

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
)

// CanonicalJSON re-encodes a JSON value in the JSON Canonicalization Scheme
// (RFC 8785): no insignificant white space, object members sorted by the
// UTF-16 code units of their names, strings with only the escapes
// ECMAScript's JSON.stringify makes, numbers as ECMAScript prints them. Two
// encodings of the same value give the same bytes, so an auditor can
// recompute a hash from parsed JSON in any language.
func CanonicalJSON(raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		var v any
		return nil, fmt.Errorf("canonical JSON: %w", json.Unmarshal(raw, &v))
	}
	var b bytes.Buffer
	b.Grow(len(raw))
	c := canonicalizer{src: raw}
	if _, err := c.value(&b, c.space(0)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// canonicalizer writes the canonical form of valid JSON as it reads it,
// without building a tree: only an object's members are collected, to be
// sorted. The audit chain canonicalises every event, so this runs once per
// event appended and once per event a verifier reads; decoding into
// map[string]any and writing that out cost four times as much.
//
// src has passed json.Valid, so scanning it needs no checks. Where a
// value's meaning is not its bytes (strings with escapes or invalid UTF-8,
// numbers other than plain integers), encoding/json decodes it, so the
// result is what decoding the whole document would give; duplicate names
// keep their last value, as a map would.
type canonicalizer struct{ src []byte }

// member is an object member: its decoded name and where its value starts.
type member struct {
	name  string
	value int
}

func (c canonicalizer) value(b *bytes.Buffer, i int) (int, error) {
	switch c.src[i] {
	case '{':
		return c.object(b, i)
	case '[':
		return c.array(b, i)
	case '"':
		s, end, err := c.str(i)
		writeCanonicalString(b, s)
		return end, err
	case 't':
		b.WriteString("true")
		return i + len("true"), nil
	case 'f':
		b.WriteString("false")
		return i + len("false"), nil
	case 'n':
		b.WriteString("null")
		return i + len("null"), nil
	}
	end := c.scalarEnd(i)
	if lit := c.src[i:end]; plainInteger(lit) {
		b.Write(lit)
		return end, nil
	}
	return end, writeCanonicalNumber(b, json.Number(c.src[i:end]))
}

func (c canonicalizer) array(b *bytes.Buffer, i int) (int, error) {
	b.WriteByte('[')
	i = c.space(i + 1)
	for first := true; c.src[i] != ']'; first = false {
		if !first {
			b.WriteByte(',')
			i = c.space(i + 1) // past the comma
		}
		var err error
		if i, err = c.value(b, i); err != nil {
			return i, err
		}
		i = c.space(i)
	}
	b.WriteByte(']')
	return i + 1, nil
}

func (c canonicalizer) object(b *bytes.Buffer, i int) (int, error) {
	members, end, err := c.members(i)
	if err != nil {
		return end, err
	}
	slices.SortStableFunc(members, func(x, y member) int { return compareUTF16(x.name, y.name) })
	b.WriteByte('{')
	for k, m := range members {
		if k+1 < len(members) && members[k+1].name == m.name {
			continue // a later member of the same name wins
		}
		if b.Bytes()[b.Len()-1] != '{' {
			b.WriteByte(',')
		}
		writeCanonicalString(b, m.name)
		b.WriteByte(':')
		if _, err := c.value(b, m.value); err != nil {
			return end, err
		}
	}
	b.WriteByte('}')
	return end, nil
}

// members reads the object at src[i]: its members in document order and
// the index after it.
func (c canonicalizer) members(i int) ([]member, int, error) {
	var out []member
	i = c.space(i + 1)
	for c.src[i] != '}' {
		if c.src[i] == ',' {
			i = c.space(i + 1)
		}
		name, end, err := c.str(i)
		if err != nil {
			return nil, end, err
		}
		i = c.space(c.space(end) + 1) // past the colon
		out = append(out, member{name: name, value: i})
		i = c.space(c.skip(i))
	}
	return out, i + 1, nil
}

// str decodes the string at src[i] and returns the index after it.
func (c canonicalizer) str(i int) (string, int, error) {
	end, escaped := c.stringEnd(i)
	raw := c.src[i+1 : end-1]
	if !escaped && utf8.Valid(raw) {
		return string(raw), end, nil
	}
	var s string
	if err := json.Unmarshal(c.src[i:end], &s); err != nil {
		return "", end, fmt.Errorf("canonical JSON: %w", err)
	}
	return s, end, nil
}

// stringEnd returns the index after the string at src[i] and whether it
// holds an escape.
func (c canonicalizer) stringEnd(i int) (end int, escaped bool) {
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

// skip returns the index after the value at src[i].
func (c canonicalizer) skip(i int) int {
	switch c.src[i] {
	case '"':
		end, _ := c.stringEnd(i)
		return end
	case '{', '[':
		depth := 0
		for j := i; ; j++ {
			switch c.src[j] {
			case '"':
				end, _ := c.stringEnd(j)
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
	}
	return c.scalarEnd(i)
}

// scalarEnd returns the index after the number or literal at src[i].
func (c canonicalizer) scalarEnd(i int) int {
	for i < len(c.src) && !strings.ContainsRune(",}] \t\n\r", rune(c.src[i])) {
		i++
	}
	return i
}

// space returns the index of the first byte at or after i that is not
// JSON white space.
func (c canonicalizer) space(i int) int {
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
func compareUTF16(x, y string) int {
	if isASCII(x) && isASCII(y) {
		return strings.Compare(x, y)
	}
	return slices.Compare(utf16.Encode([]rune(x)), utf16.Encode([]rune(y)))
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// plainString reports whether s is valid UTF-8 with nothing to escape: it
// is then written as it is.
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == '"' || c == '\\' {
			return false
		}
	}
	return utf8.ValidString(s)
}

// writeCanonicalString escapes what JSON.stringify escapes: the quote, the
// backslash and the C0 controls (short forms where they exist, else \u00xx
// in lower case); everything else is written as UTF-8.
func writeCanonicalString(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	if plainString(s) {
		b.WriteString(s)
		b.WriteByte('"')
		return
	}
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// writeCanonicalNumber prints a number as ECMAScript's Number.toString does
// (RFC 8785 §3.2.2.3): integers up to 1e21 in full, others in the shortest
// form that reads back to the same double.
func writeCanonicalNumber(b *bytes.Buffer, n json.Number) error {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return fmt.Errorf("canonical JSON: number %s is not a finite double", n)
	}
	if f == 0 {
		b.WriteByte('0') // also -0
		return nil
	}
	digits, exp := shortestDigits(f)
	sign := ""
	if f < 0 {
		sign = "-"
	}
	b.WriteString(sign + ecmaNumber(digits, exp))
	return nil
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
func CanonicalEvent(ev RecordedEvent) ([]byte, error) {
	data, err := CanonicalJSON(rawOrNull(ev.Data))
	if err == nil {
		var md []byte
		if md, err = CanonicalJSON(rawOrEmpty(ev.Metadata)); err == nil {
			return canonicalEnvelope(ev, data, md)
		}
	}
	return nil, fmt.Errorf("canonical event %s@%d: %w", ev.Stream, ev.Revision, err)
}

// canonicalEnvelope writes the envelope's members in their canonical order
// (data, id, metadata, recorded_at, revision, stream, type: ASCII names,
// sorted), around data and metadata already in canonical form: the event's
// data is parsed once, not once more as part of the envelope.
func canonicalEnvelope(ev RecordedEvent, data, md []byte) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(data) + len(md) + 256)
	b.WriteString(`{"data":`)
	b.Write(data)
	b.WriteString(`,"id":`)
	writeCanonicalString(&b, uuid.UUID(ev.ID).String())
	b.WriteString(`,"metadata":`)
	b.Write(md)
	b.WriteString(`,"recorded_at":`)
	writeCanonicalString(&b, FormatRecordedAt(ev.RecordedAt))
	b.WriteString(`,"revision":`)
	if err := writeCanonicalNumber(&b, json.Number(strconv.FormatUint(ev.Revision, 10))); err != nil {
		return nil, err
	}
	b.WriteString(`,"stream":`)
	writeCanonicalString(&b, ev.Stream)
	b.WriteString(`,"type":`)
	writeCanonicalString(&b, ev.Type)
	b.WriteByte('}')
	return b.Bytes(), nil
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
