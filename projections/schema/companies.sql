-- Read model of companies, version 6. Unqualified names: the statements run
-- with search_path set to the schema being built (public for a new database,
-- a shadow schema during a rebuild).
-- 2: invoice_number_prefix.
-- 3: address and identifiers are json holding the API's rendering, read
--    back as stored (see invoices.sql); each list index is partial on a
--    condition that only its list states; the position's unique index
--    leads with position_lo.
-- 4: updates and archiving (CompanyUpdated, CompanyArchived,
--    CompanyUnarchived) change rows; the archived lists' indexes.
-- 5: bank_account and electronic_address (issue 22), json as the API
--    renders them, NULL when absent.
-- 6: credit_note_number_prefix (issue 23), the default applied.
--
-- (position_hi, position_lo) is the creating event's global position, the
-- key of every keyset page. The projector applies events in that order, one
-- batch after another, so pages never skip a row that is being added; and a
-- rebuild reproduces the same keys, so cursors survive it.
CREATE TABLE companies (
	position_hi                bigint      NOT NULL,
	position_lo                bigint      NOT NULL,
	id                         uuid        PRIMARY KEY,
	account_id                 text        NOT NULL,
	stream_name                text        NOT NULL UNIQUE,
	legal_name                 text        NOT NULL,
	trading_name               text,
	address                    json        NOT NULL,
	default_currency           text        NOT NULL,
	default_language           text        NOT NULL,
	default_payment_terms_days integer     NOT NULL,
	email                      text,
	external_reference         text,
	identifiers                json        NOT NULL,
	invoice_number_prefix      text        NOT NULL,
	credit_note_number_prefix  text        NOT NULL,
	bank_account               json,
	electronic_address         json,
	archived_at                timestamptz,
	created_at                 timestamptz NOT NULL,
	updated_at                 timestamptz NOT NULL,
	version                    integer     NOT NULL,
	-- (lo, hi): an index that led with position_hi would give every list's
	-- order, and the planner could walk it past other accounts' rows.
	UNIQUE (position_lo, position_hi)
);

-- The lists' indexes, one per list: the account's active companies, or
-- those with one reference, and the same two of its archived companies.
-- Each is partial on a condition that only its own list's query states
-- (true of every row it must hold: archived or not; the reference is set;
-- a version is 1 or more), so that no list can be read through another's
-- index and sorted, whatever the statistics (see keyset in
-- query/query.go).
CREATE INDEX companies_active_by_account ON companies (account_id, position_hi, position_lo)
	WHERE archived_at IS NULL AND version <> 0;
CREATE INDEX companies_active_by_reference ON companies (account_id, external_reference, position_hi, position_lo)
	WHERE archived_at IS NULL AND external_reference IS NOT NULL;
CREATE INDEX companies_archived_by_account ON companies (account_id, position_hi, position_lo)
	WHERE archived_at IS NOT NULL AND version <> 0;
CREATE INDEX companies_archived_by_reference ON companies (account_id, external_reference, position_hi, position_lo)
	WHERE archived_at IS NOT NULL AND external_reference IS NOT NULL;
