package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/query"
)

// directory implements command.Directory over the read models, so that
// command depends on neither query nor projections. Both sides answer
// events.ErrNotFound, so a miss passes through as it is.
type directory struct {
	q *query.Store
}

func (d directory) Company(ctx context.Context, accountID, companyID string) (command.CompanyRecord, error) {
	c, err := d.q.Company(ctx, accountID, companyID)
	if err != nil {
		return command.CompanyRecord{}, err
	}
	return companyRecord(c)
}

func (d directory) Customer(ctx context.Context, accountID, companyID, customerID string) (command.CustomerRecord, error) {
	c, err := d.q.Customer(ctx, accountID, companyID, customerID)
	if err != nil {
		return command.CustomerRecord{}, err
	}
	return customerRecord(c)
}

func (d directory) CompanyAndCustomer(ctx context.Context, accountID, companyID, customerID string) (command.CompanyRecord, *command.CustomerRecord, error) {
	company, customer, err := d.q.CompanyAndCustomer(ctx, accountID, companyID, customerID)
	if err != nil {
		return command.CompanyRecord{}, nil, err
	}
	r, err := companyRecord(company)
	if err != nil || customer == nil {
		return r, nil, err
	}
	cr, err := customerRecord(*customer)
	if err != nil {
		return command.CompanyRecord{}, nil, err
	}
	return r, &cr, nil
}

func (d directory) InvoiceStream(ctx context.Context, accountID, companyID, invoiceID string) (string, error) {
	return d.q.InvoiceStream(ctx, accountID, companyID, invoiceID)
}

func (d directory) CompanyStream(ctx context.Context, accountID, companyID string) (string, error) {
	return d.q.CompanyStream(ctx, accountID, companyID)
}

func (d directory) CustomerStream(ctx context.Context, accountID, companyID, customerID string) (string, error) {
	return d.q.CustomerStream(ctx, accountID, companyID, customerID)
}

// companyRecord and customerRecord are what commands need of the rows.
func companyRecord(c query.Company) (command.CompanyRecord, error) {
	r := command.CompanyRecord{
		ID: c.ID, LegalName: c.LegalName, TradingName: c.TradingName,
		Email: c.Email, DefaultCurrency: c.DefaultCurrency,
		DefaultLanguage: c.DefaultLanguage, DefaultPaymentTermsDays: c.DefaultPaymentTermsDays,
		InvoiceNumberPrefix: c.InvoiceNumberPrefix, CreditNoteNumberPrefix: c.CreditNoteNumberPrefix,
		Archived: c.ArchivedAt != nil,
	}
	if err := decodeValues(c.Address, &r.Address, c.Identifiers, &r.Identifiers); err != nil {
		return command.CompanyRecord{}, fmt.Errorf("company %s: %w", c.ID, err)
	}
	if err := errors.Join(decodeOptional(c.BankAccount, &r.BankAccount), decodeOptional(c.ElectronicAddress, &r.ElectronicAddress)); err != nil {
		return command.CompanyRecord{}, fmt.Errorf("company %s: %w", c.ID, err)
	}
	return r, nil
}

func customerRecord(c query.Customer) (command.CustomerRecord, error) {
	r := command.CustomerRecord{ID: c.ID, CompanyID: c.CompanyID, Name: c.Name, Email: c.Email, Archived: c.ArchivedAt != nil}
	if err := decodeValues(c.Address, &r.Address, c.Identifiers, &r.Identifiers); err != nil {
		return command.CustomerRecord{}, fmt.Errorf("customer %s: %w", c.ID, err)
	}
	if err := decodeOptional(c.ElectronicAddress, &r.ElectronicAddress); err != nil {
		return command.CustomerRecord{}, fmt.Errorf("customer %s: %w", c.ID, err)
	}
	return r, nil
}

// decodeValues decodes the address and identifiers that the read models
// keep as JSON, for the snapshots of a new invoice.
func decodeValues(address json.RawMessage, a *events.Address, identifiers json.RawMessage, ids *[]events.Identifier) error {
	return errors.Join(json.Unmarshal(address, a), json.Unmarshal(identifiers, ids))
}

// decodeOptional decodes an optional value the read models keep as JSON
// (NULL: absent, *into stays nil).
func decodeOptional[T any](raw json.RawMessage, into **T) error {
	if len(raw) == 0 {
		return nil
	}
	*into = new(T)
	return json.Unmarshal(raw, *into)
}
