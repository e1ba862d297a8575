package command

import "errors"

// Parsed is a write's body parsed into its request type T: the request, or
// the *ValidationError listing every violation of T's rules. Only the Parse
// functions (ParseCreateCompany, ...) make one, so a use case holding a
// Parsed[T] holds a body decoded and checked once, where it was read.
//
// The violations wait here instead of being Parse's error because a use case
// answers its checks in a fixed order, whatever the body: a malformed body
// (400, Parse's error), then the idempotency key (400), then the resources
// the path names (404), then the body's violations (422).
type Parsed[T any] struct {
	request T
	invalid error
	parsed  bool
}

// errNotParsed means a use case got a Parsed value no Parse function made.
var errNotParsed = errors.New("command: the request was not made by a Parse function")

// Valid returns the request, or the *ValidationError of its body.
func (p Parsed[T]) Valid() (T, error) {
	if !p.parsed {
		return p.request, errNotParsed
	}
	return p.request, p.invalid
}

// parseBody decodes raw (a *MalformedBodyError if it is not one well-formed
// JSON object) and reads it into T with read, which records every violation
// in r.
func parseBody[T any](raw []byte, read func(r *reader, body map[string]any) T) (Parsed[T], error) {
	body, err := decodeObject(raw)
	if err != nil {
		return Parsed[T]{}, err
	}
	r := &reader{}
	request := read(r, body)
	return Parsed[T]{request: request, invalid: r.err(), parsed: true}, nil
}
