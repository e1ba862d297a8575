-- Read model of companies, version 1. Unqualified names: the statements run
-- with search_path set to the schema being built (public for a new database,
-- a shadow schema during a rebuild).
--
-- seq is the projection order: the projector is the only writer and commits
-- batches one after another, so seq values become visible in increasing
-- order and keyset pages on seq never skip a row that is being added.
CREATE TABLE companies (
	seq                        bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
	id                         uuid        PRIMARY KEY,
	account_id                 text        NOT NULL,
	stream_name                text        NOT NULL UNIQUE,
	legal_name                 text        NOT NULL,
	trading_name               text,
	address                    jsonb       NOT NULL,
	default_currency           text        NOT NULL,
	default_language           text        NOT NULL,
	default_payment_terms_days integer     NOT NULL,
	email                      text,
	external_reference         text,
	identifiers                jsonb       NOT NULL,
	archived_at                timestamptz,
	created_at                 timestamptz NOT NULL,
	updated_at                 timestamptz NOT NULL,
	version                    integer     NOT NULL
);

CREATE INDEX companies_active_by_account ON companies (account_id, seq) WHERE archived_at IS NULL;
CREATE INDEX companies_active_by_reference ON companies (account_id, external_reference, seq) WHERE archived_at IS NULL;
