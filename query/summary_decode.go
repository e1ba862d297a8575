package query

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// A list of 100 invoices is 2,100 values. pgx's Scan finds a plan for each
// value of each row (and the []any of pointers makes every row escape to the
// heap): about a quarter of the service's CPU on a list, measured. The
// summary's columns have four types, so its rows are decoded here from the
// wire, when the result's columns are the types and formats expected
// (summaryWire); any other result is scanned by pgx as before.

// wireColumn is a column's type and wire format.
type wireColumn struct {
	oid    uint32
	format int16
}

var (
	int8Binary        = wireColumn{pgtype.Int8OID, pgtype.BinaryFormatCode}
	int4Binary        = wireColumn{pgtype.Int4OID, pgtype.BinaryFormatCode}
	timestamptzBinary = wireColumn{pgtype.TimestamptzOID, pgtype.BinaryFormatCode}
)

// summaryWire is summaryColumns as pgx asks for them; text columns may come
// in either format (their bytes are the same).
var summaryWire = [...]wireColumn{
	int8Binary, int8Binary, // position_hi, position_lo
	{oid: pgtype.TextOID}, {oid: pgtype.TextOID}, {oid: pgtype.TextOID}, // id, company_id, customer_id
	{oid: pgtype.TextOID}, {oid: pgtype.TextOID}, // customer_name, currency
	{oid: pgtype.TextOID}, {oid: pgtype.TextOID}, // issue_date, due_date
	timestamptzBinary, {oid: pgtype.TextOID}, {oid: pgtype.TextOID}, // issued_at, number, status
	int8Binary, int8Binary, int8Binary, // subtotal, tax, total
	timestamptzBinary, timestamptzBinary, int4Binary, // created_at, updated_at, version
	{oid: pgtype.TextOID}, timestamptzBinary, {oid: pgtype.TextOID}, // void_reason, voided_at, external_reference
}

// decodableSummaries reports whether rows described by fields can be
// decoded by decodeSummary.
func decodableSummaries(fields []pgconn.FieldDescription) bool {
	if len(fields) != len(summaryWire) {
		return false
	}
	for n, f := range fields {
		want := summaryWire[n]
		if f.DataTypeOID != want.oid || (want.oid != pgtype.TextOID && f.Format != want.format) {
			return false
		}
	}
	return true
}

// wireRow decodes one row's values in column order; the first error stays.
type wireRow struct {
	values [][]byte
	next   int
	err    error
}

func (r *wireRow) value() []byte {
	v := r.values[r.next]
	r.next++
	return v
}

func (r *wireRow) fail(err error) {
	if r.err == nil {
		r.err = fmt.Errorf("column %d: %w", r.next-1, err)
	}
}

func (r *wireRow) text() string {
	v := r.value()
	if v == nil {
		r.fail(errors.New("NULL where a value was expected"))
	}
	return string(v)
}

func (r *wireRow) nullableText() *string {
	v := r.value()
	if v == nil {
		return nil
	}
	s := string(v)
	return &s
}

func (r *wireRow) int(size int) int64 {
	v := r.value()
	switch {
	case len(v) != size:
		r.fail(fmt.Errorf("%d bytes for an integer of %d", len(v), size))
		return 0
	case size == 4:
		return int64(int32(binary.BigEndian.Uint32(v)))
	default:
		return int64(binary.BigEndian.Uint64(v))
	}
}

// postgresEpochMicros is 2000-01-01 00:00:00 UTC, PostgreSQL's epoch, in
// microseconds since the Unix epoch.
const postgresEpochMicros = 946_684_800_000_000

func (r *wireRow) nullableTime() *time.Time {
	v := r.value()
	if v == nil {
		return nil
	}
	if len(v) != 8 {
		r.fail(fmt.Errorf("%d bytes for a timestamptz", len(v)))
		return nil
	}
	us := int64(binary.BigEndian.Uint64(v))
	if us == math.MaxInt64 || us == math.MinInt64 {
		r.fail(errors.New("an infinite timestamptz"))
		return nil
	}
	t := time.UnixMicro(us + postgresEpochMicros)
	return &t
}

func (r *wireRow) time() time.Time {
	t := r.nullableTime()
	if t == nil {
		r.fail(errors.New("NULL where a timestamp was expected"))
		return time.Time{}
	}
	return *t
}

// decodeSummary decodes a row of summaryColumns, as summaryTargets scans it.
func decodeSummary(values [][]byte, i *InvoiceSummary, k *rowKey) error {
	r := wireRow{values: values}
	k.hi, k.lo = r.int(8), r.int(8)
	i.ID, i.CompanyID, i.CustomerID, i.CustomerName, i.Currency = r.text(), r.text(), r.text(), r.text(), r.text()
	i.IssueDate, i.DueDate, i.IssuedAt, i.Number, i.Status = r.text(), r.nullableText(), r.nullableTime(), r.nullableText(), r.text()
	i.SubtotalMinor, i.TaxMinor, i.TotalMinor = r.int(8), r.int(8), r.int(8)
	i.CreatedAt, i.UpdatedAt, i.Version = r.time(), r.time(), int(r.int(4))
	i.VoidReason, i.VoidedAt, i.ExternalReference = r.nullableText(), r.nullableTime(), r.text()
	return r.err
}
