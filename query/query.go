// Package query is the read side: read-only access to the read-model tables
// that the projections build, with keyset pagination. It never imports
// projections; the tables' columns are the contract between the two.
package query

import (
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/events"
	"github.com/invoicing/invoicing/internal/pgerr"
)

// Store reads the read models.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a Store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Page sizes: the spec's limit parameter, DefaultLimit when a client sends
// none, MinLimit..MaxLimit otherwise.
const (
	MinLimit     = 1
	MaxLimit     = 100
	DefaultLimit = 20
)

// PageRequest asks for one page of a list. Limit must be MinLimit..MaxLimit;
// After is empty for the first page.
type PageRequest struct {
	After string
	Limit int
}

// Page is one page of a list, oldest first; NextCursor is empty on the last.
type Page[T any] struct {
	Items      []T
	NextCursor string
}

// scope binds a cursor to its list and everything that filters it. Parts
// are length-prefixed so that no choice of values makes two scopes equal.
func scope(parts ...string) string {
	var b strings.Builder
	for _, p := range parts {
		b.Write(binary.BigEndian.AppendUint32(nil, uint32(len(p))))
		b.WriteString(p)
	}
	return b.String()
}

// finish trims the look-ahead row and sets the next cursor.
func finish[T any](items []T, keys []rowKey, limit int, scope string) Page[T] {
	if len(items) <= limit {
		return Page[T]{Items: items}
	}
	return Page[T]{Items: items[:limit], NextCursor: encodeCursor(scope, keys[limit-1])}
}

// after checks the page size and decodes the cursor into the key to
// continue after.
func (p PageRequest) after(scope string) (rowKey, error) {
	if p.Limit < MinLimit || p.Limit > MaxLimit {
		return rowKey{}, fmt.Errorf("query: page limit %d outside %d..%d", p.Limit, MinLimit, MaxLimit)
	}
	if p.After == "" {
		return rowKey{}, nil
	}
	return decodeCursor(scope, p.After)
}

// statement is one read-model query and its arguments. Every query of this
// package is built by a function returning one, so that a test can EXPLAIN
// exactly the statements that run (see plans_test.go).
type statement struct {
	sql  string
	args []any
}

// lookup is a get by id: it selects columns of the row of a table whose
// primary key is id and whose owner columns hold their values (the
// account's, the company's), so that another account's id is not found.
// The row is "found" to its columns. Its statement is made once, where it
// is declared: formatting it at each request was 3.7% of the service's
// CPU on the GET of an invoice.
//
// The primary key is the one index the plan can use, whatever the
// statistics say: the owner columns are compared with IS NOT DISTINCT FROM,
// which no index can take, so they are checked on the one row found (they
// are NOT NULL, so it is equality). With =, an unanalysed table may be read
// through an index that leads with account_id and company_id, over every
// row of the company. A subquery fenced with OFFSET 0 did the same before,
// at a cost: PostgreSQL set up its scan and a projection of every column of
// the table at each execution, a tenth of its CPU on the GET of an invoice.
type lookup struct{ sql string }

// The owner columns of an account's rows and of its companies' rows.
var (
	accountOwned = []string{"account_id"}
	companyOwned = []string{"account_id", "company_id"}
)

// newLookup is the lookup of columns in table by id and owners, the owner
// columns (accountOwned, companyOwned); conds are further conditions
// without arguments.
func newLookup(columns, table string, owners []string, conds ...string) lookup {
	q := &keyset{} // for its conditions only: no page, no order
	q.where("id = ?", nil)
	for _, column := range owners {
		q.check(column, nil)
	}
	for _, cond := range conds {
		q.and(cond)
	}
	return lookup{sql: fmt.Sprintf("SELECT %s FROM %s AS found WHERE %s", columns, table, strings.Join(q.conds, " AND "))}
}

// of is the statement finding row id of the owners' values, given in the
// order of the lookup's owner columns (a count that differs fails in pgx,
// which checks the arguments against the statement's parameters).
func (l lookup) of(id string, owners ...string) statement {
	args := make([]any, 0, 1+len(owners))
	args = append(args, id)
	for _, o := range owners {
		args = append(args, o)
	}
	return statement{sql: l.sql, args: args}
}

// keyset builds a list query so that exactly one index can serve it,
// whatever the statistics say. Otherwise, on an unanalysed table (a rebuilt
// projection), where every index looks as selective as the next, the
// planner may read a company's rows through another list's index, whose
// leading columns are the same, and sort them. So:
//
//   - The list's index leads with the columns the list fixes by equality
//     (account, company, one filter), then (position_hi, position_lo): it
//     gives the order, and the keyset condition on the position starts the
//     scan at the cursor, however deep.
//   - Each list index is partial on a condition that only its own list's
//     query states: a filter's index on the filter's column IS NOT NULL
//     (implied by the equality), the unfiltered list's index on
//     unfilteredPredicate. No list can read another list's index.
//   - A second filter is checked with IS NOT DISTINCT FROM, which no index
//     can take and which proves no index's predicate: the rows come from
//     the first filter's index, in order, and are checked one by one.
//   - The position's own unique index leads with position_lo, so it gives
//     no list's order.
//
// Another plan remains possible: a bitmap scan of the list's own index, then
// a sort. query/plans_test.go explains every list on tables loaded without
// statistics, and with skewed ones, and checks that the planner keeps to
// the ordered scan. The archived lists are the exception it allows: when
// the planner expects fewer archived rows than a page, it may read them
// with a bitmap scan of their own index, from the cursor on, and sort
// those few.
type keyset struct {
	// fixed is the column of the first filter set, whose index serves the
	// list; "" when none is (the unfiltered list's index).
	fixed string
	conds []string
	args  []any
}

// unfilteredPredicate is the predicate of each table's index for its
// unfiltered list, true of every row (a version counts events: 1 or more),
// stated by that list alone (see projections/schema).
const unfilteredPredicate = "version <> 0"

// fix adds column = value, a leading column of the list's index, in the
// index's order.
func (k *keyset) fix(column string, value any) { k.where(column+" = ?", value) }

// filter adds column = value when value is set: the first filter set is
// fixed (its index serves the list), later ones are checked on the rows
// that index finds. Callers give their filters in order of preference, the
// most selective first.
func (k *keyset) filter(column, value string) {
	switch {
	case value == "":
	case k.fixed == "":
		k.fixed = column
		k.fix(column, value)
	default:
		k.check(column, value)
	}
}

// check adds column = value as a condition that no index can take (IS NOT
// DISTINCT FROM; the columns checked are NOT NULL, so it is equality): it
// is checked on the rows that another condition's index found.
func (k *keyset) check(column string, value any) {
	k.where(column+" IS NOT DISTINCT FROM ?", value)
}

func (k *keyset) where(cond string, arg any) {
	k.args = append(k.args, arg)
	k.conds = append(k.conds, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(k.args))))
}

// and adds a condition without arguments.
func (k *keyset) and(cond string) { k.conds = append(k.conds, cond) }

// statement returns the query for one page after key, with a look-ahead
// row.
func (k *keyset) statement(columns, table string, after rowKey, limit int) statement {
	q := keyset{args: append([]any{}, k.args...), conds: append([]string{}, k.conds...)}
	if k.fixed == "" {
		q.and(unfilteredPredicate)
	}
	n := len(q.args)
	q.args = append(q.args, after.hi, after.lo, limit+1)
	q.and(fmt.Sprintf("(position_hi, position_lo) > ($%d, $%d)", n+1, n+2))
	return statement{
		sql: fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY position_hi, position_lo LIMIT $%d",
			columns, table, strings.Join(q.conds, " AND "), n+3),
		args: q.args,
	}
}

// validID reports whether id can name a row: the service's one form of an
// id (events.ParseUUID). Anything else is not found rather than a database
// error, or a row found by another spelling of its id that PostgreSQL
// accepts (braces, no hyphens).
func validID(id string) bool {
	_, ok := events.ParseUUID(id)
	return ok
}

// scanner reads a result set into items and their keyset keys; capacity is
// how many rows the statement may return at most.
type scanner[T any] func(rows pgx.Rows, capacity int) ([]T, []rowKey, error)

// one runs a get and returns its single row, or events.ErrNotFound.
func one[T any](ctx context.Context, pool *pgxpool.Pool, scan scanner[T], st statement) (T, error) {
	rows, err := pool.Query(ctx, st.sql, st.args...)
	return single(scan, rows, err)
}

// single returns the one row of a get's result (a Query's rows and error),
// or events.ErrNotFound.
func single[T any](scan scanner[T], rows pgx.Rows, err error) (T, error) {
	var zero T
	if err != nil {
		return zero, fmt.Errorf("query: %w", pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	items, _, err := scan(rows, 1)
	if err != nil {
		return zero, pgerr.MarkUnavailable(err, events.ErrUnavailable)
	}
	if len(items) == 0 {
		return zero, events.ErrNotFound
	}
	return items[0], nil
}

// listing is a list with its filters fixed: its table, its cursor scope,
// and its page statement after a key.
type listing struct {
	table, scope string
	page         func(after rowKey, limit int) statement
}

// page runs one page of l.
func page[T any](ctx context.Context, pool *pgxpool.Pool, scan scanner[T], l listing, p PageRequest) (Page[T], error) {
	after, err := p.after(l.scope)
	if err != nil {
		return Page[T]{}, err
	}
	st := l.page(after, p.Limit)
	rows, err := pool.Query(ctx, st.sql, st.args...)
	if err != nil {
		return Page[T]{}, fmt.Errorf("list %s: %w", l.table, pgerr.MarkUnavailable(err, events.ErrUnavailable))
	}
	items, keys, err := scan(rows, p.Limit+1)
	if err != nil {
		return Page[T]{}, pgerr.MarkUnavailable(err, events.ErrUnavailable)
	}
	return finish(items, keys, p.Limit, l.scope), nil
}
