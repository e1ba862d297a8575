package einvoice

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// ErrNotXMLText means a text value holds a character XML 1.0 cannot carry
// (U+FFFE, U+FFFF, a control character other than tab, line feed and
// carriage return) or is not valid UTF-8. The write side's text rules keep
// control characters out of every event; this is the last guard.
var ErrNotXMLText = errors.New("einvoice: text holds a character XML 1.0 cannot carry")

// xmlWriter writes indented XML into one growing buffer: no reflection, no
// allocation per element beyond the buffer, so a document renders in
// microseconds. The first error sticks; later calls do nothing.
type xmlWriter struct {
	b     []byte
	depth int
	err   error
}

func newXMLWriter(sizeHint int) *xmlWriter {
	w := &xmlWriter{b: make([]byte, 0, sizeHint)}
	w.b = append(w.b, `<?xml version="1.0" encoding="UTF-8"?>`...)
	return w
}

// open starts element name with attributes given as name, value pairs.
func (w *xmlWriter) open(name string, attrs ...string) {
	w.startTag(name, attrs)
	w.b = append(w.b, '>')
	w.depth++
}

// close ends element name, opened last.
func (w *xmlWriter) close(name string) {
	w.depth--
	w.indent()
	w.b = append(w.b, "</"...)
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
}

// leaf writes <name attrs>text</name>.
func (w *xmlWriter) leaf(name, text string, attrs ...string) {
	w.startTag(name, attrs)
	w.b = append(w.b, '>')
	w.escape(text, false)
	w.b = append(w.b, "</"...)
	w.b = append(w.b, name...)
	w.b = append(w.b, '>')
}

// opt writes leaf name only when text is not empty: optional business terms.
func (w *xmlWriter) opt(name, text string, attrs ...string) {
	if text != "" {
		w.leaf(name, text, attrs...)
	}
}

func (w *xmlWriter) startTag(name string, attrs []string) {
	w.indent()
	w.b = append(w.b, '<')
	w.b = append(w.b, name...)
	for i := 0; i+1 < len(attrs); i += 2 {
		w.b = append(w.b, ' ')
		w.b = append(w.b, attrs[i]...)
		w.b = append(w.b, `="`...)
		w.escape(attrs[i+1], true)
		w.b = append(w.b, '"')
	}
}

func (w *xmlWriter) indent() {
	w.b = append(w.b, '\n')
	for i := 0; i < w.depth; i++ {
		w.b = append(w.b, "  "...)
	}
}

// escape appends s as character data (or an attribute value): the five
// markup characters as entities, carriage return as a reference so that a
// parser's end-of-line handling cannot turn it into a line feed, and in
// attributes tab and line feed too (attribute value normalization would
// make spaces of them).
func (w *xmlWriter) escape(s string, attr bool) {
	last := 0
	for i, r := range s {
		var rep string
		switch {
		case r == '&':
			rep = "&amp;"
		case r == '<':
			rep = "&lt;"
		case r == '>':
			rep = "&gt;"
		case r == '"':
			rep = "&quot;"
		case r == '\'':
			rep = "&apos;"
		case r == '\r':
			rep = "&#xD;"
		case r == '\n' && attr:
			rep = "&#xA;"
		case r == '\t' && attr:
			rep = "&#x9;"
		case !isXMLChar(r) || (r == utf8.RuneError && isBadUTF8(s[i:])):
			w.fail(fmt.Errorf("%w: %U in %q", ErrNotXMLText, r, truncate(s)))
			return
		default:
			continue
		}
		w.b = append(w.b, s[last:i]...)
		w.b = append(w.b, rep...)
		last = i + utf8.RuneLen(r)
	}
	w.b = append(w.b, s[last:]...)
}

// isXMLChar is XML 1.0's Char production.
func isXMLChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) ||
		(r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}

// isBadUTF8 tells a decoding error from a literal U+FFFD at the start of s.
func isBadUTF8(s string) bool {
	_, size := utf8.DecodeRuneInString(s)
	return size <= 1
}

func truncate(s string) string {
	if len(s) > 40 {
		return strings.ToValidUTF8(s[:40], "") + "…"
	}
	return s
}

func (w *xmlWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// bytes ends the document: the buffer, or the first error.
func (w *xmlWriter) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	return append(w.b, '\n'), nil
}
