-- Read model of the public event feed, version 1 (unqualified names; see
-- companies.sql): one row per event of a public type (publicevents), an
-- index into the event store. The public event itself is rendered from the
-- events of its stream (transport.EventRenderer), so it is never stored
-- here. type is the public type; resource_id the company, customer or
-- invoice whose stream holds the event, or for credit_note.issued the
-- credit note; version is the stream's revision + 1 (never 0), here for
-- the unfiltered list's index predicate (see query/query.go).
CREATE TABLE public_events (
	position_hi bigint      NOT NULL,
	position_lo bigint      NOT NULL,
	id          uuid        PRIMARY KEY,
	account_id  text        NOT NULL,
	company_id  uuid        NOT NULL,
	resource_id uuid        NOT NULL,
	type        text        NOT NULL,
	stream_name text        NOT NULL,
	revision    bigint      NOT NULL,
	created_at  timestamptz NOT NULL,
	version     bigint      NOT NULL
);

-- The feed's indexes, one per list, each partial on a condition only its
-- own list states, in position order (see invoices.sql).
CREATE INDEX public_events_by_account ON public_events (account_id, position_hi, position_lo)
	WHERE version <> 0;
CREATE INDEX public_events_by_resource ON public_events (account_id, resource_id, position_hi, position_lo)
	WHERE resource_id IS NOT NULL;
CREATE INDEX public_events_by_company ON public_events (account_id, company_id, position_hi, position_lo)
	WHERE company_id IS NOT NULL;
CREATE INDEX public_events_by_type ON public_events (account_id, type, position_hi, position_lo)
	WHERE type IS NOT NULL;
