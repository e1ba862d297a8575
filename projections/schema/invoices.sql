-- Read model of invoices, version 2 (unqualified names; see companies.sql).
-- 2: InvoiceIssued and InvoiceVoided update the row.
-- Snapshots and lines are stored as the event recorded them (JSONB); the
-- amounts are copied, never recomputed.
CREATE TABLE invoices (
	position_hi              bigint      NOT NULL,
	position_lo              bigint      NOT NULL,
	id                       uuid        PRIMARY KEY,
	company_id               uuid        NOT NULL,
	account_id               text        NOT NULL,
	customer_id              uuid        NOT NULL,
	stream_name              text        NOT NULL UNIQUE,
	customer_name            text        NOT NULL,
	customer                 jsonb       NOT NULL,
	issuer                   jsonb       NOT NULL,
	currency                 text        NOT NULL,
	language                 text        NOT NULL,
	issue_date               date        NOT NULL,
	due_date                 date,
	issued_at                timestamptz,
	number                   text,
	status                   text        NOT NULL CHECK (status IN ('draft', 'issued', 'void')),
	void_reason              text,
	voided_at                timestamptz,
	lines                    jsonb       NOT NULL,
	subtotal_minor           bigint      NOT NULL CHECK (subtotal_minor BETWEEN 0 AND 9007199254740991),
	tax_minor                bigint      NOT NULL CHECK (tax_minor BETWEEN 0 AND 9007199254740991),
	total_minor              bigint      NOT NULL CHECK (total_minor BETWEEN 0 AND 9007199254740991),
	external_reference       text,
	purchase_order_reference text,
	notes                    text,
	terms                    text,
	created_at               timestamptz NOT NULL,
	updated_at               timestamptz NOT NULL,
	version                  integer     NOT NULL,
	UNIQUE (position_hi, position_lo)
);

CREATE INDEX invoices_by_company ON invoices (account_id, company_id, position_hi, position_lo);
CREATE INDEX invoices_by_customer ON invoices (account_id, company_id, customer_id, position_hi, position_lo);
CREATE INDEX invoices_by_reference ON invoices (account_id, company_id, external_reference, position_hi, position_lo);
CREATE INDEX invoices_by_status ON invoices (account_id, company_id, status, position_hi, position_lo);
