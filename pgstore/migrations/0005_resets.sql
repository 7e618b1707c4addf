-- Resets (Reset): the last reset of a window period. Standings of that
-- period counts only the submissions appended after it (seq above the
-- reset's), and the period's kept standings are deleted, so that a rebuild
-- does not bring a reset period back.
CREATE TABLE {{prefix}}resets (
	board    text COLLATE "C" NOT NULL,
	"window" text COLLATE "C" NOT NULL,
	period   text COLLATE "C" NOT NULL,
	seq      bigint           NOT NULL,
	reset_at timestamptz      NOT NULL,
	PRIMARY KEY (board, "window", period)
);
