package transport

import (
	"strconv"
	"strings"
)

// acceptable reports whether Accept header values admit mediaType (RFC
// 9110 §12.5.1): no header admits anything; otherwise the most specific
// range that matches it (type/subtype, then type/*, then */*) must have a
// q above 0.
func acceptable(fields []string, mediaType string) bool {
	if len(fields) == 0 {
		return true
	}
	typ, _, _ := strings.Cut(mediaType, "/")
	best, bestQ := -1, 0.0
	for _, field := range fields {
		for _, item := range strings.Split(field, ",") {
			rng, q := mediaRange(item)
			specificity := -1
			switch {
			case rng == "":
				continue
			case strings.EqualFold(rng, mediaType):
				specificity = 2
			case strings.EqualFold(rng, typ+"/*"):
				specificity = 1
			case rng == "*/*":
				specificity = 0
			}
			if specificity > best {
				best, bestQ = specificity, q
			}
		}
	}
	return best >= 0 && bestQ > 0
}

// mediaRange splits an Accept element into its range and its q (1 when
// absent or unreadable).
func mediaRange(item string) (string, float64) {
	parts := strings.Split(item, ";")
	q := 1.0
	for _, p := range parts[1:] {
		name, value, ok := strings.Cut(strings.TrimSpace(p), "=")
		if ok && strings.EqualFold(strings.TrimSpace(name), "q") {
			if v, err := strconv.ParseFloat(strings.TrimSpace(value), 64); err == nil {
				q = v
			}
		}
	}
	return strings.TrimSpace(parts[0]), q
}
