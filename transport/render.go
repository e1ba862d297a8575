package transport

import (
	"encoding/json"
	"time"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// Response bodies follow docs/decisions.md: exactly the spec's fields; nullable
// fields always present; defaulted fields always present; other optional
// fields omitted when empty.

// timestamp renders UTC RFC 3339 with the microseconds the event holds.
func timestamp(t time.Time) string {
	return string(appendTimestamp(make([]byte, 0, len(time.RFC3339Nano)), t))
}

func appendTimestamp(b []byte, t time.Time) []byte {
	return t.UTC().AppendFormat(b, time.RFC3339Nano)
}

// apiTime is a timestamp held as a time and written as timestamp writes it,
// when the body is appended: a list of 100 invoices made a string for each
// of up to four timestamps a row, and a pointer to each nullable one.
type apiTime time.Time

func (t apiTime) appendJSON(b []byte) []byte {
	return append(appendTimestamp(append(b, '"'), time.Time(t)), '"')
}

// MarshalJSON writes what appendJSON writes, for encoding/json.
func (t apiTime) MarshalJSON() ([]byte, error) { return t.appendJSON(nil), nil }

func nullableTimestamp(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := timestamp(*t)
	return &s
}

func identifiers(ids []events.Identifier) []events.Identifier {
	if ids == nil {
		return []events.Identifier{}
	}
	return ids
}

// companyJSON is a company. Address and Identifiers hold the events'
// values (events.Address, []events.Identifier) when rendered from an
// event, and the read model's json.RawMessage, already their rendering,
// which encoding/json copies as it is, when rendered from a query.
type companyJSON struct {
	ID                      string `json:"id"`
	LegalName               string `json:"legal_name"`
	TradingName             string `json:"trading_name,omitempty"`
	Address                 any    `json:"address"`
	DefaultCurrency         string `json:"default_currency"`
	DefaultLanguage         string `json:"default_language"`
	DefaultPaymentTermsDays int    `json:"default_payment_terms_days"`
	Email                   string `json:"email,omitempty"`
	ExternalReference       string `json:"external_reference,omitempty"`
	Identifiers             any    `json:"identifiers"`
	InvoiceNumberPrefix     string `json:"invoice_number_prefix"`
	CreditNoteNumberPrefix  string `json:"credit_note_number_prefix"`
	// BankAccount and ElectronicAddress are nil when absent (see optional).
	BankAccount       any     `json:"bank_account,omitempty"`
	ElectronicAddress any     `json:"electronic_address,omitempty"`
	ArchivedAt        *string `json:"archived_at"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
	Version           int     `json:"version"`
}

// companyFromEvent renders a company as its creating event describes it:
// version 1, never archived, updated when created.
func companyFromEvent(e events.CompanyCreated) companyJSON {
	return companyJSON{
		ID: e.CompanyID, LegalName: e.LegalName, TradingName: e.TradingName, Address: e.Address,
		DefaultCurrency: e.DefaultCurrency, DefaultLanguage: e.DefaultLanguage,
		DefaultPaymentTermsDays: e.DefaultPaymentTermsDays, Email: e.Email,
		ExternalReference: e.ExternalReference, Identifiers: identifiers(e.Identifiers),
		InvoiceNumberPrefix: e.InvoiceNumberPrefix, CreditNoteNumberPrefix: e.CreditNotePrefix(),
		BankAccount: optional(e.BankAccount), ElectronicAddress: optional(e.ElectronicAddress),
		CreatedAt: timestamp(e.CreatedAt), UpdatedAt: timestamp(e.CreatedAt), Version: 1,
	}
}

// companyFromState renders a company as its stream's events make it: what
// a write to it (update, archive, unarchive) answers.
func companyFromState(c events.Company) companyJSON {
	out := companyFromEvent(c.CompanyCreated)
	out.ArchivedAt, out.UpdatedAt, out.Version = nullableTimestamp(c.ArchivedAt), timestamp(c.UpdatedAt), c.Version
	return out
}

func companyFromQuery(c query.Company) companyJSON {
	return companyJSON{
		ID: c.ID, LegalName: c.LegalName, TradingName: c.TradingName, Address: c.Address,
		DefaultCurrency: c.DefaultCurrency, DefaultLanguage: c.DefaultLanguage,
		DefaultPaymentTermsDays: c.DefaultPaymentTermsDays, Email: c.Email,
		ExternalReference: c.ExternalReference, Identifiers: c.Identifiers,
		InvoiceNumberPrefix: c.InvoiceNumberPrefix, CreditNoteNumberPrefix: c.CreditNoteNumberPrefix,
		BankAccount: optionalRaw(c.BankAccount), ElectronicAddress: optionalRaw(c.ElectronicAddress),
		ArchivedAt: nullableTimestamp(c.ArchivedAt), CreatedAt: timestamp(c.CreatedAt),
		UpdatedAt: timestamp(c.UpdatedAt), Version: c.Version,
	}
}

// optional is an optional value for an `any` member with omitempty: the
// nil interface when absent, which encoding/json leaves out (a nil pointer
// in an interface would render null).
func optional[T any](v *T) any {
	if v == nil {
		return nil
	}
	return v
}

// optionalRaw is optional for a read model's JSON (nil: NULL, absent).
func optionalRaw(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return raw
}

// listJSON is the body of every list.
type listJSON[T any] struct {
	Data       []T            `json:"data"`
	Pagination paginationJSON `json:"pagination"`
}

type paginationJSON struct {
	NextCursor *string `json:"next_cursor"`
}

func list[S, T any](page query.Page[S], render func(S) T) listJSON[T] {
	out := listJSON[T]{Data: make([]T, 0, len(page.Items))}
	for _, item := range page.Items {
		out.Data = append(out.Data, render(item))
	}
	out.Pagination = pagination(page.NextCursor)
	return out
}

// pagination is a list's pagination member: next is "" on the last page,
// which the API writes as null.
func pagination(next string) paginationJSON {
	if next == "" {
		return paginationJSON{}
	}
	return paginationJSON{NextCursor: &next}
}
