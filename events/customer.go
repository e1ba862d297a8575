package events

import "time"

// CustomerCreated records a new billing customer of a company.
type CustomerCreated struct {
	CustomerID        string       `json:"customer_id"`
	CompanyID         string       `json:"company_id"`
	AccountID         string       `json:"account_id"`
	Name              string       `json:"name"`
	Address           Address      `json:"address"`
	Email             string       `json:"email,omitempty"`
	ExternalReference string       `json:"external_reference,omitempty"`
	Identifiers       []Identifier `json:"identifiers"`
	// ElectronicAddress is omitted when absent (and in events from before it).
	ElectronicAddress *ElectronicAddress `json:"electronic_address,omitempty"`
	CreatedAt         time.Time          `json:"created_at"`
}

// CustomerUpdated records an update of a customer (a merge patch over its
// create request's fields): its whole mutable state after the update, and
// the fields the update changed, as CompanyUpdated.
type CustomerUpdated struct {
	CustomerID        string             `json:"customer_id"`
	CompanyID         string             `json:"company_id"`
	AccountID         string             `json:"account_id"`
	Name              string             `json:"name"`
	Address           Address            `json:"address"`
	Email             string             `json:"email,omitempty"`
	ExternalReference string             `json:"external_reference,omitempty"`
	Identifiers       []Identifier       `json:"identifiers"`
	ElectronicAddress *ElectronicAddress `json:"electronic_address,omitempty"`
	Changed           []string           `json:"changed"`
	UpdatedAt         time.Time          `json:"updated_at"`
}

// CustomerArchived archives a customer: it leaves the lists (unless they
// ask for archived ones) and no invoice may be drafted for it; its
// invoices keep their whole lifecycle.
type CustomerArchived struct {
	CustomerID string    `json:"customer_id"`
	CompanyID  string    `json:"company_id"`
	AccountID  string    `json:"account_id"`
	ArchivedAt time.Time `json:"archived_at"`
}

// CustomerUnarchived restores an archived customer.
type CustomerUnarchived struct {
	CustomerID   string    `json:"customer_id"`
	CompanyID    string    `json:"company_id"`
	AccountID    string    `json:"account_id"`
	UnarchivedAt time.Time `json:"unarchived_at"`
}
