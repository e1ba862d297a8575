package command

import (
	"regexp"

	"github.com/invoicing/invoicing/events"
)

// The field rules shared by companies, customers and invoices (the spec's
// tables). Lengths count Unicode code points.
var (
	countryCode = text{min: 2, max: 2, pattern: regexp.MustCompile(`^[A-Z]{2}$`), hint: "two uppercase letters (ISO 3166-1 alpha-2)"}
	currency    = text{min: 3, max: 3, pattern: regexp.MustCompile(`^[A-Z]{3}$`), hint: "three uppercase letters (ISO 4217)"}
	language    = text{min: 2, max: 255, pattern: regexp.MustCompile(`^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$`), hint: "a language tag such as en or de-CH"}
	scheme      = text{min: 1, max: 64, pattern: regexp.MustCompile(`^[a-z][a-z0-9._-]{0,63}$`), hint: "a lowercase scheme name such as vat or de.hrb"}
	email       = text{min: 1, max: 254, email: true}
	name200     = text{min: 1, max: 200}
	reference   = text{min: 1, max: 255}
	// numberPrefix renders before an invoice's sequence number (INV-000042).
	numberPrefix = text{max: 20, pattern: regexp.MustCompile(`^[A-Za-z0-9/_.-]{0,20}$`), hint: "up to 20 letters, digits and / _ . -"}
)

// maxIdentifiers is the spec's limit per record.
const maxIdentifiers = 20

// ParseUUID is the one check of an id a client sends, in a path parameter,
// a query filter or a body field (events.ParseUUID). It returns the
// canonical lowercase spelling, so that equal ids compare equal.
func ParseUUID(s string) (canonical string, ok bool) {
	id, ok := events.ParseUUID(s)
	if !ok {
		return "", false
	}
	return id.String(), true
}

func (r *reader) address(path string, v any) events.Address {
	o, ok := r.openObject(path, v, "city", "country_code", "line_1", "line_2", "postal_code", "region")
	if !ok {
		return events.Address{}
	}
	return events.Address{
		City:        o.reqStr("city", text{min: 1, max: 120}),
		CountryCode: o.reqStr("country_code", countryCode),
		Line1:       o.reqStr("line_1", text{min: 1, max: 200}),
		Line2:       o.str("line_2", text{max: 200}),
		PostalCode:  o.reqStr("postal_code", text{min: 1, max: 32}),
		Region:      o.str("region", text{max: 120}),
	}
}

// identifiers reads an optional identifiers array; absent means empty.
func (o object) identifiers(field string) []events.Identifier {
	out := []events.Identifier{}
	items, ok := o.array(field, 0, maxIdentifiers, false)
	if !ok {
		return out
	}
	path := join(o.path, field)
	for i, item := range items {
		io, ok := o.r.openObject(index(path, i), item, "country_code", "scheme", "value")
		if !ok {
			continue
		}
		out = append(out, events.Identifier{
			CountryCode: io.str("country_code", countryCode),
			Scheme:      io.reqStr("scheme", scheme),
			Value:       io.reqStr("value", text{min: 1, max: 200}),
		})
	}
	return out
}
