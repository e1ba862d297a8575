-- Read model of companies, version 2 (2: invoice_number_prefix). Unqualified names: the statements run
-- with search_path set to the schema being built (public for a new database,
-- a shadow schema during a rebuild).
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
	address                    jsonb       NOT NULL,
	default_currency           text        NOT NULL,
	default_language           text        NOT NULL,
	default_payment_terms_days integer     NOT NULL,
	email                      text,
	external_reference         text,
	identifiers                jsonb       NOT NULL,
	invoice_number_prefix      text        NOT NULL,
	archived_at                timestamptz,
	created_at                 timestamptz NOT NULL,
	updated_at                 timestamptz NOT NULL,
	version                    integer     NOT NULL,
	UNIQUE (position_hi, position_lo)
);

CREATE INDEX companies_active_by_account ON companies (account_id, position_hi, position_lo) WHERE archived_at IS NULL;
CREATE INDEX companies_active_by_reference ON companies (account_id, external_reference, position_hi, position_lo) WHERE archived_at IS NULL;
