-- The audit chain over the global order (see events/chain.go): one row per
-- event, written by the one leading sealer in the same transaction as the
-- seals it takes. seq counts this service's events from 1 in the order the
-- projectors see them; chain is the link after the event.
CREATE TABLE audit_chain (
	seq        bigint      PRIMARY KEY CHECK (seq > 0),
	position   text        NOT NULL UNIQUE,
	event_id   uuid        NOT NULL UNIQUE,
	chain      bytea       NOT NULL CHECK (length(chain) = 32),
	chained_at timestamptz NOT NULL DEFAULT now()
);

-- Seals: what the chain held after event seq, signed when the service has
-- a signing key. A copy an auditor keeps elsewhere proves the log since.
CREATE TABLE audit_seals (
	seq        bigint      PRIMARY KEY REFERENCES audit_chain (seq),
	chain      bytea       NOT NULL CHECK (length(chain) = 32),
	sealed_at  timestamptz NOT NULL,
	public_key text        NOT NULL DEFAULT '',
	signature  text        NOT NULL DEFAULT ''
);
