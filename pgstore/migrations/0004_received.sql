-- When each submission was received (Submission.Received), for the
-- dedupe window of WithID ids (IDReceived, IDsSince) and to name a
-- submission without an id (Retract). NULL when the caller did not say:
-- the store's own clock at the append then counts, which is created_at.
-- Rows appended before this migration have NULL too.
ALTER TABLE {{prefix}}submissions ADD COLUMN received timestamptz;

-- The ids of a board received since a time (IDsSince), in one range scan.
CREATE INDEX {{prefix}}submissions_board_received_idx
	ON {{prefix}}submissions (board, (coalesce(received, created_at)))
	WHERE id IS NOT NULL;
