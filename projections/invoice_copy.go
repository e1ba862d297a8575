package projections

import (
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/invoicing/invoicing/events"
)

// draftedColumns are the invoices columns a copy of drafted rows fills, in
// the order of draftedCopy's values; the others keep their defaults, as
// draftedRowsSQL leaves them.
var draftedColumns = []string{"id", "company_id", "account_id", "customer_id", "stream_name", "customer_name",
	"customer", "issuer", "currency", "language", "issue_date", "due_date", "status", "lines",
	"subtotal_minor", "tax_minor", "total_minor", "external_reference", "purchase_order_reference",
	"notes", "terms", "created_at", "updated_at", "version", "position_hi", "position_lo", "document",
	"amount_credited_minor", "amount_paid_minor", "amount_due_minor", "amount_refundable_minor", "payment_status"}

// write adds the rows to w: copied when there are w.copyMin or more and
// every id and date is in the form the service writes, otherwise in one
// INSERT. A copy sends ids and dates as PostgreSQL stores them, parsed
// here; the INSERT leaves them to the server's casts. So an event whose
// id or date only the server can judge goes in an INSERT, which does what
// it always did: it keeps what the server accepts and, if the server
// refuses it, fails the batch, which is then written carefully (see
// applyBatch). A copy has no ON CONFLICT: a row already there fails it
// (unique_violation), and the careful path's INSERTs skip that row, as the
// batch's INSERT would have.
func (r *draftedRows) write(w *bulkWrite) {
	w.addRows(len(r.id), "invoices", draftedColumns, func() (pgx.CopyFromSource, bool) {
		c, ok := r.copy()
		return c, ok
	}, r.queue)
}

// draftedCopy is the rows of a draftedRows as a pgx.CopyFromSource.
type draftedCopy struct {
	rowCursor
	r                         *draftedRows
	ids, companies, customers [][16]byte
	issueDates, dueDates      []pgtype.Date
	values                    []any
}

// copy parses the rows' ids and dates; false if one is not in the
// service's form (events.ParseUUID, canonicalDate).
func (r *draftedRows) copy() (*draftedCopy, bool) {
	n := len(r.id)
	c := &draftedCopy{rowCursor: rowCursor{rows: n}, r: r, ids: make([][16]byte, n), companies: make([][16]byte, n), customers: make([][16]byte, n),
		issueDates: make([]pgtype.Date, n), dueDates: make([]pgtype.Date, n), values: make([]any, len(draftedColumns))}
	for i := range n {
		var ok [5]bool
		c.ids[i], ok[0] = events.ParseUUID(r.id[i])
		c.companies[i], ok[1] = events.ParseUUID(r.companyID[i])
		c.customers[i], ok[2] = events.ParseUUID(r.customerID[i])
		c.issueDates[i], ok[3] = canonicalDate(r.issueDate[i])
		ok[4] = true
		if r.dueDate[i] != nil {
			c.dueDates[i], ok[4] = canonicalDate(*r.dueDate[i])
		}
		if ok != [5]bool{true, true, true, true, true} {
			return nil, false
		}
	}
	return c, true
}

// canonicalDate parses a date as the service keeps it (events.ParseDate:
// YYYY-MM-DD from year 1 to 9999); the server's cast would refuse a year 0.
func canonicalDate(s string) (pgtype.Date, bool) {
	t, err := events.ParseDate(s)
	return pgtype.Date{Time: t, Valid: err == nil}, err == nil
}

// Values implements pgx.CopyFromSource: the row's values in
// draftedColumns' order, in a slice that the next call reuses (pgx encodes
// a row before it asks for the next).
func (c *draftedCopy) Values() ([]any, error) {
	r, i, v := c.r, c.next-1, c.values
	v[0], v[1], v[2], v[3] = c.ids[i], c.companies[i], r.accountID[i], c.customers[i]
	v[4], v[5], v[6], v[7] = r.stream[i], r.customerName[i], r.customer[i], r.issuer[i]
	v[8], v[9], v[10], v[11] = r.currency[i], r.language[i], c.issueDates[i], c.dueDates[i]
	v[12], v[13], v[14], v[15] = events.StatusDraft, r.lines[i], r.subtotal[i], r.tax[i]
	v[16], v[17], v[18], v[19] = r.total[i], r.externalRef[i], r.poRef[i], r.notes[i]
	v[20], v[21], v[22], v[23] = r.terms[i], r.createdAt[i], r.createdAt[i], r.version[i]
	v[24], v[25], v[26], v[27] = r.hi[i], r.lo[i], r.document[i], r.settled.credited[i]
	v[28], v[29], v[30], v[31] = r.settled.paid[i], r.settled.due[i], r.settled.refundable[i], r.settled.status[i]
	return v, nil
}
