-- New payloads are compressed with lz4 instead of pglz. An event's data and
-- metadata (≈ 2.5 KB for an invoice) pass PostgreSQL's 2 KB threshold, so
-- every append compressed them with pglz: lz4 cut the server time of
-- inserting 123,030 such events from 8.0 to 5.1 s, at the same size, and
-- decompresses faster for every reader. Existing rows keep their pglz
-- payloads; both read back the same. A server built without lz4 keeps pglz.
DO $$
BEGIN
	ALTER TABLE events ALTER COLUMN data SET COMPRESSION lz4, ALTER COLUMN metadata SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
	RAISE NOTICE 'this server has no lz4: event payloads stay compressed with pglz';
END $$;
