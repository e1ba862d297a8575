-- A batch's checkpoint compare-and-swap, as one statement that fails the
-- transaction when it does not hold: the checkpoint is not at from (another
-- worker committed: IV001), or the quarantine changed since the runner read
-- it (IV002). Failing on the server lets a runner send a batch's rows and
-- its checkpoint as one implicit transaction, in one round trip, instead of
-- BEGIN, the batch and COMMIT. The UPDATE waits for whoever holds the row
-- (a rebuild's swap, a retry) and sees what they committed.
CREATE FUNCTION projection_advance(p_name text, p_from text, p_to text, p_epoch bigint) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
	epoch bigint;
BEGIN
	UPDATE projection_checkpoints SET position = p_to, updated_at = now()
	WHERE name = p_name AND position = p_from
	RETURNING quarantine_epoch INTO epoch;
	IF NOT FOUND THEN
		RAISE EXCEPTION 'checkpoint % is no longer at %', p_name, p_from USING ERRCODE = 'IV001';
	END IF;
	IF epoch <> p_epoch THEN
		RAISE EXCEPTION 'the quarantine of % changed', p_name USING ERRCODE = 'IV002';
	END IF;
END $$;
