-- Corrections (Correct, a board's Set): the last correction of a member's
-- standing in a window period. Standings of that period counts the member's
-- submissions appended before it (seq below the correction's, from the
-- submissions' own sequence) as one submission of score at corrected_at,
-- taking the correction's seq; a later removal of the member or reset of
-- the period (a higher seq) drops it.
CREATE TABLE {{prefix}}corrections (
	board        text COLLATE "C" NOT NULL,
	"window"     text COLLATE "C" NOT NULL,
	period       text COLLATE "C" NOT NULL,
	member       text COLLATE "C" NOT NULL,
	seq          bigint           NOT NULL,
	score        double precision NOT NULL,
	corrected_at timestamptz      NOT NULL,
	PRIMARY KEY (board, "window", period, member)
);
