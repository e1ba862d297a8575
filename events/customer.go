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
	CreatedAt         time.Time    `json:"created_at"`
}
