-- Read model of customers, version 4 (unqualified names; see companies.sql).
-- 2: address and identifiers are json holding the API's rendering, read
--    back as stored (see invoices.sql); each list index is partial on a
--    condition that only its list states; the position's unique index
--    leads with position_lo.
-- 3: updates and archiving (CustomerUpdated, CustomerArchived,
--    CustomerUnarchived) change rows; the archived lists' indexes.
-- 4: electronic_address (issue 22), json as the API renders it, NULL
--    when absent.
CREATE TABLE customers (
	position_hi        bigint      NOT NULL,
	position_lo        bigint      NOT NULL,
	id                 uuid        PRIMARY KEY,
	company_id         uuid        NOT NULL,
	account_id         text        NOT NULL,
	stream_name        text        NOT NULL UNIQUE,
	name               text        NOT NULL,
	address            json        NOT NULL,
	email              text,
	external_reference text,
	identifiers        json        NOT NULL,
	electronic_address json,
	archived_at        timestamptz,
	created_at         timestamptz NOT NULL,
	updated_at         timestamptz NOT NULL,
	version            integer     NOT NULL,
	UNIQUE (position_lo, position_hi) -- (lo, hi): see companies.sql
);

-- One index per list (active or archived; all, or by reference), each
-- partial on a condition only its list states (see companies.sql).
CREATE INDEX customers_active_by_company ON customers (account_id, company_id, position_hi, position_lo)
	WHERE archived_at IS NULL AND version <> 0;
CREATE INDEX customers_active_by_reference ON customers (account_id, company_id, external_reference, position_hi, position_lo)
	WHERE archived_at IS NULL AND external_reference IS NOT NULL;
CREATE INDEX customers_archived_by_company ON customers (account_id, company_id, position_hi, position_lo)
	WHERE archived_at IS NOT NULL AND version <> 0;
CREATE INDEX customers_archived_by_reference ON customers (account_id, company_id, external_reference, position_hi, position_lo)
	WHERE archived_at IS NOT NULL AND external_reference IS NOT NULL;
