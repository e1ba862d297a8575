package transport

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgtest"
	"github.com/invoicing/invoicing/projections"
	"github.com/invoicing/invoicing/query"
)

// The summary an invoice list writes is the one the read model stores
// (invoices.summary, rendered by PostgreSQL: projections/schema/invoices.sql)
// and a get writes the summary's members from the row's columns, rendered
// here. The two are the same bytes for every value a row can hold: every
// character encoding/json escapes (each control character, quote,
// backslash, U+2028, U+2029), the ones it does not (HTML's, DEL, beyond the
// BMP), random strings of them, a timestamp's fraction of every length,
// the first and last years, and each member that may be null or absent.
func TestTheStoredSummaryIsTheAPIsRendering(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, pgtest.NewDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if err := projections.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	if _, err := projections.Install(ctx, pool, projections.All()); err != nil {
		t.Fatal(err)
	}
	rows := summaryEdges()
	for n, r := range rows {
		if _, err := pool.Exec(ctx, insertSummaryRow, r.args(n)...); err != nil {
			t.Fatalf("row %q: %v", r.name, err)
		}
	}
	store := query.New(pool)
	page, err := store.Invoices(ctx, "acct", summaryCompany, query.InvoiceFilter{}, query.PageRequest{Limit: query.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Items) != len(rows) {
		t.Fatalf("%d listed, want %d", len(page.Items), len(rows))
	}
	for n, r := range rows {
		inv, err := store.Invoice(ctx, "acct", summaryCompany, r.id)
		if err != nil {
			t.Fatal(err)
		}
		full, err := invoiceFromQuery(inv)
		if err != nil {
			t.Fatal(err)
		}
		want, got := full.invoiceSummaryJSON.appendJSON(nil), page.Items[n]
		if string(got) != string(want) || !json.Valid(got) {
			t.Errorf("row %q: stored\n%s\nrendered\n%s", r.name, got, want)
		}
	}
}

const summaryCompany = "8f0c6a8e-0000-4000-8000-00000000000c"

// insertSummaryRow writes an invoice row with the values a summary reads
// (the documents are placeholders: no summary member reads them).
const insertSummaryRow = `INSERT INTO invoices (position_hi, position_lo, id, company_id, account_id, customer_id,
	stream_name, customer_name, customer, issuer, currency, language, issue_date, due_date, issued_at, number,
	status, void_reason, voided_at, lines, subtotal_minor, tax_minor, total_minor, external_reference, document,
	amount_credited_minor, amount_paid_minor, amount_due_minor, amount_refundable_minor, payment_status,
	created_at, updated_at, version)
VALUES (0, $1, $2::uuid, '` + summaryCompany + `', 'acct', '8f0c6a8e-0000-4000-8000-00000000000d',
	'invoice-' || $2::text, $3, '{}', '{}', $4, 'en', $5, $6, $7, $8, $9, $10, $11, '[]', $12, $13, $14, $15, '{}',
	$16, $17, $18, $19, $20, $21, $22, $23)`

// summaryRow is one row of the test: its name says what edge it holds.
type summaryRow struct {
	name, id, customerName, currency, issueDate, status, paymentStatus string
	dueDate, number, voidReason, externalRef                           *string
	issuedAt, voidedAt                                                 *time.Time
	createdAt, updatedAt                                               time.Time
	subtotal, tax, total, credited, paid, due, refundable              int64
	version                                                            int32
}

func (r summaryRow) args(position int) []any {
	return []any{int64(position) + 1, r.id, r.customerName, r.currency, r.issueDate,
		r.dueDate, r.issuedAt, r.number, r.status, r.voidReason, r.voidedAt, r.subtotal, r.tax, r.total,
		r.externalRef, r.credited, r.paid, r.due, r.refundable, r.paymentStatus, r.createdAt, r.updatedAt, r.version}
}

// summaryEdges are the rows, in the list's order (args).
func summaryEdges() []summaryRow {
	base := time.Date(2026, 3, 1, 9, 30, 15, 0, time.UTC)
	var controls strings.Builder
	for c := rune(1); c < 0x20; c++ {
		controls.WriteRune(c)
	}
	names := []string{
		"Globex", controls.String(), `quote " backslash \ slash /`, "line\u2028paragraph\u2029end",
		"<html> & 'apostrophe' \x7f", "Müller 😀 中文", "", "trailing backslash \\",
	}
	rnd := rand.New(rand.NewPCG(25, 9))
	alphabet := []rune("aZ09 \"\\/\t\n\r\b\f\x01\x1f\x7f<>&'\u00e9\u2028\u2029\u20ac😀")
	for range 30 {
		r := make([]rune, rnd.IntN(12))
		for i := range r {
			r[i] = alphabet[rnd.IntN(len(alphabet))]
		}
		names = append(names, string(r))
	}
	fractions := []time.Duration{0, 100 * time.Millisecond, 120 * time.Millisecond, 123456 * time.Microsecond,
		time.Microsecond, 10 * time.Microsecond, 999999 * time.Microsecond}
	var rows []summaryRow
	for n, name := range names {
		at := base.Add(time.Duration(n)*time.Hour + fractions[n%len(fractions)])
		r := summaryRow{name: name, id: fmt.Sprintf("8f0c6a8e-0000-4000-8000-%012d", n), customerName: name,
			currency: "EUR", issueDate: "2026-03-01", status: "draft", paymentStatus: "unpaid",
			createdAt: at, updatedAt: at.Add(fractions[(n+3)%len(fractions)]), version: int32(n + 1),
			subtotal: int64(n) * 1000, tax: int64(n) * 190, total: int64(n) * 1190, due: int64(n) * 1190}
		switch n % 4 {
		case 1: // issued, with every optional member
			r.status, r.number, r.issuedAt, r.dueDate = "issued", &name, &at, ptr("2026-03-31")
			r.externalRef, r.paid, r.due, r.paymentStatus = &name, 100, r.total-100, "partially_paid"
		case 2: // void, its reason this row's text
			r.status, r.voidReason, r.voidedAt, r.due = "void", &name, &r.updatedAt, 0
			r.credited, r.refundable = 5, 7
		case 3: // an empty reference is no reference
			r.externalRef = ptr("")
		}
		rows = append(rows, r)
	}
	first, last := time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	rows = append(rows,
		summaryRow{name: "the first year", id: "8f0c6a8e-0000-4000-8000-100000000001", customerName: "a", currency: "EUR",
			issueDate: "0001-01-01", dueDate: ptr("0001-01-02"), status: "draft", paymentStatus: "paid",
			createdAt: first, updatedAt: first, version: 1},
		summaryRow{name: "the last year", id: "8f0c6a8e-0000-4000-8000-100000000002", customerName: "b", currency: "USD",
			issueDate: "9999-12-31", status: "issued", number: ptr("INV-9"), issuedAt: &last, paymentStatus: "paid",
			createdAt: last, updatedAt: last, version: 2147483647, total: 9007199254740991, subtotal: 9007199254740991},
		summaryRow{name: "another zone's clock", id: "8f0c6a8e-0000-4000-8000-100000000003", customerName: "c",
			currency: "JPY", issueDate: "2026-12-31", status: "draft", paymentStatus: "unpaid",
			createdAt: base.In(time.FixedZone("+05:30", 5*3600+1800)), updatedAt: base.In(time.FixedZone("-08:00", -8*3600)), version: 1},
	)
	return rows
}

func ptr[T any](v T) *T { return &v }
