-- Read model of webhook endpoints, version 1 (unqualified names; see
-- companies.sql): one row per endpoint, overwritten by its updates,
-- rotations and deletion. No secret is stored: secret_generation and the
-- service's master key derive it (webhook.Secret); previous_valid_until is
-- when the previous generation stops signing (NULL before a rotation).
-- event_types empty means every public type. A deleted endpoint keeps its
-- row with deleted_at set; the API and the dispatcher skip it.
--
-- (position_hi, position_lo) is the creating event's global position: the
-- keyset key of the list, and what tells the dispatcher whether the
-- endpoint existed before an event.
CREATE TABLE webhook_endpoints (
	position_hi          bigint      NOT NULL,
	position_lo          bigint      NOT NULL,
	id                   uuid        PRIMARY KEY,
	account_id           text        NOT NULL,
	stream_name          text        NOT NULL UNIQUE,
	url                  text        NOT NULL,
	event_types          text[]      NOT NULL,
	description          text,
	enabled              boolean     NOT NULL,
	disabled_reason      text,
	secret_generation    integer     NOT NULL,
	previous_valid_until timestamptz,
	deleted_at           timestamptz,
	created_at           timestamptz NOT NULL,
	updated_at           timestamptz NOT NULL,
	version              integer     NOT NULL,
	UNIQUE (position_lo, position_hi)
);

-- The account's list (endpoints not deleted), and the dispatcher's (enabled
-- and not deleted), each partial on a condition only its own query states.
CREATE INDEX webhook_endpoints_by_account ON webhook_endpoints (account_id, position_hi, position_lo)
	WHERE deleted_at IS NULL AND version <> 0;
CREATE INDEX webhook_endpoints_enabled_by_account ON webhook_endpoints (account_id, position_hi, position_lo)
	WHERE enabled AND deleted_at IS NULL;
