-- One row per projection. position is the event store's opaque position
-- (events.Position.String), so both stores share this table.
CREATE TABLE projection_checkpoints (
	name       text        PRIMARY KEY,
	position   text        NOT NULL,
	updated_at timestamptz NOT NULL DEFAULT now()
);
