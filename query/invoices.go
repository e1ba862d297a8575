package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgerr"
)

// InvoiceSummary is the list form of an invoice.
type InvoiceSummary struct {
	ID, CompanyID, CustomerID, CustomerName, Currency, IssueDate string
	DueDate                                                      *string
	IssuedAt                                                     *time.Time
	Number                                                       *string
	Status                                                       string
	SubtotalMinor, TaxMinor, TotalMinor                          int64
	CreatedAt, UpdatedAt                                         time.Time
	Version                                                      int
	VoidReason                                                   *string
	VoidedAt                                                     *time.Time
	ExternalReference                                            string
}

// Invoice is the full form: the summary plus snapshots, lines and texts.
// Customer, Issuer and Lines are JSON documents as the API renders them
// (the events' CustomerSnapshot, IssuerSnapshot and []InvoiceLine): the read
// model stores that rendering, so a read passes it through undecoded.
type Invoice struct {
	InvoiceSummary
	Customer, Issuer                     json.RawMessage
	Language                             string
	Lines                                json.RawMessage
	PurchaseOrderReference, Notes, Terms string
}

// InvoiceFilter narrows an invoice list; empty fields do not filter.
type InvoiceFilter struct {
	CustomerID, ExternalReference, Status string
}

const summaryColumns = `position_hi, position_lo, id, company_id, customer_id, customer_name, currency,
	issue_date::text, due_date::text, issued_at, number, status, subtotal_minor, tax_minor, total_minor,
	created_at, updated_at, version, void_reason, voided_at, coalesce(external_reference, '')`

const fullColumns = summaryColumns + `, customer, issuer, language, lines,
	coalesce(purchase_order_reference, ''), coalesce(notes, ''), coalesce(terms, '')`

// InvoiceStream returns the event stream of an invoice of the account's
// company, or events.ErrNotFound.
func (s *Store) InvoiceStream(ctx context.Context, accountID, companyID, id string) (string, error) {
	if !validID(id) || !validID(companyID) {
		return "", events.ErrNotFound
	}
	var stream string
	st := invoiceStreamByID(accountID, companyID, id)
	err := s.pool.QueryRow(ctx, st.sql, st.args...).Scan(&stream)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", events.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("invoice stream %s: %w", id, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	return stream, nil
}

func invoiceStreamByID(accountID, companyID, id string) statement {
	return byID("stream_name", "invoices", "account_id = $2 AND company_id = $3", id, accountID, companyID)
}

// Invoice returns an invoice only when it belongs to both the account and
// the company; otherwise events.ErrNotFound.
func (s *Store) Invoice(ctx context.Context, accountID, companyID, id string) (Invoice, error) {
	if !validID(id) || !validID(companyID) {
		return Invoice{}, events.ErrNotFound
	}
	return one(ctx, s.pool, scanInvoices, invoiceByID(accountID, companyID, id))
}

func invoiceByID(accountID, companyID, id string) statement {
	return byID(fullColumns, "invoices", "account_id = $2 AND company_id = $3", id, accountID, companyID)
}

func summaryTargets(i *InvoiceSummary, k *rowKey) []any {
	return []any{&k.hi, &k.lo, &i.ID, &i.CompanyID, &i.CustomerID, &i.CustomerName, &i.Currency, &i.IssueDate,
		&i.DueDate, &i.IssuedAt, &i.Number, &i.Status, &i.SubtotalMinor, &i.TaxMinor, &i.TotalMinor,
		&i.CreatedAt, &i.UpdatedAt, &i.Version, &i.VoidReason, &i.VoidedAt, &i.ExternalReference}
}

// Invoices lists a company's invoices in creation order, summary form.
func (s *Store) Invoices(ctx context.Context, accountID, companyID string, f InvoiceFilter, p PageRequest) (Page[InvoiceSummary], error) {
	return page(ctx, s.pool, scanSummaries, invoiceList(accountID, companyID, f), p)
}

// invoiceList is served by invoices_by_reference, _by_customer or
// _by_status, by the first filter set in that order (an external reference
// names one invoice or a few, a status a third of them or more), else by
// invoices_by_company.
func invoiceList(accountID, companyID string, f InvoiceFilter) listing {
	return listing{
		table: "invoices",
		scope: scope("invoices", accountID, companyID, f.CustomerID, f.ExternalReference, f.Status),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.fix("company_id", companyID)
			q.filter("external_reference", f.ExternalReference)
			q.filter("customer_id", f.CustomerID)
			q.filter("status", f.Status)
			return q.statement(summaryColumns, "invoices", after, limit)
		},
	}
}

func scanSummaries(rows pgx.Rows, capacity int) ([]InvoiceSummary, []rowKey, error) {
	return scanRows(rows, capacity, summaryWire, decodeSummary, summaryTargets)
}

func scanInvoices(rows pgx.Rows, capacity int) ([]Invoice, []rowKey, error) {
	return scanRows(rows, capacity, invoiceWire, decodeInvoice, invoiceTargets)
}

// invoiceTargets are fullColumns' targets. *[]byte: pgx copies json text as
// it is (json.RawMessage would be json.Unmarshal'ed into).
func invoiceTargets(i *Invoice, k *rowKey) []any {
	return append(summaryTargets(&i.InvoiceSummary, k), (*[]byte)(&i.Customer), (*[]byte)(&i.Issuer),
		&i.Language, (*[]byte)(&i.Lines), &i.PurchaseOrderReference, &i.Notes, &i.Terms)
}

// scanRows decodes rows with decode when their columns are layout's (see
// summary_decode.go), and otherwise scans them with pgx into targets.
func scanRows[T any](rows pgx.Rows, capacity int, layout []wireColumn,
	decode func([][]byte, *T, *rowKey) error, targets func(*T, *rowKey) []any) ([]T, []rowKey, error) {
	defer rows.Close()
	fast := decodable(rows.FieldDescriptions(), layout)
	items := make([]T, 0, capacity)
	keys := make([]rowKey, 0, capacity)
	for rows.Next() {
		var zero T
		items, keys = append(items, zero), append(keys, rowKey{})
		item, key := &items[len(items)-1], &keys[len(keys)-1]
		var err error
		if fast {
			err = decode(rows.RawValues(), item, key)
		} else {
			err = rows.Scan(targets(item, key)...)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read invoice: %w", err)
		}
	}
	return items, keys, rows.Err()
}
