package command

import (
	"context"
	"sync"
)

// DefaultDirectoryCacheSize bounds the stream names a CachedDirectory
// remembers.
const DefaultDirectoryCacheSize = 10_000

// CachedDirectory remembers the stream names d finds for invoices,
// companies and customers: a record's stream never changes once created,
// so a name is exact forever, on every instance, and a lifecycle operation
// (issue, void, update, archive) skips that lookup after the first.
//
// Company and customer records are not remembered. They change (update,
// archive), possibly on another instance, and what a write decides on
// (archived or not, the invoice number prefix, the snapshots a new draft
// takes) must be what the last answered write left: the read models,
// which read-your-writes keeps current and every instance shares, are
// asked every time.
//
// Not found is never remembered (the record may be created a moment
// later). Entries are keyed by account and company as well, so one
// account's lookups can never answer another's. When the map holds size
// entries it is emptied: a bound on memory, at the price of a round trip
// per entry afterwards.
func CachedDirectory(d Directory, size int) Directory {
	return &cachedDirectory{Directory: d, size: size, streams: map[streamKey]string{}}
}

type cachedDirectory struct {
	Directory
	size    int
	mu      sync.Mutex
	streams map[streamKey]string
}

// streamKey names one record: its kind, account, company and id.
type streamKey struct {
	kind, accountID, companyID, id string
}

// InvoiceStream implements Directory.
func (c *cachedDirectory) InvoiceStream(ctx context.Context, accountID, companyID, invoiceID string) (string, error) {
	return c.stream(streamKey{"invoice", accountID, companyID, invoiceID}, func() (string, error) {
		return c.Directory.InvoiceStream(ctx, accountID, companyID, invoiceID)
	})
}

// CompanyStream implements Directory.
func (c *cachedDirectory) CompanyStream(ctx context.Context, accountID, companyID string) (string, error) {
	return c.stream(streamKey{"company", accountID, companyID, companyID}, func() (string, error) {
		return c.Directory.CompanyStream(ctx, accountID, companyID)
	})
}

// CustomerStream implements Directory.
func (c *cachedDirectory) CustomerStream(ctx context.Context, accountID, companyID, customerID string) (string, error) {
	return c.stream(streamKey{"customer", accountID, companyID, customerID}, func() (string, error) {
		return c.Directory.CustomerStream(ctx, accountID, companyID, customerID)
	})
}

func (c *cachedDirectory) stream(key streamKey, lookup func() (string, error)) (string, error) {
	c.mu.Lock()
	name, ok := c.streams[key]
	c.mu.Unlock()
	if ok {
		return name, nil
	}
	name, err := lookup()
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.streams) >= c.size {
		clear(c.streams)
	}
	c.streams[key] = name
	return name, nil
}
