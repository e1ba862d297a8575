package query

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The list's and the get's own statements, over rows holding every edge an
// invoice can have, decode to exactly what pgx's Scan makes of the same
// rows; and both really take the decoder (a column change that sends them
// back to Scan fails here, not silently).
func TestSummaryRowsDecodeAsPgxScansThem(t *testing.T) {
	f := newFixture(t)
	company, customer := "8f0c6a8e-0000-4000-8000-000000000001", "8f0c6a8e-0000-4000-8000-000000000002"
	ids := []string{
		f.invoice("acct", company, customer, "").InvoiceID,
		f.invoice("acct", company, customer, "ref-ü").InvoiceID,
		f.invoice("acct", company, customer, "").InvoiceID,
	}
	f.exec(`UPDATE invoices SET status = 'issued', number = 'INV-ü-1', issued_at = '1999-12-31 23:59:59.999999+00',
		customer_name = E'Müller \u2028 "q" \\ \t', due_date = NULL, total_minor = $2, tax_minor = 0,
		version = 2147483647, updated_at = '2262-04-12 00:00:00.000001+00' WHERE id = $1`, ids[0], int64(math.MaxInt32)*4194303)
	f.exec(`UPDATE invoices SET status = 'void', void_reason = 'typo', voided_at = '1970-01-01 00:00:00+00',
		created_at = '0001-01-01 00:00:00+00' WHERE id = $1`, ids[2])

	list := invoiceList("acct", company, InvoiceFilter{}).page(rowKey{}, MaxLimit)
	decoded, scanned := readBothWays(t, f, list, summaryWire, decodeSummary, summaryTargets)
	if len(decoded) != len(ids) {
		t.Fatalf("%d rows, want %d", len(decoded), len(ids))
	}
	if !reflect.DeepEqual(decoded, scanned) {
		t.Fatalf("decoded:\n%+v\nscanned:\n%+v", decoded, scanned)
	}
	for _, id := range ids {
		decoded, scanned := readBothWays(t, f, invoiceByID("acct", company, id), invoiceWire, decodeInvoice, invoiceTargets)
		if len(decoded) != 1 || !reflect.DeepEqual(decoded, scanned) {
			t.Fatalf("invoice %s decoded:\n%+v\nscanned:\n%+v", id, decoded, scanned)
		}
	}
}

// readBothWays runs st twice: rows decoded by decode, and scanned by pgx.
func readBothWays[T any](t *testing.T, f *fixture, st statement, layout []wireColumn,
	decode func([][]byte, *T, *rowKey) error, targets func(*T, *rowKey) []any) (decoded, scanned []T) {
	t.Helper()
	read := func(fast bool) []T {
		rows, err := f.pool.Query(context.Background(), st.sql, st.args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !decodable(rows.FieldDescriptions(), layout) {
			t.Fatalf("the columns are not what the decoder reads: %v", rows.FieldDescriptions())
		}
		var out []T
		for rows.Next() {
			var (
				item T
				k    rowKey
			)
			if fast {
				err = decode(rows.RawValues(), &item, &k)
			} else {
				err = rows.Scan(targets(&item, &k)...)
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, item)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	return read(true), read(false)
}

// A NULL where the summary has none, or an infinite timestamp, is an error,
// never a zero value.
func TestSummaryDecodeRefusesWhatScanRefuses(t *testing.T) {
	f := newFixture(t)
	for name, sql := range map[string]string{
		"NULL id":             `SELECT 1::int8, 2::int8, NULL::uuid, gen_random_uuid(), gen_random_uuid(), 'n', 'EUR', '2026-01-01', NULL::text, NULL::timestamptz, NULL::text, 'draft', 1::int8, 0::int8, 1::int8, 0::int8, 0::int8, 1::int8, 0::int8, 'unpaid', now(), now(), 1, NULL::text, NULL::timestamptz, ''`,
		"infinite created_at": `SELECT 1::int8, 2::int8, gen_random_uuid(), gen_random_uuid(), gen_random_uuid(), 'n', 'EUR', '2026-01-01', NULL::text, NULL::timestamptz, NULL::text, 'draft', 1::int8, 0::int8, 1::int8, 0::int8, 0::int8, 1::int8, 0::int8, 'unpaid', 'infinity'::timestamptz, now(), 1, NULL::text, NULL::timestamptz, ''`,
	} {
		var i InvoiceSummary
		var k rowKey
		err := pgx.BeginFunc(context.Background(), f.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(context.Background(), sql)
			if err != nil {
				return err
			}
			defer rows.Close()
			if !decodable(rows.FieldDescriptions(), summaryWire) {
				t.Fatalf("%s: not decodable: %v", name, rows.FieldDescriptions())
			}
			rows.Next()
			return decodeSummary(rows.RawValues(), &i, &k)
		})
		if err == nil {
			t.Errorf("%s: decoded without an error: %+v", name, i)
		}
	}
}

// A pool whose results come as text (simple protocol, as behind a
// transaction-pooling proxy) is read by pgx's Scan, to the same values.
func TestTextResultsAreScannedToTheSameInvoices(t *testing.T) {
	f := newFixture(t)
	company, customer := "8f0c6a8e-0000-4000-8000-000000000001", "8f0c6a8e-0000-4000-8000-000000000002"
	id := f.invoice("acct", company, customer, "ref-1").InvoiceID
	f.invoice("acct", company, customer, "")
	cfg, err := pgxpool.ParseConfig(f.pool.Config().ConnString())
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
	textPool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer textPool.Close()
	ctx := context.Background()
	for _, store := range []*Store{f.store, New(textPool)} {
		page, err := store.Invoices(ctx, "acct", company, InvoiceFilter{}, PageRequest{Limit: MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		inv, err := store.Invoice(ctx, "acct", company, id)
		if err != nil {
			t.Fatal(err)
		}
		want, _ := f.store.Invoice(ctx, "acct", company, id)
		if len(page.Items) != 2 || page.Items[0].ID != id || !reflect.DeepEqual(inv, want) {
			t.Fatalf("page %+v\ninvoice %+v\nwant %+v", page.Items, inv, want)
		}
	}
}
