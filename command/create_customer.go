package command

import (
	"context"
	"fmt"
	"time"

	"github.com/invoicing/invoicing/events"
)

var opCreateCustomer = operation{name: "customers.create", kind: events.KindCustomer}

// CreateCustomer is a validated create-customer request. Its JSON form is
// the request's fingerprint.
type CreateCustomer struct {
	Name              string              `json:"name"`
	Address           events.Address      `json:"address"`
	Email             string              `json:"email,omitempty"`
	ExternalReference string              `json:"external_reference,omitempty"`
	Identifiers       []events.Identifier `json:"identifiers"`
	// Absent, a request fingerprints as before it.
	ElectronicAddress *events.ElectronicAddress `json:"electronic_address,omitempty"`
}

// ParseCreateCustomer decodes and validates a create-customer body (Parsed).
func ParseCreateCustomer(raw []byte) (Parsed[CreateCustomer], error) {
	return parseBody(raw, readCreateCustomer)
}

// customerFields are the fields of a create-customer request, which an
// update may patch too.
var customerFields = []string{"name", "address", "email", "external_reference", "identifiers", "electronic_address"}

func readCreateCustomer(r *reader, body map[string]any) CreateCustomer {
	o, _ := r.openObject("", body, customerFields...)
	c := CreateCustomer{
		Name:              o.reqStr("name", name200),
		Email:             o.str("email", email),
		ExternalReference: o.str("external_reference", reference),
		Identifiers:       o.identifiers("identifiers"),
		ElectronicAddress: o.electronicAddress("electronic_address"),
	}
	if v, ok := o.required("address"); ok {
		c.Address = r.address("address", v)
	}
	return c
}

// CreateCustomer creates a customer of the caller's company companyID
// (events.ErrNotFound unless the company is the caller's; a StateError
// when it is archived). The company takes part in the idempotency scope:
// the same key under another company is another request.
func (h *Handler) CreateCustomer(ctx context.Context, req Request, companyID string, body Parsed[CreateCustomer]) (Result[events.CustomerCreated], error) {
	var out Result[events.CustomerCreated]
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return out, err
	}
	company, err := h.cfg.Directory.Company(ctx, req.Actor.AccountID, companyID)
	if err != nil {
		return out, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return out, err
	}
	fp, err := fingerprint(opCreateCustomer, companyID, in)
	if err != nil {
		return out, err
	}
	if err := activeCompany(company); err != nil {
		return replayOr[events.CustomerCreated](ctx, h, req, opCreateCustomer, companyID, fp, err)
	}
	build := func() (string, events.CustomerCreated, error) {
		id, err := h.newID()
		if err != nil {
			return "", events.CustomerCreated{}, err
		}
		return events.TypeCustomerCreated, in.event(id, companyID, req.Actor.AccountID, h.now()), nil
	}
	return create(ctx, h, req, opCreateCustomer, companyID, fp, build)
}

func (in CreateCustomer) event(id, companyID, accountID string, now time.Time) events.CustomerCreated {
	return events.CustomerCreated{
		CustomerID:        id,
		CompanyID:         companyID,
		AccountID:         accountID,
		Name:              in.Name,
		Address:           in.Address,
		Email:             in.Email,
		ExternalReference: in.ExternalReference,
		Identifiers:       in.Identifiers,
		ElectronicAddress: in.ElectronicAddress,
		CreatedAt:         now,
	}
}
