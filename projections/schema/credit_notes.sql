-- Read model of credit notes, version 1 (unqualified names; see
-- companies.sql): one row per CreditNoteIssued, which never changes.
-- As in invoices.sql, the snapshots, the lines and the document fields
-- (the document terms and the VAT breakdown) are json holding the API's
-- rendering, read back as stored, and the amounts are copied, never
-- recomputed. version is always 1 (a credit note is one event); it is here
-- for the unfiltered list's index predicate (see query/query.go).
CREATE TABLE credit_notes (
	position_hi        bigint      NOT NULL,
	position_lo        bigint      NOT NULL,
	id                 uuid        PRIMARY KEY,
	company_id         uuid        NOT NULL,
	account_id         text        NOT NULL,
	invoice_id         uuid        NOT NULL,
	customer_id        uuid        NOT NULL,
	stream_name        text        NOT NULL,
	invoice_number     text        NOT NULL,
	invoice_issue_date date        NOT NULL,
	number             text        NOT NULL,
	sequence           bigint      NOT NULL,
	issue_date         date        NOT NULL,
	reason             text        NOT NULL,
	external_reference text,
	customer_name      text        NOT NULL,
	customer           json        NOT NULL,
	issuer             json        NOT NULL,
	currency           text        NOT NULL,
	language           text        NOT NULL,
	lines              json        NOT NULL,
	subtotal_minor     bigint      NOT NULL CHECK (subtotal_minor BETWEEN 0 AND 9007199254740991),
	tax_minor          bigint      NOT NULL CHECK (tax_minor BETWEEN 0 AND 9007199254740991),
	total_minor        bigint      NOT NULL CHECK (total_minor BETWEEN 0 AND 9007199254740991),
	document           json        NOT NULL,
	issued_at          timestamptz NOT NULL,
	version            integer     NOT NULL
);

-- The lists' indexes, one per list, each partial on a condition only its
-- own list states, in position order (see invoices.sql).
CREATE INDEX credit_notes_by_company ON credit_notes (account_id, company_id, position_hi, position_lo)
	WHERE version <> 0;
CREATE INDEX credit_notes_by_invoice ON credit_notes (account_id, company_id, invoice_id, position_hi, position_lo)
	WHERE invoice_id IS NOT NULL;
CREATE INDEX credit_notes_by_customer ON credit_notes (account_id, company_id, customer_id, position_hi, position_lo)
	WHERE customer_id IS NOT NULL;
CREATE INDEX credit_notes_by_reference ON credit_notes (account_id, company_id, external_reference, position_hi, position_lo)
	WHERE external_reference IS NOT NULL;
