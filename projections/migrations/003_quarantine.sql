-- Events a projection could not apply: Apply returned an error (a payload it
-- cannot decode), or its statements raised a data exception or an integrity
-- constraint violation (SQLSTATE classes 22 and 23). The runner records them
-- in the transaction that moves its checkpoint past them and goes on, so one
-- bad event does not stop a projection for every tenant; later events of the
-- same stream are set aside too, so that they never apply to a row whose
-- earlier events are missing. `invoicing projections retry` applies them.
--
-- name is the checkpoint name: the projection's, or a rebuild's
-- ("companies@v2"), whose rows become the projection's at the swap. position
-- is events.Position.String(), as in projection_checkpoints.
CREATE TABLE projection_quarantine (
	name            text        NOT NULL,
	position        text        NOT NULL,
	event_id        uuid        NOT NULL,
	stream_name     text        NOT NULL,
	stream_revision bigint      NOT NULL,
	event_type      text        NOT NULL,
	error           text        NOT NULL,
	quarantined_at  timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (name, position)
);

-- Runners look up a projection's quarantined streams; a retry checks that
-- no earlier event of a stream is still quarantined.
CREATE INDEX projection_quarantine_stream ON projection_quarantine (name, stream_name, stream_revision);

-- A runner keeps its projection's quarantined streams in memory. Whoever else
-- changes that projection's rows (a retry, a rebuild's swap) bumps this
-- counter in the same transaction; the runner's checkpoint compare-and-swap
-- returns it, so a runner whose list went stale notices before it commits.
ALTER TABLE projection_checkpoints ADD COLUMN quarantine_epoch bigint NOT NULL DEFAULT 0;
