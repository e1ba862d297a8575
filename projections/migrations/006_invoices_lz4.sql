-- The live invoices table of a database from before compresses its
-- documents with lz4 from now on, as schema/invoices.sql creates it (see
-- there). Rows written before keep pglz; both read back the same. Only the
-- columns the live table has are changed: it may be of any version, and a
-- new database has no table yet (Install creates it after the migrations).
DO $$
DECLARE
	col text;
BEGIN
	FOR col IN
		SELECT column_name FROM information_schema.columns
		WHERE table_schema = 'public' AND table_name = 'invoices'
		  AND column_name IN ('customer', 'issuer', 'lines', 'document')
	LOOP
		EXECUTE format('ALTER TABLE public.invoices ALTER COLUMN %I SET COMPRESSION lz4', col);
	END LOOP;
EXCEPTION WHEN feature_not_supported THEN
	RAISE NOTICE 'this server has no lz4: invoice documents stay compressed with pglz';
END $$;
