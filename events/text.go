package events

import (
	"errors"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/uuid"
)

// The rules below decide which values the write side may put into an event.
// Every value an event carries must be storable and servable by every read
// model on both event stores (PostgreSQL text and jsonb reject U+0000, date
// columns reject year 0), so these rules are checked before anything is
// appended: an event, once in the log, can never be taken back.

// ErrInvalidUTF8 means a string is not valid UTF-8.
var ErrInvalidUTF8 = errors.New("must be valid UTF-8")

// ErrControlCharacter means a single-line string holds a control character
// (Unicode category Cc: U+0000..U+001F, U+007F..U+009F).
var ErrControlCharacter = errors.New("must not contain control characters (U+0000 to U+001F, U+007F to U+009F)")

// ErrControlCharacterMultiline means a multi-line string holds a control
// character other than tab, line feed and carriage return.
var ErrControlCharacterMultiline = errors.New("must not contain control characters other than tab, line feed and carriage return")

// CheckText reports whether s can be stored and served as text: valid UTF-8
// without control characters. Multi-line text (notes, terms, descriptions)
// may hold tab, line feed and carriage return.
func CheckText(s string, multiline bool) error {
	if !utf8.ValidString(s) {
		return ErrInvalidUTF8
	}
	for _, r := range s {
		if !unicode.IsControl(r) {
			continue
		}
		if !multiline {
			return ErrControlCharacter
		}
		if r != '\t' && r != '\n' && r != '\r' {
			return ErrControlCharacterMultiline
		}
	}
	return nil
}

// DateLayout is the ISO 8601 full-date form of every date the service keeps.
const DateLayout = "2006-01-02"

// The range of dates the service accepts and computes: four-digit years of
// the common era, which every part of the system stores and renders the same
// way (PostgreSQL has no year 0, and a year past 9999 is not a full-date).
var (
	MinDate = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	MaxDate = time.Date(9999, time.December, 31, 0, 0, 0, 0, time.UTC)
)

// ErrDateFormat means a string is not a full-date (YYYY-MM-DD).
var ErrDateFormat = errors.New("must be a date (YYYY-MM-DD)")

// ErrDateRange means a date lies outside MinDate..MaxDate.
var ErrDateRange = errors.New("must be a date from 0001-01-01 to 9999-12-31")

// ParseUUID is the one rule for an id the service takes in: the
// 36-character hyphenated form, in either case, which PostgreSQL reads as
// the same value. ok is false for anything else (braces, a urn:uuid:
// prefix, no hyphens), which uuid.Parse alone would accept.
func ParseUUID(s string) (id uuid.UUID, ok bool) {
	if len(s) != 36 {
		return uuid.UUID{}, false
	}
	id, err := uuid.Parse(s)
	return id, err == nil
}

// ParseDate parses a full-date within MinDate..MaxDate.
func ParseDate(s string) (time.Time, error) {
	d, err := time.Parse(DateLayout, s)
	if err != nil || len(s) != len(DateLayout) {
		return time.Time{}, ErrDateFormat
	}
	if d.Before(MinDate) || d.After(MaxDate) {
		return time.Time{}, ErrDateRange
	}
	return d, nil
}

// AddDays returns date plus days calendar days, or ErrDateRange when the
// result leaves MinDate..MaxDate.
func AddDays(date time.Time, days int) (time.Time, error) {
	d := date.AddDate(0, 0, days)
	if d.Before(MinDate) || d.After(MaxDate) {
		return time.Time{}, ErrDateRange
	}
	return d, nil
}
