-- An invoice's payments as the GET of the invoice reads them (query's
-- paymentsColumn calls it for an invoice that has some): json, in the order
-- recorded, each with its reversal if any.
--
-- A function, not a subquery in the GET's statement: PostgreSQL sets up
-- every node of a statement's plan before it runs it, a subquery's
-- aggregate and index scan included, even when a CASE never evaluates it.
-- For the GET of an invoice without payments (most) that set-up was a
-- tenth to a fifth of PostgreSQL's CPU; a function call is set up only
-- when called. PL/pgSQL keeps the plan of its statement for the session
-- (an SQL function's is made again at every execution of the statement
-- that calls it).
--
-- STABLE, so that its statement reads with the snapshot of the statement
-- that calls it: the payments add up to the amounts of the row read with
-- them, whatever commits in between. The table name is unqualified, found
-- through the search_path when the statement is planned, like the reads'
-- own: a rebuild's swap moves a new invoice_payments into public, and
-- PostgreSQL plans the statement again once the table it read is gone.
-- It reads the columns of invoice_payments as the invoices read model
-- creates them (schema/invoices.sql, version 7 on); a version that changes
-- them changes this function in a migration of its own.
CREATE FUNCTION invoice_payments_json(invoice uuid) RETURNS json
LANGUAGE plpgsql STABLE STRICT AS $$
BEGIN
	RETURN (SELECT coalesce(json_agg(json_build_object('id', p.id,
		'amount_minor', p.amount_minor, 'paid_on', p.paid_on::text, 'method', coalesce(p.method, ''),
		'reference', coalesce(p.reference, ''), 'recorded_at', p.recorded_at, 'reversed_at', p.reversed_at,
		'reversal_reason', coalesce(p.reversal_reason, '')) ORDER BY p.position_hi, p.position_lo), '[]')
		FROM invoice_payments p WHERE p.invoice_id = invoice);
END $$;
