-- The durable record of every submission, and the sealed standings of closed
-- periods. {{prefix}} is the store's table-name prefix (WithTablePrefix).

-- Every submission, in the order it was appended (seq). id is the
-- idempotency key (WithID); NULL for none.
CREATE TABLE {{prefix}}submissions (
	seq        bigserial        PRIMARY KEY,
	board      text COLLATE "C" NOT NULL,
	id         text COLLATE "C",
	member     text COLLATE "C" NOT NULL,
	score      double precision NOT NULL,
	at         timestamptz      NOT NULL,
	created_at timestamptz      NOT NULL DEFAULT now()
);

-- One submission per id and board: Append's ON CONFLICT target.
CREATE UNIQUE INDEX {{prefix}}submissions_board_id_key
	ON {{prefix}}submissions (board, id) WHERE id IS NOT NULL;

-- Standings over a time range ([From, To)).
CREATE INDEX {{prefix}}submissions_board_at_idx
	ON {{prefix}}submissions (board, at);

-- Standings per member in append order (Replace, Accumulate).
CREATE INDEX {{prefix}}submissions_board_member_seq_idx
	ON {{prefix}}submissions (board, member, seq);

-- A closed period whose final standings were sealed, once.
CREATE TABLE {{prefix}}sealed_periods (
	board     text        NOT NULL,
	"window"  text        NOT NULL,
	period    text        NOT NULL,
	sealed_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (board, "window", period)
);

-- A sealed period's standings: pos is the 1-based place in the list as
-- sealed (best first), rank the entry's rank (equal ranks under Competition).
CREATE TABLE {{prefix}}sealed_entries (
	board    text             NOT NULL,
	"window" text             NOT NULL,
	period   text             NOT NULL,
	pos      bigint           NOT NULL,
	rank     bigint           NOT NULL,
	member   text             NOT NULL,
	score    double precision NOT NULL,
	PRIMARY KEY (board, "window", period, pos),
	FOREIGN KEY (board, "window", period)
		REFERENCES {{prefix}}sealed_periods (board, "window", period) ON DELETE CASCADE
);
