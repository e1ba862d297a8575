// Package jsonlead reads the leading members of a JSON object when their
// values are plain strings, without decoding the rest of it. The write side
// puts an event's ids first (the payload's account, company and resource,
// the metadata's account), and a follower that needs only those ids would
// otherwise decode a 2 KB InvoiceDrafted with encoding/json to find them.
package jsonlead

// Strings calls visit with the key and value of each member of the JSON
// object in data, in order, while visit returns true. It reports whether
// visit stopped it. It reports false, and the caller decodes data with
// encoding/json instead, when it meets anything else first: a value that
// is not a string, a key or value with an escape, a control character or a
// byte outside ASCII, the object's end, or anything that is not JSON. What
// it reads before visit stops is therefore what encoding/json reads: the
// same bytes, since a string of printable ASCII without escapes decodes to
// itself. It does not look past the member where visit stops.
func Strings(data []byte, visit func(key, value []byte) (more bool)) (stopped bool) {
	i := space(data, 0)
	if i == len(data) || data[i] != '{' {
		return false
	}
	for i++; ; i++ {
		key, next, ok := plain(data, space(data, i))
		if !ok {
			return false
		}
		if i = space(data, next); i == len(data) || data[i] != ':' {
			return false
		}
		value, next, ok := plain(data, space(data, i+1))
		if !ok {
			return false
		}
		if !visit(key, value) {
			return true
		}
		if i = space(data, next); i == len(data) || data[i] != ',' {
			return false
		}
	}
}

// space returns the index of the first byte at or after i that is not
// JSON whitespace.
func space(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// plain reads the string starting at data[i] when it holds printable ASCII
// and no escape: its content and the index after its closing quote.
func plain(data []byte, i int) (content []byte, next int, ok bool) {
	if i == len(data) || data[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(data); j++ {
		switch c := data[j]; {
		case c == '"':
			return data[i+1 : j], j + 1, true
		case c < 0x20 || c == '\\' || c >= 0x7f:
			return nil, j, false
		}
	}
	return nil, len(data), false
}
