package query

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
)

// Company is a row of the companies read model. Address and Identifiers
// are JSON as the API renders them (events.Address, []events.Identifier):
// the read model stores that rendering, so a read passes it through.
type Company struct {
	ID                      string
	LegalName               string
	TradingName             string
	Address                 json.RawMessage
	DefaultCurrency         string
	DefaultLanguage         string
	DefaultPaymentTermsDays int
	Email                   string
	ExternalReference       string
	Identifiers             json.RawMessage
	InvoiceNumberPrefix     string
	CreditNoteNumberPrefix  string
	// BankAccount and ElectronicAddress are JSON as the API renders them
	// (events.BankAccount, events.ElectronicAddress), nil when absent.
	BankAccount       json.RawMessage
	ElectronicAddress json.RawMessage
	ArchivedAt        *time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	Version           int
}

// CompanyFilter narrows a company list; empty fields do not filter.
type CompanyFilter struct {
	ExternalReference string
	// Archived lists the archived companies instead of the active ones.
	Archived bool
}

const companyColumns = `position_hi, position_lo, id::text, legal_name, coalesce(trading_name, ''), address,
	default_currency, default_language, default_payment_terms_days, coalesce(email, ''),
	coalesce(external_reference, ''), identifiers, invoice_number_prefix, archived_at, created_at, updated_at, version,
	bank_account, electronic_address, credit_note_number_prefix`

// Company returns the account's company, archived or not, or events.ErrNotFound.
func (s *Store) Company(ctx context.Context, accountID, id string) (Company, error) {
	if !validID(id) {
		return Company{}, events.ErrNotFound
	}
	return one(ctx, s.pool, scanCompanies, companyByID(accountID, id))
}

var companyLookup = newLookup(companyColumns, "companies", accountOwned)

func companyByID(accountID, id string) statement {
	return companyLookup.of(id, accountID)
}

// CompanyStream returns the event stream of the account's company, or
// events.ErrNotFound.
func (s *Store) CompanyStream(ctx context.Context, accountID, id string) (string, error) {
	if !validID(id) {
		return "", events.ErrNotFound
	}
	return streamName(ctx, s, companyStreamByID(accountID, id))
}

var companyStreamLookup = newLookup("stream_name", "companies", accountOwned)

func companyStreamByID(accountID, id string) statement {
	return companyStreamLookup.of(id, accountID)
}

// Companies lists the account's active companies (or, with f.Archived,
// its archived ones) in creation order.
func (s *Store) Companies(ctx context.Context, accountID string, f CompanyFilter, p PageRequest) (Page[Company], error) {
	return page(ctx, s.pool, scanCompanies, companyList(accountID, f), p)
}

// companyList is served by companies_active_by_reference when filtered,
// else by companies_active_by_account; the archived list by
// companies_archived_by_reference and companies_archived_by_account.
func companyList(accountID string, f CompanyFilter) listing {
	return listing{
		table: "companies",
		scope: scope(archivedList("companies", f.Archived), accountID, f.ExternalReference),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.filter("external_reference", f.ExternalReference)
			q.and(archivedCondition(f.Archived))
			return q.statement(companyColumns, "companies", after, limit)
		},
	}
}

// archivedList names a list of table's archived rows apart from its active
// one in cursor scopes; the active list keeps the name it always had, so
// its cursors stay valid.
func archivedList(table string, archived bool) string {
	if archived {
		return table + "/archived"
	}
	return table
}

// archivedCondition selects the archived rows or the active ones; each
// list's index is partial on it.
func archivedCondition(archived bool) string {
	if archived {
		return "archived_at IS NOT NULL"
	}
	return "archived_at IS NULL"
}

func scanCompanies(rows pgx.Rows, capacity int) ([]Company, []rowKey, error) {
	defer rows.Close()
	companies := make([]Company, 0, capacity)
	keys := make([]rowKey, 0, capacity)
	for rows.Next() {
		var (
			c Company
			k rowKey
		)
		// *[]byte: pgx copies json text as it is (json.RawMessage would be
		// json.Unmarshal'ed into).
		err := rows.Scan(&k.hi, &k.lo, &c.ID, &c.LegalName, &c.TradingName, (*[]byte)(&c.Address), &c.DefaultCurrency,
			&c.DefaultLanguage, &c.DefaultPaymentTermsDays, &c.Email, &c.ExternalReference,
			(*[]byte)(&c.Identifiers), &c.InvoiceNumberPrefix, &c.ArchivedAt, &c.CreatedAt, &c.UpdatedAt, &c.Version,
			(*[]byte)(&c.BankAccount), (*[]byte)(&c.ElectronicAddress), &c.CreditNoteNumberPrefix)
		if err != nil {
			return nil, nil, fmt.Errorf("scan company: %w", err)
		}
		companies = append(companies, c)
		keys = append(keys, k)
	}
	return companies, keys, rows.Err()
}
