package events

import "time"

// CompanyCreated records a new company (a legal invoice sender) of an
// account. It holds every field of the created resource, so a replay renders
// the original response from the event alone.
type CompanyCreated struct {
	CompanyID               string       `json:"company_id"`
	AccountID               string       `json:"account_id"`
	LegalName               string       `json:"legal_name"`
	TradingName             string       `json:"trading_name,omitempty"`
	Address                 Address      `json:"address"`
	DefaultCurrency         string       `json:"default_currency"`
	DefaultLanguage         string       `json:"default_language"`
	DefaultPaymentTermsDays int          `json:"default_payment_terms_days"`
	Email                   string       `json:"email,omitempty"`
	ExternalReference       string       `json:"external_reference,omitempty"`
	Identifiers             []Identifier `json:"identifiers"`
	// InvoiceNumberPrefix renders before the company's invoice numbers;
	// absent in events written before it existed, which means "".
	InvoiceNumberPrefix string    `json:"invoice_number_prefix,omitempty"`
	CreatedAt           time.Time `json:"created_at"`
}
