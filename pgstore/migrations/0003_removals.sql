-- Removals (Remove): the last removal of a member from a window period.
-- Standings of that period counts only the member's submissions appended
-- after it (seq above the removal's), and its kept standing is deleted, so
-- that a rebuild does not bring a removed member back.
CREATE TABLE {{prefix}}removals (
	board      text COLLATE "C" NOT NULL,
	"window"   text COLLATE "C" NOT NULL,
	period     text COLLATE "C" NOT NULL,
	member     text COLLATE "C" NOT NULL,
	seq        bigint           NOT NULL,
	removed_at timestamptz      NOT NULL,
	PRIMARY KEY (board, "window", period, member)
);
