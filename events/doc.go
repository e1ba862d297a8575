// Package events is the leaf both sides of the service share: what an event
// is, how it is stored, and the values events carry. It imports no other
// package of this module, no SQL driver and no HTTP.
//
// It holds:
//   - the event payloads (CompanyCreated, CustomerCreated, InvoiceDrafted,
//     InvoiceRevised, InvoiceIssued, InvoiceVoided, InvoiceNumberAssigned)
//     and their stable type names (TypeCompanyCreated, ..., Types), with
//     the invoice's fold over its stream (FoldInvoice);
//   - the envelope: EventData to append, RecordedEvent as read, Metadata,
//     Position, stream names and deterministic event ids (StreamName,
//     EventID, IdempotencyKeyHash);
//   - the Store port (Store, Subscription, ExpectedRevision) that the
//     adapters events/pgstore and events/esdb implement and the conformance
//     suite events/eventstoretest checks;
//   - the sentinel errors callers branch on, on either side:
//     ErrWrongExpectedRevision, ErrStreamNotFound, ErrUnavailable,
//     ErrNotFound;
//   - the value types events carry and their rules: money and quantities
//     (ParseQuantity, ComputeLine, SumLines: exact, no floating point),
//     addresses and identifiers, dates and text (ParseDate, CheckText).
//
// The money math lives here, not in package command, so that the write side
// that computes amounts and anything that checks them use one definition.
// The audit log's canonical encoding, chain and verification are not here:
// they belong to package audit, which imports this one.
package events
