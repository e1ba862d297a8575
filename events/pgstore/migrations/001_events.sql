-- The event log. Rows are immutable: no UPDATE or DELETE is ever issued.
CREATE TABLE events (
	global_position bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	-- The appending transaction's id. Readers order by (tx_id, global_position)
	-- and read only transactions older than every running one; see order.go.
	tx_id           xid8        NOT NULL DEFAULT pg_current_xact_id(),
	event_id        uuid        NOT NULL UNIQUE,
	stream_name     text        NOT NULL,
	stream_revision bigint      NOT NULL CHECK (stream_revision >= 0),
	event_type      text        NOT NULL,
	-- json, not jsonb: auditors get back the exact bytes that were appended.
	data            json        NOT NULL,
	metadata        json        NOT NULL,
	recorded_at     timestamptz NOT NULL DEFAULT statement_timestamp(),
	UNIQUE (stream_name, stream_revision)
);

CREATE INDEX events_global_order ON events (tx_id, global_position);

-- Appends are INSERTs; a stray UPDATE or DELETE is a bug worth failing loudly.
CREATE FUNCTION events_are_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'events are immutable';
END $$;

CREATE TRIGGER events_immutable BEFORE UPDATE OR DELETE ON events
	FOR EACH ROW EXECUTE FUNCTION events_are_immutable();
