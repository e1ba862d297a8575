package events

import (
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// scanner reads, without reflection, the part of JSON that json.Marshal
// writes for an event: objects whose keys are the exact field names, each
// once, strings, integers, null and arrays. Anything else (a key in
// another case or with an escape, an unknown or repeated key, a fraction
// or exponent, true or false, a syntax error) marks the scan bad, and the
// caller decodes the event again with encoding/json, which is what gives
// such input its meaning or its error. What the scanner accepts it
// decodes as encoding/json does (FuzzDraftDecodeAgreesWithEncodingJSON).
type scanner struct {
	b   []byte
	i   int
	bad bool
}

func (s *scanner) fail() { s.bad = true }

// ws skips JSON's whitespace.
func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// consume skips whitespace and then c, reporting whether c was there.
func (s *scanner) consume(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// null consumes a null, reporting whether the value is one.
func (s *scanner) null() bool {
	s.ws()
	if len(s.b)-s.i >= 4 && string(s.b[s.i:s.i+4]) == "null" {
		s.i += 4
		return true
	}
	return false
}

// end reports whether all of the input was read and none of it was bad.
func (s *scanner) end() bool {
	s.ws()
	return !s.bad && s.i == len(s.b)
}

// object reads an object, calling member for each key with the cursor on
// its value. member decodes the value and returns the field's number, 1 to
// 63, or 0 for a key it does not know; a repeated field is bad, since
// encoding/json merges the second value into the first.
func (s *scanner) object(member func(key []byte) int) {
	if !s.consume('{') {
		s.fail()
		return
	}
	if s.consume('}') {
		return
	}
	var seen uint64
	for !s.bad {
		key, escaped := s.quoted()
		if escaped || !s.consume(':') {
			s.fail()
			return
		}
		n := member(key)
		if n == 0 || seen&(1<<n) != 0 {
			s.fail()
			return
		}
		seen |= 1 << n
		if s.consume('}') {
			return
		}
		if !s.consume(',') {
			s.fail()
		}
	}
}

// quoted reads a string's raw content, reporting whether it holds an
// escape or bytes that are not valid UTF-8, which only encoding/json
// decodes. A control character is bad.
func (s *scanner) quoted() (raw []byte, slow bool) {
	if !s.consume('"') {
		s.fail()
		return nil, false
	}
	start, ascii := s.i, true
	for ; s.i < len(s.b); s.i++ {
		switch c := s.b[s.i]; {
		case c == '"':
			raw = s.b[start:s.i]
			s.i++
			return raw, slow || (!ascii && !utf8.Valid(raw))
		case c == '\\':
			slow = true
			s.i++ // the escaped byte, which may be a quote
		case c < 0x20:
			s.fail()
			return nil, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	s.fail()
	return nil, false
}

// str decodes a string into dst; null leaves it as it is.
func (s *scanner) str(dst *string) {
	if s.null() {
		return
	}
	s.ws()
	start := s.i
	raw, slow := s.quoted()
	switch {
	case s.bad:
	case slow:
		if err := json.Unmarshal(s.b[start:s.i], dst); err != nil {
			s.fail()
		}
	default:
		*dst = string(raw)
	}
}

// integer decodes an integer of bitSize bits; null leaves dst as it is.
// A number with a fraction or an exponent is bad.
func (s *scanner) integer(bitSize int) (n int64, ok bool) {
	if s.null() {
		return 0, false
	}
	s.ws()
	start := s.i
	if s.i < len(s.b) && s.b[s.i] == '-' {
		s.i++
	}
	digits := s.i
	for s.i < len(s.b) && s.b[s.i] >= '0' && s.b[s.i] <= '9' {
		s.i++
	}
	leadingZero := s.i-digits > 1 && s.b[digits] == '0'
	if s.i == digits || leadingZero || (s.i < len(s.b) && (s.b[s.i] == '.' || s.b[s.i] == 'e' || s.b[s.i] == 'E')) {
		s.fail()
		return 0, false
	}
	n, err := strconv.ParseInt(string(s.b[start:s.i]), 10, bitSize)
	if err != nil {
		s.fail()
		return 0, false
	}
	return n, true
}

func (s *scanner) int64(dst *int64) {
	if n, ok := s.integer(64); ok {
		*dst = n
	}
}

func (s *scanner) int(dst *int) {
	if n, ok := s.integer(strconv.IntSize); ok {
		*dst = int(n)
	}
}

// intPtr decodes into a pointer to an int: null sets it to nil.
func (s *scanner) intPtr(dst **int) {
	if s.null() {
		*dst = nil
		return
	}
	var n int
	s.int(&n)
	*dst = &n
}

// raw returns the bytes of a string or null value, for a type that
// decodes itself (time.Time).
func (s *scanner) raw() []byte {
	s.ws()
	start := s.i
	if !s.null() {
		if _, slow := s.quoted(); slow {
			s.fail()
		}
	}
	return s.b[start:s.i]
}

// objectDecoder is a type whose members scanner decodes: member decodes the
// value of key and returns the field's number (see object).
type objectDecoder interface {
	member(s *scanner, key []byte) int
}

// structOf decodes an object into v: null leaves it as it is.
func (s *scanner) structOf(v objectDecoder) {
	if !s.null() {
		s.object(func(key []byte) int { return v.member(s, key) })
	}
}

// pointerTo decodes an object into a new T: null is nil.
func pointerTo[T any, P interface {
	*T
	objectDecoder
}](s *scanner, dst **T) {
	if s.null() {
		*dst = nil
		return
	}
	v := new(T)
	s.structOf(P(v))
	*dst = v
}

// objectsOf decodes an array of objects into dst as encoding/json does
// into a nil slice: null is nil, [] is empty and not nil.
func objectsOf[T any, P interface {
	*T
	objectDecoder
}](s *scanner, dst *[]T) {
	if s.null() {
		*dst = nil
		return
	}
	if !s.consume('[') {
		s.fail()
		return
	}
	out := []T{}
	if !s.consume(']') {
		for !s.bad {
			out = append(out, *new(T))
			s.structOf(P(&out[len(out)-1]))
			if s.consume(']') {
				break
			}
			if !s.consume(',') {
				s.fail()
			}
		}
	}
	*dst = out
}
