package query

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/jackc/pgx/v5"
)

// The list's own statement, over rows holding every edge a summary can
// have, decodes to exactly what pgx's Scan makes of the same rows; and the
// list really takes the decoder (a column change that sends it back to Scan
// fails here, not silently).
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

	st := invoiceList("acct", company, InvoiceFilter{}).page(rowKey{}, MaxLimit)
	scan := func(decode bool) []InvoiceSummary {
		rows, err := f.pool.Query(context.Background(), st.sql, st.args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		if !decodableSummaries(rows.FieldDescriptions()) {
			t.Fatalf("the list's columns are not what decodeSummary reads: %v", rows.FieldDescriptions())
		}
		var out []InvoiceSummary
		for rows.Next() {
			var (
				i InvoiceSummary
				k rowKey
			)
			if decode {
				err = decodeSummary(rows.RawValues(), &i, &k)
			} else {
				err = rows.Scan(summaryTargets(&i, &k)...)
			}
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, i)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return out
	}
	decoded, scanned := scan(true), scan(false)
	if len(decoded) != len(ids) {
		t.Fatalf("%d rows, want %d", len(decoded), len(ids))
	}
	if !reflect.DeepEqual(decoded, scanned) {
		t.Fatalf("decoded:\n%+v\nscanned:\n%+v", decoded, scanned)
	}
}

// A NULL where the summary has none, or an infinite timestamp, is an error,
// never a zero value.
func TestSummaryDecodeRefusesWhatScanRefuses(t *testing.T) {
	f := newFixture(t)
	for name, sql := range map[string]string{
		"NULL id":             `SELECT 1::int8, 2::int8, NULL::text, 'c', 'u', 'n', 'EUR', '2026-01-01', NULL::text, NULL::timestamptz, NULL::text, 'draft', 1::int8, 0::int8, 1::int8, now(), now(), 1, NULL::text, NULL::timestamptz, ''`,
		"infinite created_at": `SELECT 1::int8, 2::int8, 'i', 'c', 'u', 'n', 'EUR', '2026-01-01', NULL::text, NULL::timestamptz, NULL::text, 'draft', 1::int8, 0::int8, 1::int8, 'infinity'::timestamptz, now(), 1, NULL::text, NULL::timestamptz, ''`,
	} {
		var i InvoiceSummary
		var k rowKey
		err := pgx.BeginFunc(context.Background(), f.pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(context.Background(), sql)
			if err != nil {
				return err
			}
			defer rows.Close()
			if !decodableSummaries(rows.FieldDescriptions()) {
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
