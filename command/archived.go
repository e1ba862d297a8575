package command

import (
	"context"
	"fmt"

	"github.com/invoicing/invoicing/events"
)

// Archived records (docs/decisions.md): nothing new is created under an
// archived company, nor drafted for an archived customer; what exists
// keeps its whole lifecycle.

// activeCompany is nil unless the company is archived, which forbids
// creating anything under it: a StateError at company_id.
func activeCompany(c CompanyRecord) error {
	if !c.Archived {
		return nil
	}
	return &StateError{Violations: []Violation{{Path: "company_id", Message: "is an archived company; restore it (POST .../unarchive) to create under it"}}}
}

// activeCustomer is nil unless the customer is archived, which forbids
// drafting an invoice for it: a StateError at path (the body's
// customer_id).
func activeCustomer(c CustomerRecord, path string) error {
	if !c.Archived {
		return nil
	}
	return &StateError{Violations: []Violation{{Path: path, Message: "is an archived customer; restore it (POST .../unarchive) to draft invoices for it"}}}
}

// replayOr answers a create that the state of a record now refuses
// (refusal): a replay when the same key already created the entity with
// the same request, before the state changed (a replay answers the first
// answer), else refusal. It costs a read only on that rare path.
func replayOr[T any](ctx context.Context, h *Handler, req Request, op operation, scope, fp string, refusal error) (Result[T], error) {
	stream := events.StreamName(op.kind, req.Actor.AccountID, op.name, scope, req.IdempotencyKey)
	out := Result[T]{Replayed: true}
	done, err := h.replay(ctx, stream, fp, &out.Value)
	switch {
	case err != nil:
		return Result[T]{}, err
	case done:
		return out, nil
	}
	return Result[T]{}, fmt.Errorf("%s: %w", op.name, refusal)
}
