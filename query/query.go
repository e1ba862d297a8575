// Package query is the read side: read-only access to the read-model tables
// that the projections build, with keyset pagination. It never imports
// projections; the tables' columns are the contract between the two.
package query

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/invoicing/invoicing/internal/pgerr"
)

// ErrNotFound means no row matches within the caller's account (and company).
var ErrNotFound = errors.New("not found")

// ErrUnavailable means the read models' database could not be reached:
// worth a retry, not a bug.
var ErrUnavailable = errors.New("query: the database is unavailable")

// unavailable marks the errors that mean the database could not be reached
// with ErrUnavailable, keeping the cause.
func unavailable(err error) error {
	if pgerr.Unavailable(err) {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

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

// keyset builds a list query's WHERE clause: fixed conditions, the filters
// that are set (absent ones leave the SQL, so each combination gets a plan
// that uses its index), and the keyset condition.
type keyset struct {
	conds []string
	args  []any
}

func (k *keyset) where(cond string, arg any) {
	k.args = append(k.args, arg)
	k.conds = append(k.conds, strings.ReplaceAll(cond, "?", fmt.Sprintf("$%d", len(k.args))))
}

// and adds a condition without arguments.
func (k *keyset) and(cond string) { k.conds = append(k.conds, cond) }

// filter adds cond only when value is set.
func (k *keyset) filter(cond, value string) {
	if value != "" {
		k.where(cond, value)
	}
}

// sql returns the query for one page after key, with a look-ahead row.
func (k *keyset) sql(columns, table string, after rowKey, limit int) (string, []any) {
	n := len(k.args)
	k.args = append(k.args, after.hi, after.lo, limit+1)
	k.conds = append(k.conds, fmt.Sprintf("(position_hi, position_lo) > ($%d, $%d)", n+1, n+2))
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s ORDER BY position_hi, position_lo LIMIT $%d",
		columns, table, strings.Join(k.conds, " AND "), n+3), k.args
}

// validID reports whether id can name a row; anything else is not found
// rather than a database error.
func validID(id string) bool {
	_, err := uuid.Parse(id)
	return err == nil
}

// scanner reads a result set into items and their keyset keys.
type scanner[T any] func(pgx.Rows) ([]T, []rowKey, error)

// one runs a get and returns its single row, or ErrNotFound.
func one[T any](ctx context.Context, pool *pgxpool.Pool, scan scanner[T], sql string, args ...any) (T, error) {
	var zero T
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return zero, fmt.Errorf("query: %w", unavailable(err))
	}
	items, _, err := scan(rows)
	if err != nil {
		return zero, unavailable(err)
	}
	if len(items) == 0 {
		return zero, ErrNotFound
	}
	return items[0], nil
}

// page runs one page of the list q describes, within scope sc.
func page[T any](ctx context.Context, pool *pgxpool.Pool, scan scanner[T], sc string, p PageRequest, q *keyset, columns, table string) (Page[T], error) {
	after, err := p.after(sc)
	if err != nil {
		return Page[T]{}, err
	}
	sql, args := q.sql(columns, table, after, p.Limit)
	rows, err := pool.Query(ctx, sql, args...)
	if err != nil {
		return Page[T]{}, fmt.Errorf("list %s: %w", table, unavailable(err))
	}
	items, keys, err := scan(rows)
	if err != nil {
		return Page[T]{}, unavailable(err)
	}
	return finish(items, keys, p.Limit, sc), nil
}
