package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("canonical JSON: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("canonical JSON: trailing data")
	}
	var b bytes.Buffer
	if err := writeCanonical(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeCanonical(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		writeCanonicalString(b, v)
	case json.Number:
		return writeCanonicalNumber(b, v)
	case []any:
		b.WriteByte('[')
		for i, item := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeCanonical(b, item); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		return writeCanonicalObject(b, v)
	default:
		return fmt.Errorf("canonical JSON: unexpected %T", v)
	}
	return nil
}

func writeCanonicalObject(b *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareUTF16)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		writeCanonicalString(b, k)
		b.WriteByte(':')
		if err := writeCanonical(b, m[k]); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
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
