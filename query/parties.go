package query

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgerr"
)

// CompanyAndCustomer returns the account's company and that company's
// customer, the rows Company and Customer return, read in one round trip:
// a new invoice's two parties, whose two reads in turn were an eighth of a
// create's CPU in the service. It is events.ErrNotFound when the account has
// no company of that id, and a nil customer when the company has no
// customer of that id.
func (s *Store) CompanyAndCustomer(ctx context.Context, accountID, companyID, customerID string) (Company, *Customer, error) {
	if !validID(companyID) {
		return Company{}, nil, events.ErrNotFound
	}
	b := &pgx.Batch{}
	queue(b, companyByID(accountID, companyID))
	if validID(customerID) {
		queue(b, customerByID(accountID, companyID, customerID))
	}
	results := s.pool.SendBatch(ctx, b)
	company, customer, err := readParties(results, b.Len() == 2)
	if closeErr := results.Close(); err == nil && closeErr != nil {
		err = fmt.Errorf("query: %w", pgerr.MarkUnavailable(closeErr, events.ErrUnavailable))
	}
	return company, customer, err
}

func queue(b *pgx.Batch, st statement) { b.Queue(st.sql, st.args...) }

// readParties reads CompanyAndCustomer's results in the order queued; the
// customer's only when the company was found and a customer was queued.
func readParties(results pgx.BatchResults, withCustomer bool) (Company, *Customer, error) {
	rows, err := results.Query()
	company, err := single(scanCompanies, rows, err)
	if err != nil || !withCustomer {
		return company, nil, err
	}
	rows, err = results.Query()
	customer, err := single(scanCustomers, rows, err)
	switch {
	case errors.Is(err, events.ErrNotFound):
		return company, nil, nil
	case err != nil:
		return Company{}, nil, err
	}
	return company, &customer, nil
}
