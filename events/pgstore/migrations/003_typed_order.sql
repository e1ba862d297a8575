-- The log's order index carries each event's type. A reader that skips
-- most of the log (a companies subscription or rebuild over a log of
-- invoices: readSkippingSQL) needs only each row's place and type, and so
-- reads them from the index alone once VACUUM has marked the table's pages
-- all-visible (an index-only scan), instead of fetching every skipped
-- event's row. Same key and same name: every other plan stays as it was.
-- Built in the migration's transaction, so appends wait for it: seconds for
-- a million events.
CREATE INDEX events_global_order_typed ON events (tx_id, global_position) INCLUDE (event_type);
DROP INDEX events_global_order;
ALTER INDEX events_global_order_typed RENAME TO events_global_order;
