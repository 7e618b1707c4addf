// Package pgstore is a leaderboard.Store on PostgreSQL: the durable record
// of every submission a board is rebuilt from when Redis loses it, each
// period's standings kept up to date as submissions arrive, and the sealed
// standings of closed periods.
//
// Hand it a *pgxpool.Pool you built (it never builds or closes one), run
// Migrate once at start-up, and give the store to the board:
//
//	store, err := pgstore.New(pool)
//	if err != nil { ... }
//	if err := store.Migrate(ctx); err != nil { ... }
//	board, err := leaderboard.New(client, "arena", leaderboard.WithStore(store))
//
// # Tables
//
// With the default prefix "leaderboard_" (WithTablePrefix):
//
//	leaderboard_submissions        every submission, in append order (seq)
//	leaderboard_standings          each kept period's standings, one row a member
//	leaderboard_standing_periods   the periods kept, and whether completely
//	leaderboard_removals           each member's last removal from a period
//	leaderboard_resets             each period's last reset
//	leaderboard_corrections        each member's last correction in a period
//	leaderboard_sealed_periods     the closed periods sealed, one row each
//	leaderboard_sealed_entries     their final standings
//	leaderboard_schema_migrations  the migrations applied
//
// # Kept standings
//
// The submissions are the source of truth; Standings' aggregation over
// them is the definition. A rebuild that aggregates 10 million submissions
// waits for PostgreSQL to sort them all before the first row, so Append
// and AppendBatch also keep, in the same transaction, the standing of the
// submission's member in every period its Periods list (under its Policy
// and Order), and Standings of such a period streams those rows instead.
//
// A period's kept standings are used only while they are complete: kept from
// the period's first submission on, with every submission in it since, under
// one policy, order and pair of bounds. A period whose first kept submission
// finds earlier ones (appended before migration 2, or without Periods), or a
// correction of the period, starts incomplete; a later submission in the period
// that does not list it (no Periods, another policy or order, other bounds, a
// window Redis had closed), or an Accumulate total of 2^1022 or more, makes it
// incomplete for good. Standings of an incomplete period aggregates, as for any
// other range, so answers never change, only their cost. Completeness is
// decided under an advisory lock per board: every Append holds it shared, the
// creation of a period's row exclusively, so the row's first check sees every
// submission before it and every Append after it sees the row. Remove, Correct,
// Retract, DeleteBoard, DeletePeriod and CheckStandings with repair hold it
// exclusively too.
//
// Replace keeps a member's last submission and Accumulate the time of its
// last one that is not 0, by seq, the log's order. Appends of one member run one after the other
// (an advisory lock of the member's bucket, taken before the row takes its
// seq; AppendBatch holds its members' buckets for its transaction), so the
// kept standings take them in seq order too and equal the log's
// aggregation exactly under any concurrency.
//
// Keeping standings costs each Append an upsert per period and
// AppendBatch one statement per 50,000 standings (BENCHMARKS.md). The
// standings table has autovacuum settings of its own (2% instead of 20%)
// so that index-only scans rarely read the table; after a bulk load,
// VACUUM it before a rebuild if autovacuum has not come by.
//
// Besides leaderboard.Store, the store is a BatchAppender (AppendBatch), a
// Remover (Remove), a Retractor (Retract: a submission Redis refused is
// taken back, kept standings recomputed), an IDKeeper (IDReceived,
// IDsSince), an IDReplayer (IDSubmission: the submission an id names,
// which a retry after ErrPending applies), a BoardDeleter (DeleteBoard), a PeriodDeleter (DeletePeriod:
// Reset), a Corrector (Correct: Set, an operator's correction of a
// member's standing in a period), a StandingsChecker (CheckStandings:
// kept standings against the log, and their repair) and a
// SubmissionChecker (CheckSubmission: what Append would refuse for its
// content, refused before a board sends anything).
//
// # Values
//
// Scores are stored as double precision: every float64 comes back exactly
// (-0 is stored as 0). Times are stored as timestamptz, which keeps
// microseconds: Append and AppendBatch truncate At and Received to the
// microsecond, so Standings and IDReceived return exactly the time stored;
// times come back in UTC. Board
// names, ids, members, windows and periods are text, so they must be valid
// UTF-8 without NUL bytes (refused with leaderboard.ErrInvalidMember or
// leaderboard.ErrInvalidArgument otherwise).
package pgstore

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/skiprank/leaderboard"
)

// DefaultTablePrefix is the prefix of every table name unless WithTablePrefix
// sets another.
const DefaultTablePrefix = "leaderboard_"

// maxPrefixLen keeps every table and index name within PostgreSQL's 63 bytes.
const maxPrefixLen = 30

var prefixRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// Option configures a Store.
type Option func(*config)

type config struct {
	prefix string
}

// WithTablePrefix sets the prefix of every table (and index) name; default
// DefaultTablePrefix. It must be empty or a lower-case SQL identifier
// ([a-z_][a-z0-9_]*) of at most 30 bytes. Tables go to the connection's
// search_path; set it in the pool's config to use another schema
// (ConnConfig.RuntimeParams["search_path"]), which must exist: Migrate
// creates tables, not schemas.
func WithTablePrefix(prefix string) Option {
	return func(c *config) { c.prefix = prefix }
}

// Store is a leaderboard.Store on PostgreSQL. It is safe for concurrent use.
type Store struct {
	pool         *pgxpool.Pool
	prefix       string
	lockKey      int64
	tSubs        string
	tKept        string
	tKeptPeriods string
	tRemovals    string
	tResets      string
	tCorrections string
	tPeriods     string
	tEntries     string
	tMigrations  string
	// appendStmt is Append's statement by policy and order (appendSQL).
	appendStmt [3][2]string
	// onStandings, when set (tests), is told which way Standings answered.
	onStandings func(kept bool)
}

var (
	_ leaderboard.Store             = (*Store)(nil)
	_ leaderboard.BatchAppender     = (*Store)(nil)
	_ leaderboard.Remover           = (*Store)(nil)
	_ leaderboard.Retractor         = (*Store)(nil)
	_ leaderboard.IDKeeper          = (*Store)(nil)
	_ leaderboard.IDReplayer        = (*Store)(nil)
	_ leaderboard.BoardDeleter      = (*Store)(nil)
	_ leaderboard.PeriodDeleter     = (*Store)(nil)
	_ leaderboard.Corrector         = (*Store)(nil)
	_ leaderboard.StandingsChecker  = (*Store)(nil)
	_ leaderboard.SubmissionChecker = (*Store)(nil)
)

// New returns a store on pool. It makes no call to the database; run Migrate
// before the first use.
func New(pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("pgstore: new: %w: nil pool", leaderboard.ErrInvalidArgument)
	}
	c := config{prefix: DefaultTablePrefix}
	for _, o := range opts {
		if o == nil {
			return nil, fmt.Errorf("pgstore: new: %w: nil option", leaderboard.ErrInvalidArgument)
		}
		o(&c)
	}
	if c.prefix != "" && (len(c.prefix) > maxPrefixLen || !prefixRE.MatchString(c.prefix)) {
		return nil, fmt.Errorf("pgstore: new: %w: table prefix %q: want [a-z_][a-z0-9_]* of at most %d bytes",
			leaderboard.ErrInvalidArgument, c.prefix, maxPrefixLen)
	}
	s := &Store{
		pool:         pool,
		prefix:       c.prefix,
		lockKey:      advisoryLockKey(c.prefix),
		tSubs:        c.prefix + "submissions",
		tKept:        c.prefix + "standings",
		tKeptPeriods: c.prefix + "standing_periods",
		tRemovals:    c.prefix + "removals",
		tResets:      c.prefix + "resets",
		tCorrections: c.prefix + "corrections",
		tPeriods:     c.prefix + "sealed_periods",
		tEntries:     c.prefix + "sealed_entries",
		tMigrations:  c.prefix + "schema_migrations",
	}
	for _, p := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate} {
		for _, o := range []leaderboard.Order{leaderboard.HighestFirst, leaderboard.LowestFirst} {
			s.appendStmt[p][o] = s.appendSQL(p, o)
		}
	}
	return s, nil
}

// checkText refuses what a PostgreSQL text column cannot hold.
func checkText(what, s string, sentinel error) error {
	if !utf8.ValidString(s) || strings.IndexByte(s, 0) >= 0 {
		return fmt.Errorf("%w: %s %q is not valid UTF-8 without NUL bytes", sentinel, what, s)
	}
	return nil
}

// timestamptz holds the instants from 4714-11-24 BC (year -4713 in Go)
// to the end of 294276 AD, UTC: [minTime, endTime).
var (
	minTime = time.Date(-4713, time.November, 24, 0, 0, 0, 0, time.UTC)
	endTime = time.Date(294277, time.January, 1, 0, 0, 0, 0, time.UTC)
)

// checkTime refuses a time a timestamptz column cannot hold.
func checkTime(what string, t time.Time) error {
	if t.Before(minTime) || !t.Before(endTime) {
		return fmt.Errorf("%w: %s %v is outside what PostgreSQL keeps [%v, %v)", leaderboard.ErrInvalidArgument, what, t, minTime, endTime)
	}
	return nil
}

// prepare checks a submission, truncates its time to what timestamptz
// keeps, and returns the periods whose standings it changes (see
// keptPeriods).
func prepare(sub leaderboard.Submission) (leaderboard.Submission, []keptPeriod, error) {
	sub, err := prepareSub(sub)
	if err != nil {
		return sub, nil, err
	}
	kept, err := keptPeriods(sub)
	return sub, kept, err
}

func prepareSub(sub leaderboard.Submission) (leaderboard.Submission, error) {
	if err := checkText("board", sub.Board, leaderboard.ErrInvalidArgument); err != nil {
		return sub, err
	}
	if err := checkText("id", sub.ID, leaderboard.ErrInvalidArgument); err != nil {
		return sub, err
	}
	if err := checkText("member", sub.Member, leaderboard.ErrInvalidMember); err != nil {
		return sub, err
	}
	if sub.Board == "" {
		return sub, fmt.Errorf("%w: empty board", leaderboard.ErrInvalidArgument)
	}
	if sub.Member == "" {
		return sub, fmt.Errorf("%w: empty member", leaderboard.ErrInvalidMember)
	}
	if math.IsNaN(sub.Score) || math.IsInf(sub.Score, 0) {
		return sub, fmt.Errorf("%w: %v", leaderboard.ErrInvalidScore, sub.Score)
	}
	sub.At = sub.At.Truncate(time.Microsecond)
	sub.Received = sub.Received.Truncate(time.Microsecond)
	if err := checkTime("time", sub.At); err != nil {
		return sub, err
	}
	if err := checkTime("received time", sub.Received); err != nil {
		return sub, err
	}
	if sub.Score == 0 {
		sub.Score = 0 // -0 equals 0, and Redis would hold it as 0 too
	}
	return sub, nil
}

// nullID is the id column's value: NULL for no id.
func nullID(id string) pgtype.Text {
	return pgtype.Text{String: id, Valid: id != ""}
}

// nullTime is the received column's value: NULL for a zero time, which
// the store reads as created_at, its own clock at the append.
func nullTime(t time.Time) pgtype.Timestamptz {
	return pgtype.Timestamptz{Time: t, Valid: !t.IsZero()}
}

// CheckSubmission refuses, before any I/O, a submission Append would
// refuse for its content: text that is not valid UTF-8 without NUL bytes
// (see Values), an empty board or member, a NaN or infinite score, a time
// (At, Received) timestamptz cannot hold (before 4714-11-24 BC). A board
// asks it before each submission and correction it sends to the store
// (leaderboard.SubmissionChecker), so that a Batcher's batch never holds a
// submission that would fail every caller in it.
func (s *Store) CheckSubmission(sub leaderboard.Submission) error {
	_, err := prepareSub(sub)
	return err
}

// Append records sub and, in the same transaction, keeps the standings of
// every period sub.Periods lists (see Standings). With a non-empty ID
// already recorded for sub.Board it records nothing and returns duplicate =
// true; concurrent appends of one ID record it once. sub.At and sub.Received
// are truncated to the microsecond; a zero Received is recorded as the
// database's clock at the append (see IDReceived).
func (s *Store) Append(ctx context.Context, sub leaderboard.Submission) (duplicate bool, err error) {
	sub, kept, err := prepare(sub)
	if err != nil {
		return false, fmt.Errorf("pgstore: append: %w", err)
	}
	// A period's row is created by a transaction of its own, then the
	// statement runs again; a deadlock rolls back everything and is tried
	// again too.
	for attempt := 0; ; attempt++ {
		inserted, missing, err := s.appendOnce(ctx, sub, kept)
		switch {
		case err != nil && retryable(err) && attempt < 3:
			continue
		case err != nil:
			return false, fmt.Errorf("pgstore: append: %w", err)
		case missing == 0:
			return !inserted, nil
		case attempt >= 3:
			return false, fmt.Errorf("pgstore: append: %d standings periods still missing after creating them", missing)
		}
		if err := s.createPeriods(ctx, sub.Board, sub.Policy, sub.Order, kept); err != nil {
			return false, fmt.Errorf("pgstore: append: %w", err)
		}
	}
}

// batchChunk is how many submissions with ids one INSERT of AppendBatch
// carries.
const batchChunk = 20000

// AppendBatch records subs in their order, as if appended one by one, in one
// transaction: all or none, with the standings kept as Append keeps them.
// duplicates[i] reports that subs[i] was not recorded because its ID was
// already recorded for its board, by an earlier call or by an earlier
// element of subs. Each At and Received is truncated to the microsecond, as
// Append does.
//
// A batch without ids is streamed with COPY; a batch with ids is inserted
// with INSERT ... ON CONFLICT DO NOTHING in chunks. The kept standings are
// upserted afterwards, a member's submissions in one period combined first
// (Accumulate adds them in batch order). Either way it is the way to
// bulk-load millions of submissions. It holds the locks of its members'
// buckets (see Store) for its whole transaction, so Appends and batches
// of the same members wait for it, and it for them; should PostgreSQL
// still report a deadlock, the whole batch is rolled back and tried again.
func (s *Store) AppendBatch(ctx context.Context, subs []leaderboard.Submission) (duplicates []bool, err error) {
	prepared := make([]leaderboard.Submission, len(subs))
	kept := make([][]keptPeriod, len(subs))
	withIDs := false
	for i, sub := range subs {
		if prepared[i], kept[i], err = prepare(sub); err != nil {
			return nil, fmt.Errorf("pgstore: append batch: submission %d: %w", i, err)
		}
		withIDs = withIDs || sub.ID != ""
	}
	duplicates = make([]bool, len(subs))
	if len(subs) == 0 {
		return duplicates, nil
	}
	if err := s.ensurePeriods(ctx, groupBatch(prepared, kept, nil)); err != nil {
		return nil, fmt.Errorf("pgstore: append batch: %w", err)
	}
	for attempt := 0; ; attempt++ {
		clear(duplicates)
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			if err := s.lockBoards(ctx, tx, prepared, false); err != nil {
				return err
			}
			if !withIDs {
				if err := s.copySubmissions(ctx, tx, prepared); err != nil {
					return err
				}
			} else {
				for start := 0; start < len(prepared); start += batchChunk {
					end := min(start+batchChunk, len(prepared))
					if err := s.insertChunk(ctx, tx, prepared[start:end], duplicates[start:end]); err != nil {
						return err
					}
				}
			}
			return s.keepBatch(ctx, tx, prepared, kept, duplicates)
		})
		if err != nil && retryable(err) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("pgstore: append batch: %w", err)
		}
		return duplicates, nil
	}
}

// copySubmissions streams submissions without ids with COPY, which assigns
// seq in row order.
func (s *Store) copySubmissions(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission) error {
	i := 0
	row := make([]any, 5)
	_, err := tx.CopyFrom(ctx, pgx.Identifier{s.tSubs}, []string{"board", "member", "score", "at", "received"},
		pgx.CopyFromFunc(func() ([]any, error) {
			if i == len(subs) {
				return nil, nil
			}
			sub := &subs[i]
			i++
			row[0], row[1], row[2], row[3], row[4] = sub.Board, sub.Member, sub.Score, sub.At, nullTime(sub.Received)
			return row, nil
		}))
	return err
}

type boardID struct{ board, id string }

// insertChunk inserts subs in their order (seq follows ORDER BY ord) and
// marks in dup the ones ON CONFLICT skipped. Of several elements with one
// (board, id), the first is the one inserted, if any.
func (s *Store) insertChunk(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission, dup []bool) error {
	boards := make([]string, len(subs))
	ids := make([]pgtype.Text, len(subs))
	members := make([]string, len(subs))
	scores := make([]float64, len(subs))
	ats := make([]time.Time, len(subs))
	received := make([]pgtype.Timestamptz, len(subs))
	for i, sub := range subs {
		boards[i], ids[i], members[i], scores[i], ats[i] = sub.Board, nullID(sub.ID), sub.Member, sub.Score, sub.At
		received[i] = nullTime(sub.Received)
	}
	rows, err := tx.Query(ctx, `WITH ins AS (
	INSERT INTO `+s.tSubs+` (board, id, member, score, at, received)
	SELECT b, i, m, s, a, r
	FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[], $5::timestamptz[], $6::timestamptz[]) WITH ORDINALITY AS u (b, i, m, s, a, r, ord)
	ORDER BY ord
	ON CONFLICT (board, id) WHERE id IS NOT NULL DO NOTHING
	RETURNING board, id
)
SELECT board, id FROM ins WHERE id IS NOT NULL`, boards, ids, members, scores, ats, received)
	if err != nil {
		return err
	}
	inserted := map[boardID]bool{}
	var k boardID
	_, err = pgx.ForEachRow(rows, []any{&k.board, &k.id}, func() error {
		inserted[k] = true
		return nil
	})
	if err != nil {
		return err
	}
	for i, sub := range subs {
		if sub.ID == "" {
			continue
		}
		k := boardID{sub.Board, sub.ID}
		if inserted[k] {
			delete(inserted, k) // later elements with this id were skipped
		} else {
			dup[i] = true
		}
	}
	return nil
}

// Standings streams every member's standing in q.Board over [q.From, q.To),
// aggregated as the policy makes it (see leaderboard.Store), best score
// first: descending on HighestFirst, ascending on LowestFirst. Rows are
// read as they arrive, never all held in memory. An error from fn stops
// the stream (the query is cancelled) and is returned as it is.
//
// When q.Window and q.Period name a period whose standings Append kept
// completely (see the package documentation), under q's policy and order
// and with q's bounds as that period's, it streams them from an index-only
// scan, best first with no sort: the first row comes at once, and
// PostgreSQL does a fraction of the work. Otherwise it aggregates the
// submissions in PostgreSQL (which sorts everything before the first row).
// Both give the same standings: the appends of one member take its
// bucket's lock before their seq, so the kept standings take them in seq
// order, as the aggregation does (see the package documentation).
//
// The bounds are compared with the stored, microsecond times exactly (a
// bound with a fraction of a microsecond is rounded up).
//
// A query naming a period counts what was recorded of that period too: a
// member's submissions before its last removal (Remove), and the period's
// before its last reset (DeletePeriod), do not count; a member's last
// correction (Correct) counts as one submission, in append order, that
// replaces the member's submissions appended before it.
//
// Accumulate sums overflowing float64 (which Redis refused, so they are in
// the store but not on the board) are never kept, and make PostgreSQL's
// sum fail; Standings then adds the scores in Go instead, with IEEE
// arithmetic, and such members come with a score of ±Inf. In that case
// alone members come in name order rather than best first.
func (s *Store) Standings(ctx context.Context, q leaderboard.StandingsQuery, fn func(leaderboard.StoredStanding) error) error {
	kept, err := s.standingsKept(ctx, q, fn)
	if s.onStandings != nil && (kept || err == nil) {
		s.onStandings(kept)
	}
	if kept || err != nil {
		return err
	}
	from, args, err := s.standingsFrom(q)
	if err != nil {
		return fmt.Errorf("pgstore: standings: %w", err)
	}
	query, err := standingsSQL(q, from)
	if err != nil {
		return fmt.Errorf("pgstore: standings: %w", err)
	}
	n, err := s.stream(ctx, s.pool, query, args, fn)
	var pgErr *pgconn.PgError
	if q.Policy == leaderboard.Accumulate && n == 0 && errors.As(err, &pgErr) && pgErr.Code == codeOutOfRange {
		// Nothing was streamed yet: the final sort holds every row back
		// until the sums are done.
		err = s.accumulateInGo(ctx, from, args, fn)
	}
	return err
}

// codeOutOfRange is SQLSTATE numeric_value_out_of_range, which float8
// addition raises on overflow.
const codeOutOfRange = "22003"

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// stream runs a (member, score, at) query on db and calls fn for every
// row. It returns how many rows fn was called with; an error from fn comes
// back as it is, any other wrapped with the operation's name.
func (s *Store) stream(ctx context.Context, db querier, query string, args []any, fn func(leaderboard.StoredStanding) error) (int, error) {
	// Cancelling stops the server instead of draining the rest of the rows
	// when fn fails.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := db.Query(ctx, query, args...)
	if err != nil {
		return 0, fmt.Errorf("pgstore: standings: %w", err)
	}
	defer rows.Close()
	fast := binaryStandings(rows.FieldDescriptions())
	n := 0
	for rows.Next() {
		var st leaderboard.StoredStanding
		if fast {
			st, err = decodeStanding(rows.RawValues())
		} else {
			err = rows.Scan(&st.Member, &st.Score, &st.At)
			st.At = st.At.UTC()
		}
		if err != nil {
			cancel()
			return n, fmt.Errorf("pgstore: standings: %w", err)
		}
		n++
		if err := fn(st); err != nil {
			cancel()
			return n, err
		}
	}
	if err := rows.Err(); err != nil {
		return n, fmt.Errorf("pgstore: standings: %w", err)
	}
	return n, nil
}

// accumulateInGo is Accumulate's Standings with the sums done in Go: the
// submissions in (member, seq) order, one running sum per member.
func (s *Store) accumulateInGo(ctx context.Context, from string, args []any, fn func(leaderboard.StoredStanding) error) error {
	var (
		cur     leaderboard.StoredStanding
		started bool
	)
	_, err := s.stream(ctx, s.pool, "SELECT member, score, at "+from+" ORDER BY member, seq", args, func(sub leaderboard.StoredStanding) error {
		if started && sub.Member == cur.Member {
			cur.Score += sub.Score
			if sub.Score != 0 { // adding 0 reaches no new total
				cur.At = sub.At
			}
			return nil
		}
		if started {
			if err := fn(cur); err != nil {
				return err
			}
		}
		cur, started = sub, true
		return nil
	})
	if err != nil {
		return err
	}
	if started {
		return fn(cur)
	}
	return nil
}

// standingsFrom is the FROM and WHERE clauses of q, with their arguments:
// the board, the time bounds, and the window and period q names. The rows
// have the columns seq, member, score and at; a caller may add conditions
// on them with AND.
func (s *Store) standingsFrom(q leaderboard.StandingsQuery) (string, []any, error) {
	args := []any{q.Board}
	var where []string
	if !q.From.IsZero() {
		args = append(args, bound(q.From, pgtype.NegativeInfinity))
		where = append(where, fmt.Sprintf("at >= $%d", len(args)))
	}
	if !q.To.IsZero() {
		args = append(args, bound(q.To, pgtype.Infinity))
		where = append(where, fmt.Sprintf("at < $%d", len(args)))
	}
	if q.Window == "" || q.Period == "" {
		return "FROM " + s.tSubs + " WHERE " + strings.Join(append([]string{"board = $1"}, where...), " AND "), args, nil
	}
	args = append(args, q.Window, q.Period)
	if len(where) == 0 {
		where = []string{"true"}
	}
	// The bounds apply to a correction's time as to a submission's: it
	// counts as a submission at that time. PostgreSQL pushes them down into
	// both branches of periodRows' UNION ALL, so the (board, at) index still
	// serves them.
	return "FROM (" + s.periodRows(len(args)-1, len(args)) + ") t WHERE " + strings.Join(where, " AND "), args, nil
}

// periodRows is the rows that count in the window period named by
// parameters $w and $p of board $1: the submissions, and the corrections
// as submissions at their own seq, less what a member's last removal from
// the period, the period's last reset, or (for a submission) the member's
// correction came after.
func (s *Store) periodRows(w, p int) string {
	// Board, window and period of table alias a, as parameters.
	of := func(a string) string {
		return fmt.Sprintf(`%[1]s.board = $1 AND %[1]s."window" = $%[2]d AND %[1]s.period = $%[3]d`, a, w, p)
	}
	// Row l is not dropped by what the table (alias a) records after it:
	// seq compares the order of appends, corrections, removals and resets,
	// all numbered from one sequence.
	notAfter := func(table, a string, member bool) string {
		cond := fmt.Sprintf(`NOT EXISTS (SELECT 1 FROM %s %s WHERE %s AND %[2]s.seq > l.seq`, table, a, of(a))
		if member {
			cond += fmt.Sprintf(` AND %s.member = l.member`, a)
		}
		return cond + ")"
	}
	dropped := notAfter(s.tRemovals, "r", true) + "\n\tAND " + notAfter(s.tResets, "x", false)
	return `SELECT l.seq, l.member, l.score, l.at FROM ` + s.tSubs + ` l
	WHERE l.board = $1 AND ` + dropped + `
	AND ` + notAfter(s.tCorrections, "c", true) + `
UNION ALL
SELECT l.seq, l.member, l.score, l.corrected_at FROM ` + s.tCorrections + ` l
	WHERE ` + of("l") + ` AND ` + dropped
}

// standingsSQL is the query of q over from: the policy's aggregation, best
// score first.
func standingsSQL(q leaderboard.StandingsQuery, from string) (string, error) {
	var best string
	switch q.Order {
	case leaderboard.HighestFirst:
		best = "DESC"
	case leaderboard.LowestFirst:
		best = "ASC"
	default:
		return "", fmt.Errorf("%w: order %v", leaderboard.ErrInvalidArgument, q.Order)
	}
	var inner string
	switch q.Policy {
	case leaderboard.KeepBest:
		// The best score, and the earliest time it was reached.
		inner = "SELECT DISTINCT ON (member) member, score, at " + from +
			" ORDER BY member, score " + best + ", at"
	case leaderboard.Replace:
		// The last submission appended. Members in descending order let
		// PostgreSQL walk the (board, member, seq) index backwards.
		inner = "SELECT DISTINCT ON (member) member, score, at " + from +
			" ORDER BY member DESC, seq DESC"
	case leaderboard.Accumulate:
		// A running sum in seq order adds the scores one by one in the
		// order they were appended, as ZINCRBY did; the member's last row
		// (no next one) holds the total. Its time is that of the last row
		// whose score is not 0 (adding 0 reaches no new total), else the
		// first's: the first row of its run of equal counts of such rows.
		// One window for the three, in (board, member, seq) index order.
		inner = "SELECT member, score, first_value(at) OVER (PARTITION BY member, nz ORDER BY seq) AS at, last FROM (" +
			"SELECT member, seq, at, sum(score) OVER w AS score, count(*) FILTER (WHERE score <> 0) OVER w AS nz, " +
			"lead(seq) OVER w IS NULL AS last " + from +
			" WINDOW w AS (PARTITION BY member ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)) r"
	default:
		return "", fmt.Errorf("%w: policy %v", leaderboard.ErrInvalidArgument, q.Policy)
	}
	query := "SELECT member, score, at FROM (" + inner + ") t"
	if q.Policy == leaderboard.Accumulate {
		query += " WHERE last"
	}
	return query + " ORDER BY score " + best, nil
}

// ceilMicro rounds t up to the microsecond: for a stored (whole
// microsecond) time at, at >= t exactly when at >= ceilMicro(t), and
// at < t exactly when at < ceilMicro(t).
func ceilMicro(t time.Time) time.Time {
	c := t.Truncate(time.Microsecond)
	if c.Before(t) {
		c = c.Add(time.Microsecond)
	}
	return c
}

// binaryStandings reports whether the (member, score, at) columns came in
// PostgreSQL's binary format, which decodeStanding reads without pgx's
// per-value scanning.
func binaryStandings(fds []pgconn.FieldDescription) bool {
	return len(fds) == 3 &&
		fds[0].DataTypeOID == pgtype.TextOID &&
		fds[1].DataTypeOID == pgtype.Float8OID && fds[1].Format == pgx.BinaryFormatCode &&
		fds[2].DataTypeOID == pgtype.TimestamptzOID && fds[2].Format == pgx.BinaryFormatCode
}

// pgEpochUnix is 2000-01-01 00:00:00 UTC, the zero of timestamptz, in Unix
// seconds.
const pgEpochUnix = 946684800

var errBadRow = errors.New("malformed row")

// decodeStanding reads one binary (text, float8, timestamptz) row.
func decodeStanding(raw [][]byte) (leaderboard.StoredStanding, error) {
	if len(raw) != 3 || raw[0] == nil || len(raw[1]) != 8 || len(raw[2]) != 8 {
		return leaderboard.StoredStanding{}, errBadRow
	}
	us := int64(binary.BigEndian.Uint64(raw[2]))
	sec, rem := us/1e6, us%1e6
	if rem < 0 {
		sec, rem = sec-1, rem+1e6
	}
	return leaderboard.StoredStanding{
		Member: string(raw[0]), // text is UTF-8 bytes in either format
		Score:  math.Float64frombits(binary.BigEndian.Uint64(raw[1])),
		At:     time.Unix(pgEpochUnix+sec, rem*1e3).UTC(),
	}, nil
}

// Seal records the final standings of a closed period exactly once, in one
// transaction: when (board, window, period) was sealed before it writes
// nothing and returns first = false. entries are stored in the order given
// (best first) with their ranks; equal ranks (Competition) are fine.
func (s *Store) Seal(ctx context.Context, board, window, period string, entries []leaderboard.Entry) (first bool, err error) {
	for _, t := range []struct{ what, v string }{{"board", board}, {"window", window}, {"period", period}} {
		if err := checkText(t.what, t.v, leaderboard.ErrInvalidArgument); err != nil {
			return false, fmt.Errorf("pgstore: seal: %w", err)
		}
	}
	for i, e := range entries {
		if err := checkText("member", e.Member, leaderboard.ErrInvalidMember); err != nil {
			return false, fmt.Errorf("pgstore: seal: entry %d: %w", i, err)
		}
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// A concurrent Seal of the same period waits here for this
		// transaction, then inserts nothing.
		tag, err := tx.Exec(ctx, `INSERT INTO `+s.tPeriods+` (board, "window", period) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING`, board, window, period)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return nil
		}
		first = true
		if len(entries) == 0 {
			return nil
		}
		i := 0
		row := make([]any, 7)
		_, err = tx.CopyFrom(ctx, pgx.Identifier{s.tEntries},
			[]string{"board", "window", "period", "pos", "rank", "member", "score"},
			pgx.CopyFromFunc(func() ([]any, error) {
				if i == len(entries) {
					return nil, nil
				}
				e := &entries[i]
				i++
				row[0], row[1], row[2], row[3], row[4], row[5], row[6] = board, window, period, int64(i), e.Rank, e.Member, e.Score
				return row, nil
			}))
		return err
	})
	if err != nil {
		return false, fmt.Errorf("pgstore: seal: %w", err)
	}
	return first, nil
}

// Sealed returns a sealed period's standings in the order they were sealed
// (best first); ok is false when the period was never sealed.
func (s *Store) Sealed(ctx context.Context, board, window, period string) (entries []leaderboard.Entry, ok bool, err error) {
	// One statement, one snapshot: no rows means not sealed, one row of
	// NULLs means sealed with no entries.
	rows, err := s.pool.Query(ctx, `SELECT e.rank, e.member, e.score
FROM `+s.tPeriods+` p
LEFT JOIN `+s.tEntries+` e USING (board, "window", period)
WHERE p.board = $1 AND p."window" = $2 AND p.period = $3
ORDER BY e.pos`, board, window, period)
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: sealed: %w", err)
	}
	var (
		rank   pgtype.Int8
		member pgtype.Text
		score  pgtype.Float8
	)
	_, err = pgx.ForEachRow(rows, []any{&rank, &member, &score}, func() error {
		ok = true
		if rank.Valid {
			entries = append(entries, leaderboard.Entry{Member: member.String, Score: score.Float64, Rank: rank.Int64})
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: sealed: %w", err)
	}
	if ok && entries == nil {
		entries = []leaderboard.Entry{}
	}
	return entries, ok, nil
}
