package command

import (
	"context"
	"fmt"
	"time"

	"github.com/invoicing/invoicing/events"
)

var opUpdateCompany = operation{name: "companies.update", kind: events.KindCompany}

// recordReadOnly are the fields of a company or customer that a client
// reads but never writes: an update naming one is a violation ("is
// read-only") rather than an unknown field.
var recordReadOnly = []string{"id", "company_id", "version", "archived_at", "created_at", "updated_at"}

// companies is the company entity of lifecycle operations.
var companies = entity[events.Company]{kind: "company", fold: events.FoldCompany, resume: events.Company.Resume,
	version: func(c events.Company) int { return c.Version },
	id:      func(c events.Company) string { return c.CompanyID }}

// UpdateCompany is a merge patch (RFC 7396) over the fields of
// CreateCompany. Its JSON form, the patch, is the request's fingerprint.
type UpdateCompany = Patch[CreateCompany]

// ParseUpdateCompany decodes an update-company body and checks its fields
// (Parsed); what it does to the company is checked when it is applied.
func ParseUpdateCompany(raw []byte) (Parsed[UpdateCompany], error) {
	return parsePatch(raw, companyFields, recordReadOnly, readCreateCompany)
}

// UpdateCompany applies a merge patch to the caller's company companyID:
// the company as its create request would render it, patched, must pass
// every rule of a create (the same messages and paths). A patch that
// changes nothing appends nothing and answers the company as it is; an
// archived company is ErrInvalidState until restored.
func (h *Handler) UpdateCompany(ctx context.Context, req Request, companyID string, body Parsed[UpdateCompany]) (Result[events.Company], error) {
	lc, err := companyLifecycle(ctx, h, req, opUpdateCompany, companyID, body)
	if err != nil {
		return Result[events.Company]{}, err
	}
	patch, _ := body.Valid()
	return change(ctx, h, lc, func(c events.Company) (events.EventData, error) {
		if c.ArchivedAt != nil {
			return events.EventData{}, fmt.Errorf("%w: the company is archived; restore it (POST .../unarchive) to update it", ErrInvalidState)
		}
		before, err := asObject(companyRequest(c.CompanyCreated))
		if err != nil {
			return events.EventData{}, err
		}
		in, err := patch.Apply(before)
		if err != nil {
			return events.EventData{}, err
		}
		next := in.event(c.CompanyID, c.AccountID, c.CreatedAt)
		after, err := asObject(companyRequest(next))
		if err != nil {
			return events.EventData{}, err
		}
		changed := changedFields(before, after)
		if len(changed) == 0 {
			return events.EventData{}, nil
		}
		return newEvent(lc.stream, uint64(c.Version), events.TypeCompanyUpdated, companyUpdated(next, changed, h.now()), lc.metadata)
	})
}

// companyLifecycle starts a lifecycle operation on the caller's company
// companyID, in the order of a write's checks: the key (400), the company
// (404), the body's violations (422).
func companyLifecycle[T any](ctx context.Context, h *Handler, req Request, op operation, companyID string, body Parsed[T]) (lifecycle[events.Company], error) {
	if err := CheckIdempotencyKey(req.IdempotencyKey); err != nil {
		return lifecycle[events.Company]{}, err
	}
	stream, err := h.cfg.Directory.CompanyStream(ctx, req.Actor.AccountID, companyID)
	if err != nil {
		return lifecycle[events.Company]{}, fmt.Errorf("company %s: %w", companyID, err)
	}
	in, err := body.Valid()
	if err != nil {
		return lifecycle[events.Company]{}, err
	}
	return newLifecycle(req, companies, op, companyID, companyID, stream, in)
}

// companyRequest renders a company as the create request that would make
// it, defaults explicit: what an update's merge patch applies to.
func companyRequest(c events.CompanyCreated) CreateCompany {
	days := int64(c.DefaultPaymentTermsDays)
	return CreateCompany{
		LegalName: c.LegalName, TradingName: c.TradingName, Address: c.Address,
		DefaultCurrency: c.DefaultCurrency, DefaultLanguage: c.DefaultLanguage, DefaultPaymentTermsDays: &days,
		Email: c.Email, ExternalReference: c.ExternalReference, Identifiers: nonNil(c.Identifiers),
		InvoiceNumberPrefix: c.InvoiceNumberPrefix, CreditNoteNumberPrefix: ptr(c.CreditNotePrefix()),
		BankAccount: c.BankAccount, ElectronicAddress: c.ElectronicAddress,
	}
}

func companyUpdated(c events.CompanyCreated, changed []string, now time.Time) events.CompanyUpdated {
	return events.CompanyUpdated{
		CompanyID: c.CompanyID, AccountID: c.AccountID, LegalName: c.LegalName, TradingName: c.TradingName,
		Address: c.Address, DefaultCurrency: c.DefaultCurrency, DefaultLanguage: c.DefaultLanguage,
		DefaultPaymentTermsDays: c.DefaultPaymentTermsDays, Email: c.Email, ExternalReference: c.ExternalReference,
		Identifiers: nonNil(c.Identifiers), InvoiceNumberPrefix: c.InvoiceNumberPrefix,
		CreditNoteNumberPrefix: ptr(c.CreditNotePrefix()), BankAccount: c.BankAccount, ElectronicAddress: c.ElectronicAddress,
		Changed: changed, UpdatedAt: now,
	}
}
