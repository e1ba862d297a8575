package events

import "errors"

// ErrNotFound means a resource a request names does not exist within the
// caller's account (or company); existence elsewhere is never revealed. The
// write side (its Directory) and the read side (package query) answer it
// alike, so that transport maps it to 404 in one row.
var ErrNotFound = errors.New("not found")
