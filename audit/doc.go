// Package audit is the tamper-evident log: it lets an auditor check, without
// trusting the service or its database, that the event log is the one that
// was written.
//
// Every event is hashed in a canonical form (CanonicalEvent, RFC 8785 JSON)
// into a chain over the store's global order (Chain, ChainHash); the chain
// after an event is its link. A Sealer follows the log like a projection (one
// leader at a time, see internal/follow), records each event's link and, now
// and then, a Seal: the chain's hash after an event, signed with Ed25519 when
// a key is configured. SealNow seals the log as it stands, for `invoicing
// audit seal`. Export lines (ExportLine) carry each event with its link, so
// an export can be checked offline (VerifyExport); VerifyLog checks the live
// store against the recorded links and seals.
//
// The package owns its tables (audit_chain, audit_seals) and their
// migrations (Migrate). It reads the log only through events.Store, so it
// works on either event store, and it never looks at the read models: a log
// rewritten and then rebuilt into projections is caught all the same. The
// formats are described for auditors in README.md.
package audit
