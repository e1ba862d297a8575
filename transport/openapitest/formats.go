package openapitest

import (
	"errors"
	"net/mail"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// formatValidators asserts the string formats the document uses. Without
// them kin-openapi checks date and date-time by shape only (2025-02-31
// passes) and uuid and email not at all. They are passed per validation
// rather than registered globally, so no other user of kin-openapi in the
// test binary is affected.
func formatValidators() map[string]openapi3.StringFormatValidator {
	return map[string]openapi3.StringFormatValidator{
		"uuid":      openapi3.NewRegexpFormatValidator(openapi3.FormatOfStringForUUIDOfRFC9562),
		"date":      openapi3.NewCallbackValidator(validDate),
		"date-time": openapi3.NewCallbackValidator(validDateTime),
		"email":     openapi3.NewCallbackValidator(validEmail),
	}
}

// validDate accepts an RFC 3339 full-date that names a real day.
func validDate(s string) error {
	_, err := time.Parse(time.DateOnly, s)
	return err
}

// validDateTime accepts an RFC 3339 date-time.
func validDateTime(s string) error {
	_, err := time.Parse(time.RFC3339Nano, s)
	return err
}

// validEmail accepts a bare RFC 5322 address (no display name, no comments).
func validEmail(s string) error {
	addr, err := mail.ParseAddress(s)
	if err != nil {
		return err
	}
	if addr.Address != s {
		return errors.New("not a bare e-mail address")
	}
	return nil
}
