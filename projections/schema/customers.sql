-- Read model of customers, version 1 (unqualified names; see companies.sql).
CREATE TABLE customers (
	position_hi        bigint      NOT NULL,
	position_lo        bigint      NOT NULL,
	id                 uuid        PRIMARY KEY,
	company_id         uuid        NOT NULL,
	account_id         text        NOT NULL,
	stream_name        text        NOT NULL UNIQUE,
	name               text        NOT NULL,
	address            jsonb       NOT NULL,
	email              text,
	external_reference text,
	identifiers        jsonb       NOT NULL,
	archived_at        timestamptz,
	created_at         timestamptz NOT NULL,
	updated_at         timestamptz NOT NULL,
	version            integer     NOT NULL,
	UNIQUE (position_hi, position_lo)
);

CREATE INDEX customers_active_by_company ON customers (account_id, company_id, position_hi, position_lo) WHERE archived_at IS NULL;
CREATE INDEX customers_active_by_reference ON customers (account_id, company_id, external_reference, position_hi, position_lo) WHERE archived_at IS NULL;
