-- Retention: a finished delivery (succeeded or failed) is deleted, with its
-- attempts, once its last attempt is older than WEBHOOK_DELIVERY_RETENTION
-- (webhook/retention.go). This index is what the purge reads, oldest
-- first; pending deliveries are never in it and never purged.
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (last_attempt_at)
	WHERE status <> 'pending';
