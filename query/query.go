// Package query is the read side: read-only access to the read-model tables
// that the projections build, with keyset pagination. It never imports
// projections; the tables' columns are the contract between the two.
package query

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrNotFound means no row matches within the caller's account (and company).
var ErrNotFound = errors.New("not found")

// Store reads the read models.
type Store struct {
	pool *pgxpool.Pool
}

// New returns a Store on pool.
func New(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// PageRequest asks for one page of a list. Limit must be 1..100; After is
// empty for the first page.
type PageRequest struct {
	After string
	Limit int
}

// Page is one page of a list, oldest first; NextCursor is empty on the last.
type Page[T any] struct {
	Items      []T
	NextCursor string
}

// scope binds a cursor to its list and everything that filters it.
func scope(parts ...string) string {
	return strings.Join(parts, "\x1f")
}

// finish trims the look-ahead row and sets the next cursor.
func finish[T any](items []T, seqs []int64, limit int, scope string) Page[T] {
	if len(items) <= limit {
		return Page[T]{Items: items}
	}
	return Page[T]{Items: items[:limit], NextCursor: encodeCursor(scope, seqs[limit-1])}
}

// after decodes the page's cursor into the seq to continue after.
func (p PageRequest) after(scope string) (int64, error) {
	if p.After == "" {
		return 0, nil
	}
	return decodeCursor(scope, p.After)
}
