-- The webhook dispatcher's checkpoint: how far it has read the log. It moves
-- in the same transaction as the deliveries it enqueued for the events up
-- to it, so a crash neither loses nor doubles an enqueue.
CREATE TABLE webhook_checkpoint (
	name        text        PRIMARY KEY,
	position_hi bigint      NOT NULL,
	position_lo bigint      NOT NULL,
	updated_at  timestamptz NOT NULL DEFAULT now()
);

-- One row per (endpoint, public event). stream_name and revision find the
-- event again (the body is rendered at each attempt from the events alone,
-- so it is the same every time); the resource of the ordering rule is the
-- stream, which holds a resource's events in order (an invoice's payments
-- and credit notes included). lease_until marks a delivery a sender is
-- working on; a sender that dies leaves it, and it is due again once the
-- lease has passed (at least once). expires_at is set at the first
-- attempt: first attempt + the retry period. retry_key is the
-- idempotency-key of the last manual retry: the same request again changes
-- nothing.
CREATE TABLE webhook_deliveries (
	id               uuid        PRIMARY KEY,
	endpoint_id      text        NOT NULL,
	account_id       text        NOT NULL,
	event_id         uuid        NOT NULL,
	event_type       text        NOT NULL,
	stream_name      text        NOT NULL,
	revision         bigint      NOT NULL,
	position_hi      bigint      NOT NULL,
	position_lo      bigint      NOT NULL,
	status           text        NOT NULL DEFAULT 'pending'
	                             CHECK (status IN ('pending', 'succeeded', 'failed')),
	attempts         integer     NOT NULL DEFAULT 0,
	next_attempt_at  timestamptz NOT NULL,
	lease_until      timestamptz,
	first_attempt_at timestamptz,
	last_attempt_at  timestamptz,
	last_status      integer,
	last_error       text,
	created_at       timestamptz NOT NULL,
	expires_at       timestamptz,
	retry_key        text,
	UNIQUE (endpoint_id, event_id)
);

-- The senders' claim reads the heads off it: the earliest pending
-- delivery of each endpoint and stream (see webhook/claim.go).
CREATE INDEX webhook_deliveries_pending_order ON webhook_deliveries (endpoint_id, stream_name, position_hi, position_lo)
	WHERE status = 'pending';
-- The delivery log of an endpoint, in the events' order (keyset on the
-- position).
CREATE INDEX webhook_deliveries_by_endpoint ON webhook_deliveries (account_id, endpoint_id, position_hi, position_lo);

-- Every attempt of a delivery: HTTP status (null when no answer came),
-- latency, and the error when it failed.
CREATE TABLE webhook_attempts (
	delivery_id uuid        NOT NULL REFERENCES webhook_deliveries (id),
	n           integer     NOT NULL CHECK (n > 0),
	at          timestamptz NOT NULL,
	status      integer,
	latency_ms  integer     NOT NULL,
	error       text,
	PRIMARY KEY (delivery_id, n)
);

-- What the rule that disables a dead endpoint needs: since when every
-- attempt failed (null after a success), and when a delivery last failed
-- for good. disabled_at: the endpoint was disabled for it, once.
CREATE TABLE webhook_endpoint_health (
	endpoint_id      text        PRIMARY KEY,
	account_id       text        NOT NULL,
	failing_since    timestamptz,
	last_failed_at   timestamptz,
	last_success_at  timestamptz,
	disabled_at      timestamptz
);
