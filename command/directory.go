package command

import (
	"context"

	"github.com/invoicing/invoicing/events"
)

// Directory is how the write side learns of existing companies and
// customers: to check that a path's company belongs to the caller, whether
// it is archived, and to take invoice snapshots. It is implemented over the
// read models (which read-your-writes keeps current for every write, on
// every instance, since they share the database) and wired in cmd, so this
// package depends on neither query nor projections.
type Directory interface {
	// Company returns the account's company, or events.ErrNotFound.
	Company(ctx context.Context, accountID, companyID string) (CompanyRecord, error)
	// Customer returns the company's customer, or events.ErrNotFound.
	Customer(ctx context.Context, accountID, companyID, customerID string) (CustomerRecord, error)
	// CompanyAndCustomer returns, in one read, the account's company
	// (events.ErrNotFound when it has none of that id) and that company's
	// customer (nil when it has none of that id): a new invoice's parties.
	CompanyAndCustomer(ctx context.Context, accountID, companyID, customerID string) (CompanyRecord, *CustomerRecord, error)
	// InvoiceStream returns the stream of the company's invoice, or
	// events.ErrNotFound. The stream, not the read model, is what lifecycle
	// operations decide on.
	InvoiceStream(ctx context.Context, accountID, companyID, invoiceID string) (string, error)
	// CompanyStream and CustomerStream return the stream of a company or
	// of a company's customer, or events.ErrNotFound: what updates and
	// archives decide on.
	CompanyStream(ctx context.Context, accountID, companyID string) (string, error)
	CustomerStream(ctx context.Context, accountID, companyID, customerID string) (string, error)
}

// CompanyRecord is what commands need to know of a company.
type CompanyRecord struct {
	ID                      string
	LegalName               string
	TradingName             string
	Address                 events.Address
	Email                   string
	Identifiers             []events.Identifier
	DefaultCurrency         string
	DefaultLanguage         string
	DefaultPaymentTermsDays int
	InvoiceNumberPrefix     string
	CreditNoteNumberPrefix  string
	BankAccount             *events.BankAccount
	ElectronicAddress       *events.ElectronicAddress
	// Archived: nothing new may be created under the company.
	Archived bool
}

// CustomerRecord is what commands need to know of a customer.
type CustomerRecord struct {
	ID                string
	CompanyID         string
	Name              string
	Address           events.Address
	Email             string
	Identifiers       []events.Identifier
	ElectronicAddress *events.ElectronicAddress
	// Archived: no invoice may be drafted for the customer.
	Archived bool
}
