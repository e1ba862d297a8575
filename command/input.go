package command

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/invoicing/invoicing/events"
)

// reader walks a decoded JSON object (json.Decoder with UseNumber) and
// collects every violation with its path instead of stopping at the first.
type reader struct {
	violations []Violation
}

func (r *reader) add(path, format string, args ...any) {
	r.violations = append(r.violations, Violation{Path: path, Message: fmt.Sprintf(format, args...)})
}

func (r *reader) err() error {
	if len(r.violations) == 0 {
		return nil
	}
	sort.SliceStable(r.violations, func(i, j int) bool { return r.violations[i].Path < r.violations[j].Path })
	return &ValidationError{Violations: r.violations}
}

// object is a JSON object under validation at path.
type object struct {
	r    *reader
	path string
	m    map[string]any
}

// openObject checks that v is an object whose keys are all in fields.
func (r *reader) openObject(path string, v any, fields ...string) (object, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		r.add(path, "must be an object")
		return object{}, false
	}
	allowed := make(map[string]bool, len(fields))
	for _, f := range fields {
		allowed[f] = true
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !allowed[k] {
			r.add(join(path, k), "is not a known field")
		}
	}
	return object{r: r, path: path, m: m}, true
}

// join appends a field to a path. Names that would make the path ambiguous
// (empty, or holding '.', '[', ']' or '"') are quoted in brackets.
func join(path, field string) string {
	if field == "" || strings.ContainsAny(field, `.[]"`) {
		return path + "[" + strconv.Quote(field) + "]"
	}
	if path == "" {
		return field
	}
	return path + "." + field
}

// get returns the field's value; absent and null are the same ("omitted").
func (o object) get(field string) (any, bool) {
	v, ok := o.m[field]
	return v, ok && v != nil
}

// text is a string rule: length in code points, and an optional pattern.
// Every string must also pass events.CheckText, so that whatever is accepted
// can be stored and served by every read model.
type text struct {
	min, max  int
	pattern   *regexp.Regexp
	hint      string // what the pattern means, for the message
	email     bool
	multiline bool // tab, line feed and carriage return allowed
}

func (o object) required(field string) (any, bool) {
	v, ok := o.get(field)
	if !ok {
		o.r.add(join(o.path, field), "is required")
	}
	return v, ok
}

// str reads an optional string field; "" when absent or invalid.
func (o object) str(field string, rule text) string {
	v, ok := o.get(field)
	if !ok {
		return ""
	}
	return o.r.checkText(join(o.path, field), v, rule)
}

// reqStr reads a required string field.
func (o object) reqStr(field string, rule text) string {
	v, ok := o.required(field)
	if !ok {
		return ""
	}
	return o.r.checkText(join(o.path, field), v, rule)
}

func (r *reader) checkText(path string, v any, rule text) string {
	s, ok := v.(string)
	if !ok {
		r.add(path, "must be a string")
		return ""
	}
	n := utf8.RuneCountInString(s)
	textErr := events.CheckText(s, rule.multiline)
	switch {
	case textErr != nil:
		r.add(path, "%v", textErr)
	case n < rule.min && rule.min == 1:
		r.add(path, "must not be empty")
	case n < rule.min:
		r.add(path, "must be at least %d characters", rule.min)
	case rule.max > 0 && n > rule.max:
		r.add(path, "must be at most %d characters", rule.max)
	case rule.pattern != nil && !rule.pattern.MatchString(s):
		r.add(path, "must be %s", rule.hint)
	case rule.email && !validEmail(s):
		r.add(path, "must be an email address")
	default:
		return s
	}
	return ""
}

// validEmail accepts a bare addr-spec (no display name, no angle brackets).
func validEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Name == "" && a.Address == s
}

// integer reads an integer field within [min, max]; ok is false when the
// field is absent or invalid.
func (o object) integer(field string, min, max int64, required bool) (int64, bool) {
	var v any
	var present bool
	if required {
		v, present = o.required(field)
	} else {
		v, present = o.get(field)
	}
	if !present {
		return 0, false
	}
	return o.r.checkInteger(join(o.path, field), v, min, max)
}

func (r *reader) checkInteger(path string, v any, min, max int64) (int64, bool) {
	num, ok := v.(json.Number)
	if !ok {
		r.add(path, "must be an integer")
		return 0, false
	}
	n, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil {
		if _, ferr := num.Float64(); ferr == nil && isIntegerLiteral(string(num)) {
			r.add(path, "must be between %d and %d", min, max)
		} else {
			r.add(path, "must be an integer")
		}
		return 0, false
	}
	if n < min || n > max {
		r.add(path, "must be between %d and %d", min, max)
		return 0, false
	}
	return n, true
}

// isIntegerLiteral tells a too-large integer ("99999999999999999999") from a
// fraction or exponent ("1.5", "1e3").
func isIntegerLiteral(s string) bool {
	for i, c := range s {
		if (c < '0' || c > '9') && !(i == 0 && c == '-') {
			return false
		}
	}
	return true
}

// array reads an optional array field with at most max items.
func (o object) array(field string, min, max int, required bool) ([]any, bool) {
	var v any
	var present bool
	if required {
		v, present = o.required(field)
	} else {
		v, present = o.get(field)
	}
	if !present {
		return nil, false
	}
	path := join(o.path, field)
	items, ok := v.([]any)
	switch {
	case !ok:
		o.r.add(path, "must be an array")
	case len(items) < min:
		o.r.add(path, "must have at least %d item(s)", min)
	case len(items) > max:
		o.r.add(path, "must have at most %d items", max)
	default:
		return items, true
	}
	return nil, false
}

func index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}
