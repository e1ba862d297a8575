package pgstore

// How readers follow the global order without skipping an event.
//
// A sequence value is taken at INSERT but becomes visible at COMMIT, so a
// reader of "global_position > checkpoint" can see position 6 before 5
// commits, store 6, and never read 5. We use the transaction-id filter
// (as Emmett and watermill-sql do) rather than serialising appends:
//
//   - every event row records the appending transaction's id (tx_id, xid8);
//   - readers order by (tx_id, global_position) and only read rows whose
//     tx_id is below pg_snapshot_xmin(pg_current_snapshot()): every
//     transaction below that horizon has committed or aborted, so no row can
//     later appear before the reader's checkpoint;
//   - checkpoints are the pair (tx_id, global_position), carried in
//     events.Position as (hi, lo).
//
// Appends stay fully concurrent: nothing serialises commits, so create
// throughput scales with PostgreSQL's commit rate rather than one commit
// latency at a time.
//
// Limits, which operators must know:
//   - projector lag is at least the age of the oldest open write transaction
//     in the cluster; serve sets idle_in_transaction_session_timeout on its
//     connections, and long write transactions elsewhere in the same cluster
//     delay projections (they never corrupt them);
//   - transaction ids belong to one cluster: a logical dump and restore into
//     a new cluster breaks stored checkpoints (restore physically, or rebuild
//     projections from zero after a logical restore);
//   - the append must be the first write of its transaction so that tx_id is
//     taken when the row is written (Append owns its transaction).
//
// Type lists ($3 and $5 here, pendingSQL's $1) are sent as array literals
// (typeList), made once: pgx encoded the 40-odd known types as a binary
// array on every page read, 4% of the service's CPU under creates. Each is
// cast once per statement, in a subquery ((SELECT $3::text::text[])::text[],
// an InitPlan; the outer cast keeps ANY from reading it as a set): a cast of a
// parameter in a generic plan, which PostgreSQL uses for a prepared
// statement after five runs, is not folded into a constant but evaluated
// for every row it filters, and parsing the 40-odd types for each row was
// a tenth of PostgreSQL's CPU in a catch-up (a page of 2,000 rows read in
// 8-9 ms instead of 3).
const readAllSQL = `
SELECT global_position, tx_id::text AS tx_text, event_id, stream_name, stream_revision, event_type,
       data::text, metadata::text, recorded_at
FROM events` + pageRule

// pageRule is which rows of events a page holds, in what order: those of
// the types in $3 after the position ($1, $2) and below the horizon, $4 at
// most. readAllSQL and readSkippingSQL read pages by it alike.
const pageRule = `
WHERE (tx_id, global_position) > ($1::text::xid8, $2::bigint)
  AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
  AND event_type = ANY((SELECT $3::text::text[])::text[])
ORDER BY tx_id, global_position -- the xid8 column: tx_text would sort "1000" before "999"
LIMIT $4`

// readSkippingSQL is readAllSQL's page for a reader of the types in $5
// only (a projection of companies, the webhook dispatcher): the same rows
// are scanned, by the same rule, but only those of $5's types come back,
// with their payloads, and the page's last row, without its payload unless
// it is of those types, which stands for every row skipped before it: the
// reader's position moves past them, and so reaches the log's head (read
// your writes waits for it) even where none of its types are. The last
// column is how many rows the page scanned, since a full page, not a full
// answer, means "read again at once".
//
// The page is a MATERIALIZED CTE of the index's columns and the type, read
// from events_global_order as readAllSQL's is; the rows kept are joined
// back to events by primary key, so a skipped row's payload is neither
// detoasted nor sent, and the service does not scan it: a companies
// projection's catch-up over 300,000 invoices had read and passed over 1.5
// million rows. The count is taken once, in an InitPlan (the scalar
// subqueries on scanned): joined as a relation, the planner, which
// guesses a page of one row, counted the page again for each of its rows
// (2,000 × 2,000, 170-550 ms a page). The rows kept are put in order
// before the join (kept), which keeps that order: sorted after it, a page
// of a reader that keeps most rows (the invoices projection) was sorted
// with its payloads, 4.6 MB, on disk, for every page.
const readSkippingSQL = `
WITH page AS MATERIALIZED (
	SELECT tx_id, global_position, event_type, row_number() OVER (ORDER BY tx_id, global_position) AS n
	FROM events` + pageRule + `
), scanned AS MATERIALIZED (
	SELECT count(*) AS n FROM page
), kept AS (
	SELECT global_position, n FROM page
	WHERE event_type = ANY((SELECT $5::text::text[])::text[]) OR n = (SELECT n FROM scanned)
	ORDER BY n
)
SELECT e.global_position, e.tx_id::text AS tx_text, e.event_id, e.stream_name, e.stream_revision, e.event_type,
       CASE WHEN e.event_type = ANY((SELECT $5::text::text[])::text[]) THEN e.data::text END,
       CASE WHEN e.event_type = ANY((SELECT $5::text::text[])::text[]) THEN e.metadata::text END,
       e.recorded_at, (SELECT n FROM scanned)
FROM kept
CROSS JOIN LATERAL (SELECT * FROM events WHERE events.global_position = kept.global_position) e
ORDER BY kept.n`

// pendingSQL finds a row of the types in $1 after the reader's
// position ($2, $3) that the reader's last page did not hold: one hidden
// behind an older transaction that is still open, or one that became
// readable after the page was read, when that transaction ended in
// between (a projection's batch or the sealer's, whose end no wake-up
// announces). A subscription then polls soon instead of waiting for the
// next notification. It scans events_global_order backwards from its end
// down to the reader's position at most: the rows committed since the
// page, whatever the size of the log. (Asking only for rows at or above
// the horizon, as before, missed the second kind: such an event waited
// for the next poll, a second.)
//
// The output column is named newest: named tx_id, it would be what ORDER BY
// tx_id sorts by, as text, and no index serves that.
const pendingSQL = `
SELECT tx_id::text AS newest FROM events
WHERE (tx_id, global_position) > ($2::text::xid8, $3::bigint) AND event_type = ANY((SELECT $1::text::text[])::text[])
ORDER BY tx_id DESC, global_position DESC LIMIT 1`
