-- The audit chain over the global order (see audit/chain.go): one row per
-- event, written by the one leading sealer (or `audit seal`) in the same
-- transaction as the seals it takes. seq counts this service's events from
-- 1 in the order the projectors see them; chain is the link after the event.
--
-- Until the audit package had migrations of its own, these tables were the
-- projections' migration 004, with this very DDL; databases migrated then
-- have them already, with their rows, so both statements are IF NOT EXISTS
-- and leave such tables as they are.
CREATE TABLE IF NOT EXISTS audit_chain (
	seq        bigint      PRIMARY KEY CHECK (seq > 0),
	position   text        NOT NULL UNIQUE,
	event_id   uuid        NOT NULL UNIQUE,
	chain      bytea       NOT NULL CHECK (length(chain) = 32),
	chained_at timestamptz NOT NULL DEFAULT now()
);

-- Seals: what the chain held after event seq, signed when the service has
-- a signing key. A copy an auditor keeps elsewhere proves the log since.
CREATE TABLE IF NOT EXISTS audit_seals (
	seq        bigint      PRIMARY KEY REFERENCES audit_chain (seq),
	chain      bytea       NOT NULL CHECK (length(chain) = 32),
	sealed_at  timestamptz NOT NULL,
	public_key text        NOT NULL DEFAULT '',
	signature  text        NOT NULL DEFAULT ''
);
