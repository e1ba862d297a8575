package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Company is a row of the companies read model.
type Company struct {
	ID                      string
	LegalName               string
	TradingName             string
	Address                 events.Address
	DefaultCurrency         string
	DefaultLanguage         string
	DefaultPaymentTermsDays int
	Email                   string
	ExternalReference       string
	Identifiers             []events.Identifier
	InvoiceNumberPrefix     string
	ArchivedAt              *time.Time
	CreatedAt               time.Time
	UpdatedAt               time.Time
	Version                 int
}

// CompanyFilter narrows a company list; empty fields do not filter.
type CompanyFilter struct {
	ExternalReference string
}

const companyColumns = `position_hi, position_lo, id::text, legal_name, coalesce(trading_name, ''), address,
	default_currency, default_language, default_payment_terms_days, coalesce(email, ''),
	coalesce(external_reference, ''), identifiers, invoice_number_prefix, archived_at, created_at, updated_at, version`

// Company returns the account's company, archived or not, or ErrNotFound.
func (s *Store) Company(ctx context.Context, accountID, id string) (Company, error) {
	if !validID(id) {
		return Company{}, ErrNotFound
	}
	return one(ctx, s.pool, scanCompanies, `SELECT `+companyColumns+` FROM companies WHERE id = $1 AND account_id = $2`, id, accountID)
}

// Companies lists the account's active companies in creation order.
func (s *Store) Companies(ctx context.Context, accountID string, f CompanyFilter, p PageRequest) (Page[Company], error) {
	q := &keyset{}
	q.where("account_id = ?", accountID)
	q.and("archived_at IS NULL")
	q.filter("external_reference = ?", f.ExternalReference)
	return page(ctx, s.pool, scanCompanies, scope("companies", accountID, f.ExternalReference), p, q, companyColumns, "companies")
}

func scanCompanies(rows pgx.Rows) ([]Company, []rowKey, error) {
	defer rows.Close()
	companies := []Company{}
	var keys []rowKey
	for rows.Next() {
		var (
			c                    Company
			k                    rowKey
			address, identifiers []byte
		)
		err := rows.Scan(&k.hi, &k.lo, &c.ID, &c.LegalName, &c.TradingName, &address, &c.DefaultCurrency,
			&c.DefaultLanguage, &c.DefaultPaymentTermsDays, &c.Email, &c.ExternalReference,
			&identifiers, &c.InvoiceNumberPrefix, &c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt, &c.Version)
		if err != nil {
			return nil, nil, fmt.Errorf("scan company: %w", err)
		}
		if err := decodeValues(address, &c.Address, identifiers, &c.Identifiers); err != nil {
			return nil, nil, fmt.Errorf("company %s: %w", c.ID, err)
		}
		companies = append(companies, c)
		keys = append(keys, k)
	}
	return companies, keys, rows.Err()
}

func decodeValues(address []byte, a *events.Address, identifiers []byte, ids *[]events.Identifier) error {
	return errors.Join(json.Unmarshal(address, a), json.Unmarshal(identifiers, ids))
}
