package query

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Customer is a row of the customers read model. Address and Identifiers
// are JSON as the API renders them, like a Company's.
type Customer struct {
	ID                string
	CompanyID         string
	Name              string
	Address           json.RawMessage
	Email             string
	ExternalReference string
	Identifiers       json.RawMessage
	// ElectronicAddress is JSON as the API renders it, nil when absent.
	ElectronicAddress json.RawMessage
	ArchivedAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Version           int
}

// CustomerFilter narrows a customer list; empty fields do not filter.
type CustomerFilter struct {
	ExternalReference string
	// Archived lists the archived customers instead of the active ones.
	Archived bool
}

const customerColumns = `position_hi, position_lo, id::text, company_id::text, name, address, coalesce(email, ''),
	coalesce(external_reference, ''), identifiers, archived_at, created_at, updated_at, version, electronic_address`

// Customer returns a customer only when it belongs to both the account and
// the company, archived or not; otherwise events.ErrNotFound.
func (s *Store) Customer(ctx context.Context, accountID, companyID, id string) (Customer, error) {
	if !validID(id) || !validID(companyID) {
		return Customer{}, events.ErrNotFound
	}
	return one(ctx, s.pool, scanCustomers, customerByID(accountID, companyID, id))
}

var customerLookup = newLookup(customerColumns, "customers", companyOwned)

func customerByID(accountID, companyID, id string) statement {
	return customerLookup.of(id, accountID, companyID)
}

// CustomerStream returns the event stream of a customer of the account's
// company, or events.ErrNotFound.
func (s *Store) CustomerStream(ctx context.Context, accountID, companyID, id string) (string, error) {
	if !validID(id) || !validID(companyID) {
		return "", events.ErrNotFound
	}
	return streamName(ctx, s, customerStreamByID(accountID, companyID, id))
}

var customerStreamLookup = newLookup("stream_name", "customers", companyOwned)

func customerStreamByID(accountID, companyID, id string) statement {
	return customerStreamLookup.of(id, accountID, companyID)
}

// Customers lists a company's active customers (or, with f.Archived, its
// archived ones) in creation order.
func (s *Store) Customers(ctx context.Context, accountID, companyID string, f CustomerFilter, p PageRequest) (Page[Customer], error) {
	return page(ctx, s.pool, scanCustomers, customerList(accountID, companyID, f), p)
}

// customerList is served by customers_active_by_reference when filtered,
// else by customers_active_by_company; the archived list by
// customers_archived_by_reference and customers_archived_by_company.
func customerList(accountID, companyID string, f CustomerFilter) listing {
	return listing{
		table: "customers",
		scope: scope(archivedList("customers", f.Archived), accountID, companyID, f.ExternalReference),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.fix("company_id", companyID)
			q.filter("external_reference", f.ExternalReference)
			q.and(archivedCondition(f.Archived))
			return q.statement(customerColumns, "customers", after, limit)
		},
	}
}

func scanCustomers(rows pgx.Rows, capacity int) ([]Customer, []rowKey, error) {
	defer rows.Close()
	customers := make([]Customer, 0, capacity)
	keys := make([]rowKey, 0, capacity)
	for rows.Next() {
		var (
			c Customer
			k rowKey
		)
		err := rows.Scan(&k.hi, &k.lo, &c.ID, &c.CompanyID, &c.Name, (*[]byte)(&c.Address), &c.Email, &c.ExternalReference,
			(*[]byte)(&c.Identifiers), &c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt, &c.Version,
			(*[]byte)(&c.ElectronicAddress))
		if err != nil {
			return nil, nil, fmt.Errorf("scan customer: %w", err)
		}
		customers = append(customers, c)
		keys = append(keys, k)
	}
	return customers, keys, rows.Err()
}
