-- Standings kept up to date by Append and AppendBatch: one row per board,
-- window period and member, so that Standings of a period (and with it a
-- rebuild) streams them best first from an index instead of aggregating
-- and sorting every submission of the period.

-- The window periods whose standings are kept. complete says they can be
-- trusted: kept from the period's first submission on, with every
-- submission since, under this policy and order; anything the store could
-- not follow (a submission without periods, or with another policy, or an
-- Accumulate total near overflow) clears it for good, and Standings then
-- aggregates the submissions instead. period_start and period_end are the
-- bounds as Standings compares them (microseconds, rounded up; -infinity
-- and infinity for a window that never resets). policy and score_order are
-- leaderboard.Policy and leaderboard.Order.
CREATE TABLE {{prefix}}standing_periods (
	board        text COLLATE "C" NOT NULL,
	"window"     text COLLATE "C" NOT NULL,
	period       text COLLATE "C" NOT NULL,
	policy       smallint         NOT NULL,
	score_order  smallint         NOT NULL,
	period_start timestamptz      NOT NULL,
	period_end   timestamptz      NOT NULL,
	complete     boolean          NOT NULL,
	created_at   timestamptz      NOT NULL DEFAULT now(),
	PRIMARY KEY (board, "window", period)
);

-- The complete periods of a board still open at a time: Append looks up
-- the ones holding a submission's time that it was not told to keep.
CREATE INDEX {{prefix}}standing_periods_end_idx
	ON {{prefix}}standing_periods (board, period_end) WHERE complete;

-- A member's standing in a period, as the period's policy makes it.
-- Autovacuum comes sooner than by default (20% of the table): an index-only
-- scan reads the table itself for every page not yet marked all-visible by
-- a vacuum, which would make a rebuild after a bulk load slower.
CREATE TABLE {{prefix}}standings (
	board    text COLLATE "C" NOT NULL,
	"window" text COLLATE "C" NOT NULL,
	period   text COLLATE "C" NOT NULL,
	member   text COLLATE "C" NOT NULL,
	score    double precision NOT NULL,
	at       timestamptz      NOT NULL,
	PRIMARY KEY (board, "window", period, member)
) WITH (
	autovacuum_vacuum_scale_factor = 0.02,
	autovacuum_vacuum_insert_scale_factor = 0.02,
	autovacuum_analyze_scale_factor = 0.05
);

-- A period's standings best first without a sort, for either order: an
-- index-only scan, forward for LowestFirst, backward for HighestFirst.
CREATE INDEX {{prefix}}standings_best_idx
	ON {{prefix}}standings (board, "window", period, score, at) INCLUDE (member);
