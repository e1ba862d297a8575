package command

import (
	"context"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

var (
	opArchiveCompany    = operation{name: "companies.archive", kind: events.KindCompany}
	opUnarchiveCompany  = operation{name: "companies.unarchive", kind: events.KindCompany}
	opArchiveCustomer   = operation{name: "customers.archive", kind: events.KindCustomer}
	opUnarchiveCustomer = operation{name: "customers.unarchive", kind: events.KindCustomer}
)

// Archive is an archive or unarchive request: its body is empty, or {}.
type Archive struct{}

// ParseArchive decodes and checks an archive or unarchive body (Parsed).
func ParseArchive(raw []byte) (Parsed[Archive], error) {
	return parseBody(raw, func(r *reader, body map[string]any) Archive {
		r.openObject("", body)
		return Archive{}
	})
}

// ArchiveCompany archives the caller's company: it leaves the lists, and
// nothing new may be created under it until it is restored; what exists
// under it keeps its lifecycle. Archiving an archived company is
// ErrInvalidState.
func (h *Handler) ArchiveCompany(ctx context.Context, req Request, companyID string, body Parsed[Archive]) (Result[events.Company], error) {
	return h.archiveCompany(ctx, req, opArchiveCompany, companyID, body)
}

// UnarchiveCompany restores an archived company (ErrInvalidState if it is
// not archived).
func (h *Handler) UnarchiveCompany(ctx context.Context, req Request, companyID string, body Parsed[Archive]) (Result[events.Company], error) {
	return h.archiveCompany(ctx, req, opUnarchiveCompany, companyID, body)
}

func (h *Handler) archiveCompany(ctx context.Context, req Request, op operation, companyID string, body Parsed[Archive]) (Result[events.Company], error) {
	lc, err := companyLifecycle(ctx, h, req, op, companyID, body)
	if err != nil {
		return Result[events.Company]{}, err
	}
	archive := op == opArchiveCompany
	return change(ctx, h, lc, func(c events.Company) (events.EventData, error) {
		if err := archivable("company", c.ArchivedAt != nil, archive); err != nil {
			return events.EventData{}, err
		}
		at := h.now()
		if archive {
			e := events.CompanyArchived{CompanyID: c.CompanyID, AccountID: c.AccountID, ArchivedAt: at}
			return newEvent(lc.stream, uint64(c.Version), events.TypeCompanyArchived, e, lc.metadata)
		}
		e := events.CompanyUnarchived{CompanyID: c.CompanyID, AccountID: c.AccountID, UnarchivedAt: at}
		return newEvent(lc.stream, uint64(c.Version), events.TypeCompanyUnarchived, e, lc.metadata)
	})
}

// ArchiveCustomer archives a customer of the caller's company: it leaves
// the lists, and no invoice may be drafted for it until it is restored;
// its invoices keep their lifecycle. Archiving an archived customer is
// ErrInvalidState.
func (h *Handler) ArchiveCustomer(ctx context.Context, req Request, companyID, customerID string, body Parsed[Archive]) (Result[events.Customer], error) {
	return h.archiveCustomer(ctx, req, opArchiveCustomer, companyID, customerID, body)
}

// UnarchiveCustomer restores an archived customer (ErrInvalidState if it
// is not archived).
func (h *Handler) UnarchiveCustomer(ctx context.Context, req Request, companyID, customerID string, body Parsed[Archive]) (Result[events.Customer], error) {
	return h.archiveCustomer(ctx, req, opUnarchiveCustomer, companyID, customerID, body)
}

func (h *Handler) archiveCustomer(ctx context.Context, req Request, op operation, companyID, customerID string, body Parsed[Archive]) (Result[events.Customer], error) {
	lc, err := customerLifecycle(ctx, h, req, op, companyID, customerID, body)
	if err != nil {
		return Result[events.Customer]{}, err
	}
	archive := op == opArchiveCustomer
	return change(ctx, h, lc, func(c events.Customer) (events.EventData, error) {
		if err := archivable("customer", c.ArchivedAt != nil, archive); err != nil {
			return events.EventData{}, err
		}
		at := h.now()
		if archive {
			e := events.CustomerArchived{CustomerID: c.CustomerID, CompanyID: c.CompanyID, AccountID: c.AccountID, ArchivedAt: at}
			return newEvent(lc.stream, uint64(c.Version), events.TypeCustomerArchived, e, lc.metadata)
		}
		e := events.CustomerUnarchived{CustomerID: c.CustomerID, CompanyID: c.CompanyID, AccountID: c.AccountID, UnarchivedAt: at}
		return newEvent(lc.stream, uint64(c.Version), events.TypeCustomerUnarchived, e, lc.metadata)
	})
}

// archivable is nil when a record that is archived (or not) may be
// archived (or restored); else ErrInvalidState.
func archivable(kind string, archived, archive bool) error {
	switch {
	case archive && archived:
		return fmt.Errorf("%w: the %s is already archived", ErrInvalidState, kind)
	case !archive && !archived:
		return fmt.Errorf("%w: the %s is not archived", ErrInvalidState, kind)
	}
	return nil
}
