package command

import (
	"context"
	"fmt"
	"time"

	"github.com/invoicing/invoicing/events"
)

var opUpdateCustomer = operation{name: "customers.update", kind: events.KindCustomer}

// customers is the customer entity of lifecycle operations.
var customers = entity[events.Customer]{kind: "customer", fold: events.FoldCustomer, resume: events.Customer.Resume,
	version: func(c events.Customer) int { return c.Version },
	id:      func(c events.Customer) string { return c.CustomerID }}

// UpdateCustomer is a merge patch (RFC 7396) over the fields of
// CreateCustomer. Its JSON form, the patch, is the request's fingerprint.
type UpdateCustomer = Patch[CreateCustomer]

// ParseUpdateCustomer decodes an update-customer body and checks its
// fields (Parsed); what it does to the customer is checked when it is
// applied.
func ParseUpdateCustomer(raw []byte) (Parsed[UpdateCustomer], error) {
	return parsePatch(raw, customerFields, recordReadOnly, readCreateCustomer)
}

// UpdateCustomer applies a merge patch to a customer of the caller's
// company, as UpdateCompany does to a company. Invoices already drafted
// keep the customer's snapshot as it was; later drafts take the new one.
func (h *Handler) UpdateCustomer(ctx context.Context, req Request, companyID, customerID string, body Parsed[UpdateCustomer]) (Result[events.Customer], error) {
	lc, err := customerLifecycle(ctx, h, req, opUpdateCustomer, companyID, customerID, body)
	if err != nil {
		return Result[events.Customer]{}, err
	}
	patch, _ := body.Valid()
	return change(ctx, h, lc, func(c events.Customer) (events.EventData, error) {
		if c.ArchivedAt != nil {
			return events.EventData{}, fmt.Errorf("%w: the customer is archived; restore it (POST .../unarchive) to update it", ErrInvalidState)
		}
		before, err := asObject(customerRequest(c.CustomerCreated))
		if err != nil {
			return events.EventData{}, err
		}
		in, err := patch.Apply(before)
		if err != nil {
			return events.EventData{}, err
		}
		next := in.event(c.CustomerID, c.CompanyID, c.AccountID, c.CreatedAt)
		after, err := asObject(customerRequest(next))
		if err != nil {
			return events.EventData{}, err
		}
		changed := changedFields(before, after)
		if len(changed) == 0 {
			return events.EventData{}, nil
		}
		return newEvent(lc.stream, uint64(c.Version), events.TypeCustomerUpdated, customerUpdated(next, changed, h.now()), lc.metadata)
	})
}

// customerLifecycle starts a lifecycle operation on a customer of the
// caller's company, in the order of a write's checks: the key (400), the
// company (404), the body's violations (422), the customer (404).
func customerLifecycle[T any](ctx context.Context, h *Handler, req Request, op operation, companyID, customerID string, body Parsed[T]) (lifecycle[events.Customer], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return lifecycle[events.Customer]{}, err
	}
	if _, err := h.cfg.Directory.CompanyStream(ctx, req.Actor.AccountID, companyID); err != nil {
		return lifecycle[events.Customer]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return lifecycle[events.Customer]{}, err
	}
	stream, err := h.cfg.Directory.CustomerStream(ctx, req.Actor.AccountID, companyID, customerID)
	if err != nil {
		return lifecycle[events.Customer]{}, fmt.Errorf("customer %s: %w", customerID, err)
	}
	return newLifecycle(req, customers, op, companyID+"/"+customerID, customerID, stream, in)
}

// customerRequest renders a customer as the create request that would make
// it: what an update's merge patch applies to.
func customerRequest(c events.CustomerCreated) CreateCustomer {
	return CreateCustomer{Name: c.Name, Address: c.Address, Email: c.Email,
		ExternalReference: c.ExternalReference, Identifiers: nonNil(c.Identifiers), ElectronicAddress: c.ElectronicAddress}
}

func customerUpdated(c events.CustomerCreated, changed []string, now time.Time) events.CustomerUpdated {
	return events.CustomerUpdated{
		CustomerID: c.CustomerID, CompanyID: c.CompanyID, AccountID: c.AccountID, Name: c.Name,
		Address: c.Address, Email: c.Email, ExternalReference: c.ExternalReference,
		Identifiers: nonNil(c.Identifiers), ElectronicAddress: c.ElectronicAddress, Changed: changed, UpdatedAt: now,
	}
}
