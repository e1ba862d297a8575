-- Read model of invoices, version 9 (unqualified names; see companies.sql).
-- 2: InvoiceIssued and InvoiceVoided update the row.
-- 3: customer, issuer and lines are json holding the API's rendering, read
--    back as stored; each list index is partial on a condition that only
--    its list states (invoices_by_reference on the invoices that have
--    one); the position's unique index leads with position_lo.
-- 4: no unique index on stream_name or on the position. Nothing reads an
--    invoice by either, and the two were a fifth of the cost of writing a
--    row (100,000 rows in one INSERT: 3.4-3.7 s with them, 2.8-2.9 s
--    without), on the table that a catch-up and every create write most.
--    The primary key keeps re-applying a draft a no-op. One row per
--    stream and per event holds because only an InvoiceDrafted inserts a
--    row, and the command side appends it only as revision 0 of a new
--    stream; `invoicing audit` reports any live row that a replay of the
--    events does not produce. The companies and customers tables keep
--    theirs: they are small and written rarely.
-- 5: InvoiceRevised overwrites a draft's content (customer, dates, lines,
--    amounts, references, notes, terms), and InvoiceIssued may move
--    issue_date and due_date; the lists' filters follow the current values.
-- 6: the document fields of issue 22 (buyer_reference, tax_exemptions,
--    delivery_date, delivery_address, billing_period) and tax_breakdown,
--    in one json object as the API renders those members (document); the
--    lines gain unit_code and tax_category, the snapshots bank_account
--    and electronic_address.
-- 7: issue 23's settlement: amount_credited_minor, amount_paid_minor,
--    amount_due_minor, amount_refundable_minor and payment_status, copied
--    from the events that change them (CreditNoteIssued, PaymentRecorded,
--    PaymentReversed carry the settlement after them; a draft's, a
--    revision's and a void's are events.Settle's, computed in Go: the rule
--    has one home), with invoices_by_payment_status; and invoice_payments,
--    one row per PaymentRecorded, which PaymentReversed marks reversed;
--    has_payments, so that the GET of an invoice that never had a payment
--    (most) does not look in invoice_payments.
-- 8: customer, issuer, lines and document are text (see below).
-- 9: invoices_by_customer holds the list's columns (see there).
-- Snapshots and lines are rendered once, when the event is projected, as the
-- API renders them (encoding/json of the events types, without HTML
-- escaping), and stored as that text, byte for byte, so a read passes it
-- through: jsonb would parse it on insert and print it on every read, and
-- json (versions 3-7) parsed it on every insert only to check what
-- encoding/json had just written. That check was PostgreSQL's json_in over
-- 4 MB for every 2,000 drafts of a catch-up, 12 ms of the batch's INSERT,
-- on the projection whose batches the catch-up waits for.
-- The amounts are copied, never recomputed.
CREATE TABLE invoices (
	position_hi              bigint      NOT NULL,
	position_lo              bigint      NOT NULL,
	id                       uuid        PRIMARY KEY,
	company_id               uuid        NOT NULL,
	account_id               text        NOT NULL,
	customer_id              uuid        NOT NULL,
	stream_name              text        NOT NULL,
	customer_name            text        NOT NULL,
	customer                 text        NOT NULL,
	issuer                   text        NOT NULL,
	currency                 text        NOT NULL,
	language                 text        NOT NULL,
	issue_date               date        NOT NULL,
	due_date                 date,
	issued_at                timestamptz,
	number                   text,
	status                   text        NOT NULL CHECK (status IN ('draft', 'issued', 'void')),
	void_reason              text,
	voided_at                timestamptz,
	lines                    text        NOT NULL,
	subtotal_minor           bigint      NOT NULL CHECK (subtotal_minor BETWEEN 0 AND 9007199254740991),
	tax_minor                bigint      NOT NULL CHECK (tax_minor BETWEEN 0 AND 9007199254740991),
	total_minor              bigint      NOT NULL CHECK (total_minor BETWEEN 0 AND 9007199254740991),
	external_reference       text,
	purchase_order_reference text,
	notes                    text,
	terms                    text,
	document                 text        NOT NULL,
	amount_credited_minor    bigint      NOT NULL CHECK (amount_credited_minor BETWEEN 0 AND 9007199254740991),
	amount_paid_minor        bigint      NOT NULL CHECK (amount_paid_minor BETWEEN 0 AND 9007199254740991),
	amount_due_minor         bigint      NOT NULL CHECK (amount_due_minor BETWEEN 0 AND 9007199254740991),
	amount_refundable_minor  bigint      NOT NULL CHECK (amount_refundable_minor BETWEEN 0 AND 9007199254740991),
	payment_status           text        NOT NULL CHECK (payment_status IN ('unpaid', 'partially_paid', 'paid')),
	has_payments             boolean     NOT NULL DEFAULT false,
	created_at               timestamptz NOT NULL,
	updated_at               timestamptz NOT NULL,
	version                  integer     NOT NULL
);
-- The documents pass PostgreSQL's 2 KB threshold from about four lines on,
-- so writes compress them and every read of the row decompresses them:
-- with lz4 rather than pglz, 100,000 five-line rows were written in 5.2 s
-- instead of 6.8 and read by id about 10% faster, at the same size. Live
-- tables from before get it from migration 006; a server built without
-- lz4 keeps pglz.
DO $$
BEGIN
	ALTER TABLE invoices ALTER COLUMN customer SET COMPRESSION lz4, ALTER COLUMN issuer SET COMPRESSION lz4,
		ALTER COLUMN lines SET COMPRESSION lz4, ALTER COLUMN document SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
	RAISE NOTICE 'this server has no lz4: invoice documents stay compressed with pglz';
END $$;

-- The lists' indexes, one per list: the company's invoices, or those of one
-- reference, customer or status, each in position order. Each is partial on
-- a condition that only its own list's query states (true of every row it
-- must hold: the filter is set; an invoice's version is 1 or more), so that
-- no list can be read through another list's index and sorted, whatever
-- the statistics (see keyset in query/query.go).
CREATE INDEX invoices_by_company ON invoices (account_id, company_id, position_hi, position_lo)
	WHERE version <> 0;
-- The list by customer is read from its index alone: a customer's invoices
-- are spread over the table, one heap page a row, where the other lists'
-- rows lie together in position order. At 1M invoices that was the one
-- list whose p99 stayed above 10 ms (docs/benchmarks.md, issue 25). The
-- index holds every column the summary shows but void_reason, which the
-- list reads from the row only for a void invoice (query's
-- byCustomerFields): with it, an entry could pass btree's 2,704 bytes
-- (500 characters of 4 bytes), and the insert of an accepted event would
-- fail. Without it an entry is at most about 2,100 bytes: a 200-character
-- customer name and a 255-character reference, the longest the commands
-- accept, took 2,064 bytes in 4-byte characters (pageinspect's itemlen, in
-- TestTheListByCustomerKeepsTheLongestAcceptedValues).
CREATE INDEX invoices_by_customer ON invoices (account_id, company_id, customer_id, position_hi, position_lo)
	INCLUDE (id, customer_name, currency, issue_date, due_date, issued_at, number, status,
		subtotal_minor, tax_minor, total_minor, amount_credited_minor, amount_paid_minor,
		amount_due_minor, amount_refundable_minor, payment_status, created_at, updated_at,
		version, voided_at, external_reference)
	WHERE customer_id IS NOT NULL;
-- About 1 invoice in 100 has a reference: the others need no entry.
CREATE INDEX invoices_by_reference ON invoices (account_id, company_id, external_reference, position_hi, position_lo)
	WHERE external_reference IS NOT NULL;
CREATE INDEX invoices_by_status ON invoices (account_id, company_id, status, position_hi, position_lo)
	WHERE status IS NOT NULL;
CREATE INDEX invoices_by_payment_status ON invoices (account_id, company_id, payment_status, position_hi, position_lo)
	WHERE payment_status IS NOT NULL;

-- An invoice's payments, in the order recorded (the position of their
-- PaymentRecorded); a reversal marks its payment, which stays. Read only
-- with their invoice, by invoice_payments_by_invoice. The primary key
-- keeps re-applying a payment a no-op.
CREATE TABLE invoice_payments (
	position_hi     bigint      NOT NULL,
	position_lo     bigint      NOT NULL,
	id              uuid        PRIMARY KEY,
	invoice_id      uuid        NOT NULL,
	amount_minor    bigint      NOT NULL CHECK (amount_minor BETWEEN 1 AND 9007199254740991),
	paid_on         date        NOT NULL,
	method          text,
	reference       text,
	recorded_at     timestamptz NOT NULL,
	reversed_at     timestamptz,
	reversal_reason text
);
CREATE INDEX invoice_payments_by_invoice ON invoice_payments (invoice_id, position_hi, position_lo);
