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
	InvoiceNumberPrefix string `json:"invoice_number_prefix,omitempty"`
	// CreditNoteNumberPrefix renders before the company's credit-note
	// numbers; absent (nil) in events from before it, which means
	// DefaultCreditNoteNumberPrefix (CreditNotePrefix).
	CreditNoteNumberPrefix *string `json:"credit_note_number_prefix,omitempty"`
	// BankAccount and ElectronicAddress are omitted when absent (and in
	// events from before them).
	BankAccount       *BankAccount       `json:"bank_account,omitempty"`
	ElectronicAddress *ElectronicAddress `json:"electronic_address,omitempty"`
	CreatedAt         time.Time          `json:"created_at"`
}

// CompanyUpdated records an update of a company (a merge patch over its
// create request's fields). It holds the company's whole mutable state
// after the update, defaults applied, so that a projection overwrites its
// row and a replay renders the response from the events alone; Changed
// names the fields the update changed.
type CompanyUpdated struct {
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
	InvoiceNumberPrefix     string       `json:"invoice_number_prefix"`
	// CreditNoteNumberPrefix is nil in events from before it (the prefix
	// stays as it was).
	CreditNoteNumberPrefix *string            `json:"credit_note_number_prefix,omitempty"`
	BankAccount            *BankAccount       `json:"bank_account,omitempty"`
	ElectronicAddress      *ElectronicAddress `json:"electronic_address,omitempty"`
	// Changed lists, sorted, the top-level fields whose values the update
	// changed (at least one: an update that changes nothing is not
	// recorded).
	Changed   []string  `json:"changed"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CompanyArchived archives a company: it leaves the lists (unless they ask
// for archived ones) and nothing new may be created under it; what exists
// keeps its whole lifecycle.
type CompanyArchived struct {
	CompanyID  string    `json:"company_id"`
	AccountID  string    `json:"account_id"`
	ArchivedAt time.Time `json:"archived_at"`
}

// CompanyUnarchived restores an archived company.
type CompanyUnarchived struct {
	CompanyID    string    `json:"company_id"`
	AccountID    string    `json:"account_id"`
	UnarchivedAt time.Time `json:"unarchived_at"`
}

// CreditNotePrefix is the company's credit-note number prefix, the default
// when its events name none.
func (c CompanyCreated) CreditNotePrefix() string {
	if c.CreditNoteNumberPrefix == nil {
		return DefaultCreditNoteNumberPrefix
	}
	return *c.CreditNoteNumberPrefix
}
