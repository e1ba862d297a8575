package command

import (
	"context"
	"time"

	"github.com/invoicing/invoicing/events"
)

var opCreateCompany = operation{name: "companies.create", kind: events.KindCompany}

// Company defaults (docs/decisions.md).
const (
	DefaultLanguage         = "en"
	DefaultPaymentTermsDays = 30
)

// CreateCompany is a validated create-company request, before defaults.
// Its JSON form is the request's fingerprint.
type CreateCompany struct {
	LegalName               string              `json:"legal_name"`
	TradingName             string              `json:"trading_name,omitempty"`
	Address                 events.Address      `json:"address"`
	DefaultCurrency         string              `json:"default_currency"`
	DefaultLanguage         string              `json:"default_language,omitempty"`
	DefaultPaymentTermsDays *int64              `json:"default_payment_terms_days,omitempty"`
	Email                   string              `json:"email,omitempty"`
	ExternalReference       string              `json:"external_reference,omitempty"`
	Identifiers             []events.Identifier `json:"identifiers"`
	InvoiceNumberPrefix     string              `json:"invoice_number_prefix,omitempty"`
	// CreditNoteNumberPrefix is nil when the request names none (the
	// default applies), so that such a request fingerprints as before it.
	CreditNoteNumberPrefix *string `json:"credit_note_number_prefix,omitempty"`
	// Absent, a request fingerprints as before them.
	BankAccount       *events.BankAccount       `json:"bank_account,omitempty"`
	ElectronicAddress *events.ElectronicAddress `json:"electronic_address,omitempty"`
}

// ParseCreateCompany decodes and validates a create-company body (Parsed).
func ParseCreateCompany(raw []byte) (Parsed[CreateCompany], error) {
	return parseBody(raw, readCreateCompany)
}

// companyFields are the fields of a create-company request, which an
// update may patch too.
var companyFields = []string{"legal_name", "trading_name", "address", "default_currency",
	"default_language", "default_payment_terms_days", "email", "external_reference", "identifiers",
	"invoice_number_prefix", "credit_note_number_prefix", "bank_account", "electronic_address"}

func readCreateCompany(r *reader, body map[string]any) CreateCompany {
	o, _ := r.openObject("", body, companyFields...)
	c := CreateCompany{
		LegalName:           o.reqStr("legal_name", name200),
		TradingName:         o.str("trading_name", name200),
		DefaultCurrency:     o.reqStr("default_currency", currency),
		DefaultLanguage:     o.str("default_language", language),
		Email:               o.str("email", email),
		ExternalReference:   o.str("external_reference", reference),
		Identifiers:         o.identifiers("identifiers"),
		InvoiceNumberPrefix: o.str("invoice_number_prefix", numberPrefix),
		BankAccount:         o.bankAccount("bank_account"),
		ElectronicAddress:   o.electronicAddress("electronic_address"),
	}
	if v, ok := o.required("address"); ok {
		c.Address = r.address("address", v)
	}
	if days, ok := o.integer("default_payment_terms_days", 0, 365, false); ok {
		c.DefaultPaymentTermsDays = &days
	}
	c.readCreditNotePrefix(o)
	return c
}

// readCreditNotePrefix reads credit_note_number_prefix, which must differ
// from invoice_number_prefix so that no credit note can bear an invoice's
// number.
func (c *CreateCompany) readCreditNotePrefix(o object) {
	const field = "credit_note_number_prefix"
	if _, ok := o.get(field); ok {
		p := o.str(field, numberPrefix)
		c.CreditNoteNumberPrefix = &p
	}
	if c.creditNotePrefix() == c.InvoiceNumberPrefix {
		o.r.add(field, "must differ from invoice_number_prefix (%q), so that credit note and invoice numbers never collide", c.InvoiceNumberPrefix)
	}
}

// creditNotePrefix is the requested credit-note prefix, or the default.
func (c CreateCompany) creditNotePrefix() string {
	if c.CreditNoteNumberPrefix == nil {
		return events.DefaultCreditNoteNumberPrefix
	}
	return *c.CreditNoteNumberPrefix
}

// CreateCompany creates a company in the caller's account, or replays the
// company an earlier identical request with the same key created.
func (h *Handler) CreateCompany(ctx context.Context, req Request, body Parsed[CreateCompany]) (Result[events.CompanyCreated], error) {
	var out Result[events.CompanyCreated]
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return out, err
	}
	in, err := body.Valid()
	if err != nil {
		return out, err
	}
	fp, err := fingerprint(opCreateCompany, "", in)
	if err != nil {
		return out, err
	}
	build := func() (string, events.CompanyCreated, error) {
		id, err := h.newID()
		if err != nil {
			return "", events.CompanyCreated{}, err
		}
		return events.TypeCompanyCreated, in.event(id, req.Actor.AccountID, h.now()), nil
	}
	return create(ctx, h, req, opCreateCompany, "", fp, build)
}

func (in CreateCompany) event(id, accountID string, now time.Time) events.CompanyCreated {
	ev := events.CompanyCreated{
		CompanyID:               id,
		AccountID:               accountID,
		LegalName:               in.LegalName,
		TradingName:             in.TradingName,
		Address:                 in.Address,
		DefaultCurrency:         in.DefaultCurrency,
		DefaultLanguage:         in.DefaultLanguage,
		DefaultPaymentTermsDays: DefaultPaymentTermsDays,
		Email:                   in.Email,
		ExternalReference:       in.ExternalReference,
		Identifiers:             in.Identifiers,
		InvoiceNumberPrefix:     in.InvoiceNumberPrefix,
		CreditNoteNumberPrefix:  ptr(in.creditNotePrefix()),
		BankAccount:             in.BankAccount,
		ElectronicAddress:       in.ElectronicAddress,
		CreatedAt:               now,
	}
	if ev.DefaultLanguage == "" {
		ev.DefaultLanguage = DefaultLanguage
	}
	if in.DefaultPaymentTermsDays != nil {
		ev.DefaultPaymentTermsDays = int(*in.DefaultPaymentTermsDays)
	}
	return ev
}

func ptr[T any](v T) *T { return &v }
