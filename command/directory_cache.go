package command

import (
	"context"
	"slices"
	"sync"
)

// DefaultDirectoryCacheSize bounds the companies, and separately the
// customers, a CachedDirectory remembers.
const DefaultDirectoryCacheSize = 10_000

// CachedDirectory remembers the companies and customers d finds, so that a
// create looks each up in the database once, not on every request: the two
// lookups were two of an invoice create's three round trips. It is exact
// because companies and customers never change once created: no event
// updates, archives or deletes one, and a rebuild writes the same rows. An
// event that changes one must come with a way to forget it here.
//
// Not found is never remembered (the company may be created a moment
// later). Entries are keyed by account as well, so one account's lookups
// can never answer another's. When a map holds size entries it is emptied:
// a bound on memory, at the price of a round trip per entry afterwards.
func CachedDirectory(d Directory, size int) Directory {
	return &cachedDirectory{Directory: d, size: size,
		companies: map[[2]string]CompanyRecord{}, customers: map[[3]string]CustomerRecord{}}
}

type cachedDirectory struct {
	Directory
	size      int
	mu        sync.Mutex
	companies map[[2]string]CompanyRecord // by account, company
	customers map[[3]string]CustomerRecord
}

// Company implements Directory.
func (c *cachedDirectory) Company(ctx context.Context, accountID, companyID string) (CompanyRecord, error) {
	key := [2]string{accountID, companyID}
	c.mu.Lock()
	rec, ok := c.companies[key]
	c.mu.Unlock()
	if ok {
		rec.Identifiers = slices.Clone(rec.Identifiers) // the caller's to keep
		return rec, nil
	}
	rec, err := c.Directory.Company(ctx, accountID, companyID)
	if err == nil {
		kept := rec
		kept.Identifiers = slices.Clone(rec.Identifiers)
		remember(c, c.companies, key, kept)
	}
	return rec, err
}

// Customer implements Directory.
func (c *cachedDirectory) Customer(ctx context.Context, accountID, companyID, customerID string) (CustomerRecord, error) {
	key := [3]string{accountID, companyID, customerID}
	c.mu.Lock()
	rec, ok := c.customers[key]
	c.mu.Unlock()
	if ok {
		rec.Identifiers = slices.Clone(rec.Identifiers)
		return rec, nil
	}
	rec, err := c.Directory.Customer(ctx, accountID, companyID, customerID)
	if err == nil {
		kept := rec
		kept.Identifiers = slices.Clone(rec.Identifiers)
		remember(c, c.customers, key, kept)
	}
	return rec, err
}

func remember[K comparable, R any](c *cachedDirectory, m map[K]R, key K, rec R) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(m) >= c.size {
		clear(m)
	}
	m[key] = rec
}
