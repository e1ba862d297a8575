package main

import (
	"context"
	"errors"

	"github.com/invoicing/invoicing/command"
	"github.com/invoicing/invoicing/query"
)

// directory implements command.Directory over the read models, so that
// command depends on neither query nor projections.
type directory struct {
	q *query.Store
}

func (d directory) Company(ctx context.Context, accountID, companyID string) (command.CompanyRecord, error) {
	c, err := d.q.Company(ctx, accountID, companyID)
	if errors.Is(err, query.ErrNotFound) {
		return command.CompanyRecord{}, command.ErrNotFound
	}
	if err != nil {
		return command.CompanyRecord{}, err
	}
	return command.CompanyRecord{
		ID: c.ID, LegalName: c.LegalName, TradingName: c.TradingName, Address: c.Address,
		Email: c.Email, Identifiers: c.Identifiers, DefaultCurrency: c.DefaultCurrency,
		DefaultLanguage: c.DefaultLanguage, DefaultPaymentTermsDays: c.DefaultPaymentTermsDays,
		InvoiceNumberPrefix: c.InvoiceNumberPrefix,
	}, nil
}

func (d directory) InvoiceStream(ctx context.Context, accountID, companyID, invoiceID string) (string, error) {
	stream, err := d.q.InvoiceStream(ctx, accountID, companyID, invoiceID)
	if errors.Is(err, query.ErrNotFound) {
		return "", command.ErrNotFound
	}
	return stream, err
}

func (d directory) Customer(ctx context.Context, accountID, companyID, customerID string) (command.CustomerRecord, error) {
	c, err := d.q.Customer(ctx, accountID, companyID, customerID)
	if errors.Is(err, query.ErrNotFound) {
		return command.CustomerRecord{}, command.ErrNotFound
	}
	if err != nil {
		return command.CustomerRecord{}, err
	}
	return command.CustomerRecord{
		ID: c.ID, CompanyID: c.CompanyID, Name: c.Name, Address: c.Address,
		Email: c.Email, Identifiers: c.Identifiers,
	}, nil
}
