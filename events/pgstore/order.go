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
// $5 names the event types whose data and metadata the reader wants (NULL:
// all); other rows come with NULL payloads, their positions all the same.
const readAllSQL = `
SELECT global_position, tx_id::text AS tx_text, event_id, stream_name, stream_revision, event_type,
       CASE WHEN $5::text[] IS NULL OR event_type = ANY($5) THEN data::text END,
       CASE WHEN $5::text[] IS NULL OR event_type = ANY($5) THEN metadata::text END,
       recorded_at
FROM events
WHERE (tx_id, global_position) > ($1::text::xid8, $2::bigint)
  AND tx_id < pg_snapshot_xmin(pg_current_snapshot())
  AND event_type = ANY($3::text[])
ORDER BY tx_id, global_position -- the xid8 column: tx_text would sort "1000" before "999"
LIMIT $4`

// heldBackSQL finds a row of the types in $1 (NULL: any) that readers
// cannot see yet because an older transaction is still open; a subscription
// then polls soon instead of waiting for the next notification. It scans
// events_global_order backwards from its end down to the horizon at most:
// the rows of transactions in flight, whatever the size of the log.
// ("EXISTS (... WHERE tx_id >= horizon)" was planned as a sequential scan,
// and EXISTS drops the ORDER BY and LIMIT that keep it on the index.)
const heldBackSQL = `
SELECT tx_id::text FROM events
WHERE tx_id >= pg_snapshot_xmin(pg_current_snapshot()) AND ($1::text[] IS NULL OR event_type = ANY($1))
ORDER BY tx_id DESC LIMIT 1`
