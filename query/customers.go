package query

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Customer is a row of the customers read model.
type Customer struct {
	ID                string
	CompanyID         string
	Name              string
	Address           events.Address
	Email             string
	ExternalReference string
	Identifiers       []events.Identifier
	ArchivedAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Version           int
}

// CustomerFilter narrows a customer list; empty fields do not filter.
type CustomerFilter struct {
	ExternalReference string
}

const customerColumns = `position_hi, position_lo, id::text, company_id::text, name, address, coalesce(email, ''),
	coalesce(external_reference, ''), identifiers, archived_at, created_at, updated_at, version`

// Customer returns a customer only when it belongs to both the account and
// the company, archived or not; otherwise ErrNotFound.
func (s *Store) Customer(ctx context.Context, accountID, companyID, id string) (Customer, error) {
	if !validID(id) || !validID(companyID) {
		return Customer{}, ErrNotFound
	}
	return one(ctx, s.pool, scanCustomers, `SELECT `+customerColumns+` FROM customers
		WHERE id = $1 AND account_id = $2 AND company_id = $3`, id, accountID, companyID)
}

// Customers lists a company's active customers in creation order.
func (s *Store) Customers(ctx context.Context, accountID, companyID string, f CustomerFilter, p PageRequest) (Page[Customer], error) {
	q := &keyset{}
	q.where("account_id = ?", accountID)
	q.where("company_id = ?::uuid", companyID)
	q.and("archived_at IS NULL")
	q.filter("external_reference = ?", f.ExternalReference)
	return page(ctx, s.pool, scanCustomers, scope("customers", accountID, companyID, f.ExternalReference), p, q, customerColumns, "customers")
}

func scanCustomers(rows pgx.Rows) ([]Customer, []rowKey, error) {
	defer rows.Close()
	customers := []Customer{}
	var keys []rowKey
	for rows.Next() {
		var (
			c                    Customer
			k                    rowKey
			address, identifiers []byte
		)
		err := rows.Scan(&k.hi, &k.lo, &c.ID, &c.CompanyID, &c.Name, &address, &c.Email, &c.ExternalReference,
			&identifiers, &c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt, &c.Version)
		if err != nil {
			return nil, nil, fmt.Errorf("scan customer: %w", err)
		}
		if err := decodeValues(address, &c.Address, identifiers, &c.Identifiers); err != nil {
			return nil, nil, fmt.Errorf("customer %s: %w", c.ID, err)
		}
		customers = append(customers, c)
		keys = append(keys, k)
	}
	return customers, keys, rows.Err()
}
