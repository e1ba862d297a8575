package events

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckText(t *testing.T) {
	tests := []struct {
		name      string
		s         string
		multiline bool
		want      error
	}{
		{"plain", "Acme GmbH", false, nil},
		{"non-Latin and emoji", "東京 Zürich 😀", false, nil},
		{"empty", "", false, nil},
		{"NUL", "a\x00b", false, ErrControlCharacter},
		{"NUL in multi-line text", "a\x00b", true, ErrControlCharacterMultiline},
		{"tab in a single line", "a\tb", false, ErrControlCharacter},
		{"newline in a single line", "a\nb", false, ErrControlCharacter},
		{"tab, newline and CR in multi-line text", "a\tb\r\nc", true, nil},
		{"escape", "a\x1bb", true, ErrControlCharacterMultiline},
		{"DEL", "a\x7fb", false, ErrControlCharacter},
		{"a C1 control", "a\u0085b", false, ErrControlCharacter},
		{"invalid UTF-8", "a\xffb", true, ErrInvalidUTF8},
		{"a UTF-8 encoded surrogate", "\xed\xa0\x80", false, ErrInvalidUTF8},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CheckText(tt.s, tt.multiline); !errors.Is(got, tt.want) {
				t.Fatalf("CheckText(%q, %v) = %v, want %v", tt.s, tt.multiline, got, tt.want)
			}
		})
	}
}

func TestParseDateKeepsToFourDigitYears(t *testing.T) {
	tests := []struct {
		s    string
		want error
	}{
		{"2025-01-15", nil},
		{"0001-01-01", nil},
		{"9999-12-31", nil},
		{"2024-02-29", nil},
		{"0000-01-01", ErrDateRange},
		{"2025-02-29", ErrDateFormat},
		{"2025-1-15", ErrDateFormat},
		{"+2025-01-15", ErrDateFormat},
		{"2025-01-15T00:00:00Z", ErrDateFormat},
	}
	for _, tt := range tests {
		if _, err := ParseDate(tt.s); !errors.Is(err, tt.want) {
			t.Errorf("ParseDate(%q) = %v, want %v", tt.s, err, tt.want)
		}
	}
}

func TestParseUUIDTakesOnlyTheHyphenatedForm(t *testing.T) {
	const id = "0190a8c4-5f3e-7b2a-9c1d-2e3f4a5b6c7d"
	tests := []struct {
		s    string
		want bool
	}{
		{id, true},
		{strings.ToUpper(id), true},
		{"{" + id + "}", false},
		{"urn:uuid:" + id, false},
		{strings.ReplaceAll(id, "-", ""), false},
		{id[:35], false},
		{id[:35] + "g", false},
		{"", false},
	}
	for _, tt := range tests {
		got, ok := ParseUUID(tt.s)
		if ok != tt.want {
			t.Errorf("ParseUUID(%q) ok = %v, want %v", tt.s, ok, tt.want)
		}
		if ok && got.String() != id {
			t.Errorf("ParseUUID(%q) = %s, want %s", tt.s, got, id)
		}
	}
}

func TestAddDaysStaysInRange(t *testing.T) {
	d, _ := ParseDate("9999-12-01")
	if got, err := AddDays(d, 30); err != nil || got.Format(DateLayout) != "9999-12-31" {
		t.Fatalf("AddDays(9999-12-01, 30) = %v, %v", got, err)
	}
	if _, err := AddDays(d, 31); !errors.Is(err, ErrDateRange) {
		t.Fatalf("AddDays(9999-12-01, 31) = %v, want ErrDateRange", err)
	}
}
