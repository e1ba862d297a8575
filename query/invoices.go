package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
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
	// The settlement (events.Settlement), as the projection copied it.
	AmountCreditedMinor, AmountPaidMinor  int64
	AmountDueMinor, AmountRefundableMinor int64
	PaymentStatus                         string
	CreatedAt, UpdatedAt                  time.Time
	Version                               int
	VoidReason                            *string
	VoidedAt                              *time.Time
	ExternalReference                     string
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
	// Document is the JSON of events.InvoiceDocumentFields as the API
	// renders them: the document terms and the VAT breakdown.
	Document json.RawMessage
	// Payments are the invoice's payments in the order recorded, the
	// reversed ones included.
	Payments []Payment
	// payments is Payments as the statement reads them (paymentsColumn).
	payments []byte
}

// Payment is a payment of an invoice and, once reversed, its reversal.
type Payment struct {
	ID          string `json:"id"`
	AmountMinor int64  `json:"amount_minor"`
	PaidOn      string `json:"paid_on"`
	// Method and Reference are "" when the payment names none.
	Method     string    `json:"method"`
	Reference  string    `json:"reference"`
	RecordedAt time.Time `json:"recorded_at"`
	// ReversedAt is nil until the payment is reversed; ReversalReason may
	// be "" even then.
	ReversedAt     *time.Time `json:"reversed_at"`
	ReversalReason string     `json:"reversal_reason"`
}

// paymentsColumn reads an invoice's payments in the statement that reads
// the invoice (invoiceByID's row is "found"), so that both come from one
// snapshot: the payments always add up to the row's amount_paid_minor. An
// invoice that never had a payment (has_payments, most) skips the look. The
// look is a function (projections' migration 007, where its statement is),
// which PostgreSQL sets up only when it is called: a subquery here was set
// up for every GET, with or without payments. The json is decoded into
// Payments (decodePayments); its timestamps carry their offset.
const paymentsColumn = `CASE WHEN found.has_payments THEN invoice_payments_json(found.id) ELSE '[]'::json END`

// decodePayments decodes what paymentsColumn read into Payments. Most
// invoices have none: their '[]' needs no decoder.
func (i *Invoice) decodePayments() error {
	i.Payments = []Payment{}
	if string(i.payments) == "[]" {
		i.payments = nil
		return nil
	}
	if err := json.Unmarshal(i.payments, &i.Payments); err != nil {
		return fmt.Errorf("payments of invoice %s: %w", i.ID, err)
	}
	i.payments = nil
	return nil
}

// InvoiceFilter narrows an invoice list; empty fields do not filter.
type InvoiceFilter struct {
	CustomerID, ExternalReference, Status, PaymentStatus string
}

// column is one column an invoice read selects: its SQL, its type on the
// wire, and the field it is read into (pgx's scan target, and what the wire
// decoder writes). summaryFields and invoiceFields are the one statement of
// an invoice read's columns and their order: the select list, the scan
// targets and the wire layout are all made from them.
type column[T any] struct {
	sql   string
	wire  wireColumn
	field func(*T, *rowKey) any
}

// summaryFields are the list form's columns, led by the row's key.
var summaryFields = []column[InvoiceSummary]{
	{"position_hi", int8Binary, func(_ *InvoiceSummary, k *rowKey) any { return &k.hi }},
	{"position_lo", int8Binary, func(_ *InvoiceSummary, k *rowKey) any { return &k.lo }},
	{"id", uuidBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.ID }},
	{"company_id", uuidBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.CompanyID }},
	{"customer_id", uuidBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.CustomerID }},
	{"customer_name", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.CustomerName }},
	{"currency", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.Currency }},
	{"issue_date::text", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.IssueDate }},
	{"due_date::text", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.DueDate }},
	{"issued_at", timestamptzBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.IssuedAt }},
	{"number", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.Number }},
	{"status", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.Status }},
	{"subtotal_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.SubtotalMinor }},
	{"tax_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.TaxMinor }},
	{"total_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.TotalMinor }},
	{"amount_credited_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.AmountCreditedMinor }},
	{"amount_paid_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.AmountPaidMinor }},
	{"amount_due_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.AmountDueMinor }},
	{"amount_refundable_minor", int8Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.AmountRefundableMinor }},
	{"payment_status", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.PaymentStatus }},
	{"created_at", timestamptzBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.CreatedAt }},
	{"updated_at", timestamptzBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.UpdatedAt }},
	{"version", int4Binary, func(i *InvoiceSummary, _ *rowKey) any { return &i.Version }},
	{"void_reason", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.VoidReason }},
	{"voided_at", timestamptzBinary, func(i *InvoiceSummary, _ *rowKey) any { return &i.VoidedAt }},
	{"coalesce(external_reference, '')", text, func(i *InvoiceSummary, _ *rowKey) any { return &i.ExternalReference }},
}

// byCustomerFields are summaryFields as the list by customer reads them:
// from invoices_by_customer alone, which holds every other column (see
// projections/schema), and the void reason from the row, by its primary
// key, for a void invoice only. A reason of up to 500 characters could make
// an index entry too long.
var byCustomerFields = withSQL(summaryFields, "void_reason", `CASE WHEN status = 'void'
	THEN (SELECT voided.void_reason FROM invoices voided WHERE voided.id = invoices.id) END`)

// withSQL is cols with the column read as name read by sql instead.
func withSQL[T any](cols []column[T], name, sql string) []column[T] {
	out := slices.Clone(cols)
	for n := range out {
		if out[n].sql == name {
			out[n].sql = sql
		}
	}
	return out
}

// invoiceFields are the full form's columns: the summary's, then the
// snapshots, lines and texts. The documents are read as *[]byte: pgx copies
// their text as it is (json.RawMessage would be json.Unmarshal'ed into).
var invoiceFields = append(fullForm(summaryFields),
	column[Invoice]{"customer", documentText, func(i *Invoice, _ *rowKey) any { return (*[]byte)(&i.Customer) }},
	column[Invoice]{"issuer", documentText, func(i *Invoice, _ *rowKey) any { return (*[]byte)(&i.Issuer) }},
	column[Invoice]{"language", text, func(i *Invoice, _ *rowKey) any { return &i.Language }},
	column[Invoice]{"lines", documentText, func(i *Invoice, _ *rowKey) any { return (*[]byte)(&i.Lines) }},
	column[Invoice]{"coalesce(purchase_order_reference, '')", text, func(i *Invoice, _ *rowKey) any { return &i.PurchaseOrderReference }},
	column[Invoice]{"coalesce(notes, '')", text, func(i *Invoice, _ *rowKey) any { return &i.Notes }},
	column[Invoice]{"coalesce(terms, '')", text, func(i *Invoice, _ *rowKey) any { return &i.Terms }},
	column[Invoice]{"document", documentText, func(i *Invoice, _ *rowKey) any { return (*[]byte)(&i.Document) }},
	column[Invoice]{paymentsColumn, jsonText, func(i *Invoice, _ *rowKey) any { return &i.payments }},
)

// fullForm reads the summary's columns into an Invoice's summary.
func fullForm(cols []column[InvoiceSummary]) []column[Invoice] {
	out := make([]column[Invoice], len(cols))
	for n, c := range cols {
		out[n] = column[Invoice]{c.sql, c.wire, func(i *Invoice, k *rowKey) any { return c.field(&i.InvoiceSummary, k) }}
	}
	return out
}

// What an invoice read needs, made from its columns.
var (
	summaryColumns, fullColumns    = selectList(summaryFields), selectList(invoiceFields)
	byCustomerColumns              = selectList(byCustomerFields)
	summaryTargets, invoiceTargets = scanTargets(summaryFields), scanTargets(invoiceFields)
	summaryWire, invoiceWire       = wireLayout(summaryFields), wireLayout(invoiceFields)
	decodeSummary, decodeInvoice   = wireDecoder(summaryFields), wireDecoder(invoiceFields)
)

func selectList[T any](cols []column[T]) string {
	sql := make([]string, len(cols))
	for n, c := range cols {
		sql[n] = c.sql
	}
	return strings.Join(sql, ", ")
}

// scanTargets are the pointers pgx's Scan fills, in column order.
func scanTargets[T any](cols []column[T]) func(*T, *rowKey) []any {
	return func(item *T, k *rowKey) []any {
		targets := make([]any, len(cols))
		for n, c := range cols {
			targets[n] = c.field(item, k)
		}
		return targets
	}
}

// InvoiceStream returns the event stream of an invoice of the account's
// company, or events.ErrNotFound.
func (s *Store) InvoiceStream(ctx context.Context, accountID, companyID, id string) (string, error) {
	if !validID(id) || !validID(companyID) {
		return "", events.ErrNotFound
	}
	return streamName(ctx, s, invoiceStreamByID(accountID, companyID, id))
}

// streamName runs a stream lookup (companyStreamByID, ...): the record's
// stream, or events.ErrNotFound.
func streamName(ctx context.Context, s *Store, st statement) (string, error) {
	var stream string
	err := s.pool.QueryRow(ctx, st.sql, st.args...).Scan(&stream)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", events.ErrNotFound
	}
	if err != nil {
		return "", fmt.Errorf("stream of %v: %w", st.args[0], pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	return stream, nil
}

var invoiceStreamLookup = newLookup("stream_name", "invoices", companyOwned)

func invoiceStreamByID(accountID, companyID, id string) statement {
	return invoiceStreamLookup.of(id, accountID, companyID)
}

// Invoice returns an invoice only when it belongs to both the account and
// the company; otherwise events.ErrNotFound.
func (s *Store) Invoice(ctx context.Context, accountID, companyID, id string) (Invoice, error) {
	if !validID(id) || !validID(companyID) {
		return Invoice{}, events.ErrNotFound
	}
	inv, err := one(ctx, s.pool, scanInvoices, invoiceByID(accountID, companyID, id))
	if err != nil {
		return Invoice{}, err
	}
	return inv, inv.decodePayments()
}

var invoiceLookup = newLookup(fullColumns, "invoices", companyOwned)

func invoiceByID(accountID, companyID, id string) statement {
	return invoiceLookup.of(id, accountID, companyID)
}

// Invoices lists a company's invoices in creation order, summary form.
func (s *Store) Invoices(ctx context.Context, accountID, companyID string, f InvoiceFilter, p PageRequest) (Page[InvoiceSummary], error) {
	return page(ctx, s.pool, scanSummaries, invoiceList(accountID, companyID, f), p)
}

// invoiceList is served by invoices_by_reference, _by_customer, _by_status
// or _by_payment_status, by the first filter set in that order (an
// external reference names one invoice or a few, a status or a payment
// status a third of them or more), else by invoices_by_company. The list by
// customer reads its index alone (byCustomerFields).
func invoiceList(accountID, companyID string, f InvoiceFilter) listing {
	parts := []string{"invoices", accountID, companyID, f.CustomerID, f.ExternalReference, f.Status}
	if f.PaymentStatus != "" {
		// Only when set, so that the cursors of the lists without it,
		// issued before it existed, stay valid (parts are length-prefixed:
		// one more part makes another scope).
		parts = append(parts, f.PaymentStatus)
	}
	return listing{
		table: "invoices",
		scope: scope(parts...),
		page: func(after rowKey, limit int) statement {
			q := &keyset{}
			q.fix("account_id", accountID)
			q.fix("company_id", companyID)
			q.filter("external_reference", f.ExternalReference)
			q.filter("customer_id", f.CustomerID)
			q.filter("status", f.Status)
			q.filter("payment_status", f.PaymentStatus)
			columns := summaryColumns
			if q.fixed == "customer_id" {
				columns = byCustomerColumns
			}
			return q.statement(columns, "invoices", after, limit)
		},
	}
}

func scanSummaries(rows pgx.Rows, capacity int) ([]InvoiceSummary, []rowKey, error) {
	return scanRows(rows, capacity, summaryWire, decodeSummary, summaryTargets)
}

func scanInvoices(rows pgx.Rows, capacity int) ([]Invoice, []rowKey, error) {
	return scanRows(rows, capacity, invoiceWire, decodeInvoice, invoiceTargets)
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
