package projections

import (
	"context"
	"strings"
	"testing"
)

// The summary stays in its row as it is, neither compressed nor moved to
// the TOAST table, in a row past the 2 KB threshold where it is the
// largest column left once the documents are compressed: a list reads it
// from a hundred rows.
func TestTheSummaryStaysInItsRow(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	// Documents PostgreSQL cannot compress (md5 digests) and a name long
	// enough to make the summary the largest value left.
	random := `(SELECT string_agg(md5(g::text || $1), '') FROM generate_series(1, 18) g)`
	_, err := e.pool.Exec(ctx, `INSERT INTO invoices (position_hi, position_lo, id, company_id, account_id, customer_id,
		stream_name, customer_name, customer, issuer, currency, language, issue_date, status, lines, subtotal_minor,
		tax_minor, total_minor, document, amount_credited_minor, amount_paid_minor, amount_due_minor,
		amount_refundable_minor, payment_status, created_at, updated_at, version)
	VALUES (0, 1, gen_random_uuid(), gen_random_uuid(), 'acct', gen_random_uuid(), 'invoice-1', $2,
		`+random+`, `+random+`, 'EUR', 'en', '2026-01-01', 'draft', $3, 0, 0, 0, '{}', 0, 0, 0, 0, 'unpaid', now(), now(), 1)`,
		"a", strings.Repeat("Globex ", 30), "["+strings.Repeat(`{"description":"Consulting","quantity":"1"},`, 60)+"{}]")
	if err != nil {
		t.Fatal(err)
	}
	var compression *string
	var stored, length, values int
	err = e.pool.QueryRow(ctx, `SELECT pg_column_compression(summary), pg_column_size(summary), octet_length(summary),
		octet_length(summary) + octet_length(customer) + octet_length(issuer) + octet_length(lines) FROM invoices`).Scan(&compression, &stored, &length, &values)
	if err != nil {
		t.Fatal(err)
	}
	if compression != nil || stored < length {
		t.Errorf("summary of %d bytes stored in %d (compression %v)", length, stored, compression)
	}
	// An uncompressed value moved out of the row is a TOAST value of its
	// length (pg_column_size tells its length wherever it is).
	var toast string
	if err := e.pool.QueryRow(ctx, `SELECT reltoastrelid::regclass::text FROM pg_class WHERE oid = 'invoices'::regclass`).Scan(&toast); err != nil {
		t.Fatal(err)
	}
	var moved int
	err = e.pool.QueryRow(ctx, `SELECT count(*) FROM (SELECT sum(octet_length(chunk_data)) AS n FROM `+toast+
		` GROUP BY chunk_id) c WHERE n = $1`, length).Scan(&moved)
	if err != nil || moved != 0 {
		t.Errorf("the summary is in the TOAST table (%d values of its length; %v)", moved, err)
	}
	if values < 2032 {
		t.Errorf("%d bytes of values: the row is under the threshold, the test shows nothing", values)
	}
}
