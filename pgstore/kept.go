package pgstore

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skiprank/leaderboard"
)

// Kept standings: Append and AppendBatch keep every listed period's
// standings up to date (table standings), and Standings streams them when
// the period's row in standing_periods says they are complete.
//
// Completeness is proved when a period's row is created: only when the
// board has no submission in the period yet. Every Append takes a shared
// advisory lock keyed by its board before its statement, and the creation
// an exclusive one, so the creation sees every submission appended before
// it, and every Append after it sees the row: a submission the Append was
// not told to keep in that period (no Periods, another policy) then clears
// complete. The lock never blocks Appends of a board against each other.

// keptPeriod is a period a submission is written to, with its bounds as
// Standings compares them: microseconds rounded up, ±infinity for none.
type keptPeriod struct {
	window, period string
	start, end     pgtype.Timestamptz
}

// bound is a period bound as stored: t rounded up to the microsecond (see
// ceilMicro), or inf for a zero t. A bound beyond what timestamptz holds
// is the infinity on its side: every time the store holds (see checkTime)
// compares with it alike.
func bound(t time.Time, inf pgtype.InfinityModifier) pgtype.Timestamptz {
	c := ceilMicro(t)
	switch {
	case t.IsZero():
		return pgtype.Timestamptz{InfinityModifier: inf, Valid: true}
	case c.Before(minTime):
		return pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}
	case !c.Before(endTime):
		return pgtype.Timestamptz{InfinityModifier: pgtype.Infinity, Valid: true}
	}
	return pgtype.Timestamptz{Time: c, Valid: true}
}

// holds reports whether a stored (whole microsecond) time lies in p, as
// Standings' [From, To) comparison decides it.
func (p keptPeriod) holds(at time.Time) bool {
	switch {
	case p.start.InfinityModifier == pgtype.Infinity, p.end.InfinityModifier == pgtype.NegativeInfinity:
		return false // a bound past either end of timestamptz (see bound)
	case p.start.InfinityModifier == pgtype.Finite && at.Before(p.start.Time):
		return false
	}
	return p.end.InfinityModifier != pgtype.Finite || at.Before(p.end.Time)
}

// keptPeriods checks sub's periods and returns the ones holding sub.At
// (already truncated), sorted by window (byte-wise, as the lock order
// wants it): a listed period that does not
// hold it does not count it either when Standings aggregates.
func keptPeriods(sub leaderboard.Submission) ([]keptPeriod, error) {
	switch sub.Policy {
	case leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate:
	default:
		return nil, fmt.Errorf("%w: policy %v", leaderboard.ErrInvalidArgument, sub.Policy)
	}
	if sub.Order != leaderboard.HighestFirst && sub.Order != leaderboard.LowestFirst {
		return nil, fmt.Errorf("%w: order %v", leaderboard.ErrInvalidArgument, sub.Order)
	}
	var out []keptPeriod
	seen := map[string]bool{}
	for _, p := range sub.Periods {
		if err := checkText("window", p.Window, leaderboard.ErrInvalidArgument); err != nil {
			return nil, err
		}
		if err := checkText("period", p.Period, leaderboard.ErrInvalidArgument); err != nil {
			return nil, err
		}
		if p.Window == "" || p.Period == "" {
			return nil, fmt.Errorf("%w: period %q of window %q: empty name", leaderboard.ErrInvalidArgument, p.Period, p.Window)
		}
		if seen[p.Window] {
			return nil, fmt.Errorf("%w: window %q listed twice", leaderboard.ErrInvalidArgument, p.Window)
		}
		seen[p.Window] = true
		if !p.Start.IsZero() && !p.End.IsZero() && !p.Start.Before(p.End) {
			return nil, fmt.Errorf("%w: period %q of window %q ends at %v, not after its start %v",
				leaderboard.ErrInvalidArgument, p.Period, p.Window, p.End, p.Start)
		}
		kp := keptPeriod{window: p.Window, period: p.Period,
			start: bound(p.Start, pgtype.NegativeInfinity), end: bound(p.End, pgtype.Infinity)}
		if kp.holds(sub.At) {
			out = append(out, kp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].window < out[j].window })
	return out, nil
}

// periodArrays are keptPeriods as the statements' array arguments.
func periodArrays(ps []keptPeriod) (windows, periods []string, starts, ends []pgtype.Timestamptz) {
	for _, p := range ps {
		windows, periods = append(windows, p.window), append(periods, p.period)
		starts, ends = append(starts, p.start), append(ends, p.end)
	}
	return
}

// boardLockKey is the advisory lock key of a board's kept standings.
func (s *Store) boardLockKey(board string) int64 {
	h := fnv.New64a()
	h.Write([]byte("github.com/skiprank/leaderboard/pgstore standings " + s.prefix + "\x00" + board))
	return int64(h.Sum64())
}

// nearOverflow is 2^1022: an addition of two numbers below it in magnitude
// cannot overflow float64. An Accumulate total or score at or past it
// makes the store stop keeping the period (it clears complete) rather than
// fail the Append: Standings then aggregates, handling overflow there.
var nearOverflow = strconv.FormatFloat(math.Ldexp(1, 1022), 'g', -1, 64) + "::float8"

// memberBuckets is how many locks the members of a board are hashed to.
// Appends that touch one member must run one after the other, so that the
// order their submissions take in the log (seq) is the order the kept
// standings took them in: Replace keeps the last submission and
// Accumulate the last time, by seq, and two Appends of one member running
// at once could otherwise take seq in one order and upsert in the other.
// Members hashed to one bucket wait for each other too, which costs an
// Append nothing it would notice (it holds its bucket for one statement);
// AppendBatch holds the buckets of its members for its whole transaction.
const memberBuckets = 128

// memberLockKey is the advisory lock key of member's bucket on board.
func (s *Store) memberLockKey(board, member string) int64 {
	m := fnv.New32a()
	m.Write([]byte(member))
	h := fnv.New64a()
	h.Write([]byte("github.com/skiprank/leaderboard/pgstore member " + s.prefix + "\x00" + board + "\x00" + strconv.Itoa(int(m.Sum32()%memberBuckets))))
	return int64(h.Sum64())
}

// keptSet is the DO UPDATE clause of an upsert into standings, as policy
// and order combine a standing (st) with a new one (excluded).
func keptSet(policy leaderboard.Policy, order leaderboard.Order) string {
	const set = `DO UPDATE SET score = excluded.score, at = excluded.at`
	switch policy {
	case leaderboard.Replace:
		return set
	case leaderboard.Accumulate:
		// Adding 0 reaches no new total: its time stays.
		return `DO UPDATE SET score = st.score + excluded.score,
		at = CASE WHEN excluded.score = 0 THEN st.at ELSE excluded.at END
	WHERE abs(st.score) < ` + nearOverflow + ` AND abs(excluded.score) < ` + nearOverflow
	}
	better := ">"
	if order == leaderboard.LowestFirst {
		better = "<"
	}
	// An equal score keeps the earliest time it was reached.
	return set + `
	WHERE excluded.score ` + better + ` st.score OR (excluded.score = st.score AND excluded.at < st.at)`
}

// appendSQL is Append's statement for a policy and order. In one statement
// (run after the board's shared lock):
//
//   - pr: the listed periods, with whether their row is missing and whether
//     it keeps them under this policy, order and bounds (ok);
//   - ins: the submission, unless a row is missing (Append creates the
//     rows and runs it again) or its ID is recorded;
//   - up: the standing in every ok period;
//   - bad: clears complete on every other complete period of the board
//     holding the submission's time, and for Accumulate on an ok period
//     whose total came near overflow (up skipped it).
//
// It returns how many submissions it inserted (0 or 1) and how many
// period rows are missing.
func (s *Store) appendSQL(policy leaderboard.Policy, order leaderboard.Order) string {
	kept := `(SELECT w, p FROM pr WHERE pr.ok)`
	if policy == leaderboard.Accumulate {
		kept = `up`
	}
	return `WITH pr AS (
	SELECT l.w, l.p, sp.board IS NULL AS missing,
		coalesce(sp.complete AND sp.policy = $10::smallint AND sp.score_order = $11::smallint AND sp.period_start = l.ps AND sp.period_end = l.pe, false) AS ok
	FROM unnest($6::text[], $7::text[], $8::timestamptz[], $9::timestamptz[]) AS l (w, p, ps, pe)
	LEFT JOIN ` + s.tKeptPeriods + ` sp ON sp.board = $1 AND sp."window" = l.w AND sp.period = l.p
), ins AS (
	INSERT INTO ` + s.tSubs + ` (board, id, member, score, at, received)
	SELECT $1::text, $2::text, $3::text, $4::float8, $5::timestamptz, $12::timestamptz WHERE NOT EXISTS (SELECT 1 FROM pr WHERE pr.missing)
	ON CONFLICT (board, id) WHERE id IS NOT NULL DO NOTHING
	RETURNING 1
), up AS (
	INSERT INTO ` + s.tKept + ` AS st (board, "window", period, member, score, at)
	SELECT $1::text, pr.w, pr.p, $3::text, $4::float8, $5::timestamptz FROM pr WHERE pr.ok AND EXISTS (SELECT 1 FROM ins)
	ORDER BY pr.w COLLATE "C"
	ON CONFLICT (board, "window", period, member) ` + keptSet(policy, order) + `
	RETURNING st."window" AS w, st.period AS p
), bad AS (
	UPDATE ` + s.tKeptPeriods + ` sp SET complete = false
	WHERE sp.board = $1::text AND sp.complete AND sp.period_end > $5::timestamptz AND sp.period_start <= $5::timestamptz
		AND EXISTS (SELECT 1 FROM ins)
		AND (SELECT count(*) FROM up) >= 0
		AND NOT EXISTS (SELECT 1 FROM ` + kept + ` k WHERE k.w = sp."window" AND k.p = sp.period)
	RETURNING 1
)
SELECT (SELECT count(*) FROM ins), (SELECT count(*) FROM pr WHERE pr.missing), (SELECT count(*) FROM bad)`
}

// appendOnce runs Append's statement after the board's shared lock and the
// lock of the member's bucket (see memberBuckets), in one round trip and one
// transaction.
func (s *Store) appendOnce(ctx context.Context, sub leaderboard.Submission, ps []keptPeriod) (inserted bool, missing int64, err error) {
	ws, pids, starts, ends := periodArrays(ps)
	b := &pgx.Batch{}
	b.Queue("SELECT pg_advisory_xact_lock_shared($1)", s.boardLockKey(sub.Board))
	b.Queue("SELECT pg_advisory_xact_lock($1)", s.memberLockKey(sub.Board, sub.Member))
	b.Queue(s.appendStmt[sub.Policy][sub.Order], sub.Board, nullID(sub.ID), sub.Member, sub.Score, sub.At,
		ws, pids, starts, ends, int16(sub.Policy), int16(sub.Order), nullTime(sub.Received))
	br := s.pool.SendBatch(ctx, b)
	_, err = br.Exec()
	if err == nil {
		_, err = br.Exec()
	}
	var n, marked int64
	if err == nil {
		err = br.QueryRow().Scan(&n, &missing, &marked)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return n == 1, missing, err
}

// createPeriods creates the rows of ps that are missing for board, holding
// the board's exclusive lock: no Append of the board runs meanwhile, so none
// can slip a submission in unseen.
func (s *Store) createPeriods(ctx context.Context, board string, policy leaderboard.Policy, order leaderboard.Order, ps []keptPeriod) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(board)); err != nil {
			return err
		}
		return s.insertPeriods(ctx, tx, board, policy, order, ps)
	})
}

// insertPeriods creates the rows of ps that are missing for board, each
// complete when the board has nothing in the period yet: no submission in
// its bounds, and no correction of it (which counts as a submission, and
// hides the member's earlier ones, whatever their time). The caller holds
// the board's exclusive lock.
func (s *Store) insertPeriods(ctx context.Context, tx pgx.Tx, board string, policy leaderboard.Policy, order leaderboard.Order, ps []keptPeriod) error {
	ws, pids, starts, ends := periodArrays(ps)
	_, err := tx.Exec(ctx, `INSERT INTO `+s.tKeptPeriods+` (board, "window", period, policy, score_order, period_start, period_end, complete)
SELECT $1::text, l.w, l.p, $6::smallint, $7::smallint, l.ps, l.pe,
	NOT EXISTS (SELECT 1 FROM `+s.tSubs+` WHERE board = $1 AND at >= l.ps AND at < l.pe)
	AND NOT EXISTS (SELECT 1 FROM `+s.tCorrections+` c WHERE c.board = $1 AND c."window" = l.w AND c.period = l.p)
FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) AS l (w, p, ps, pe)
ORDER BY l.w
ON CONFLICT DO NOTHING`, board, ws, pids, starts, ends, int16(policy), int16(order))
	return err
}

// retryable reports a failure that rolled the whole transaction back and
// may pass on a second try: a deadlock between batches that keep the same
// members' standings (PostgreSQL picks one to fail).
func retryable(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "40P01" || pgErr.Code == "40001")
}

// batchGroup is the submissions of a batch that share a board, policy and
// order.
type batchGroup struct {
	board   string
	policy  leaderboard.Policy
	order   leaderboard.Order
	periods []keptPeriod // every period some of them list, once each
	idx     []int        // into the batch, in batch order
}

// groupBatch groups the submissions that are not duplicates, in a fixed
// order.
func groupBatch(subs []leaderboard.Submission, kept [][]keptPeriod, dup []bool) []*batchGroup {
	type key struct {
		board  string
		policy leaderboard.Policy
		order  leaderboard.Order
	}
	byKey := map[key]*batchGroup{}
	var keys []key
	listed := map[key]map[keptPeriod]bool{}
	for i, sub := range subs {
		if dup != nil && dup[i] {
			continue
		}
		k := key{sub.Board, sub.Policy, sub.Order}
		g := byKey[k]
		if g == nil {
			g = &batchGroup{board: sub.Board, policy: sub.Policy, order: sub.Order}
			byKey[k], listed[k] = g, map[keptPeriod]bool{}
			keys = append(keys, k)
		}
		g.idx = append(g.idx, i)
		for _, p := range kept[i] {
			if !listed[k][p] {
				listed[k][p] = true
				g.periods = append(g.periods, p)
			}
		}
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := keys[i], keys[j]
		if a.board != b.board {
			return a.board < b.board
		}
		if a.policy != b.policy {
			return a.policy < b.policy
		}
		return a.order < b.order
	})
	out := make([]*batchGroup, len(keys))
	for i, k := range keys {
		out[i] = byKey[k]
	}
	return out
}

// ensurePeriods creates the period rows a batch lists that are missing,
// before the batch's own transaction (which holds the boards' shared
// locks).
func (s *Store) ensurePeriods(ctx context.Context, groups []*batchGroup) error {
	type key struct{ board, window, period string }
	var boards, ws, pids []string
	for _, g := range groups {
		for _, p := range g.periods {
			boards, ws, pids = append(boards, g.board), append(ws, p.window), append(pids, p.period)
		}
	}
	if len(boards) == 0 {
		return nil
	}
	rows, err := s.pool.Query(ctx, `SELECT sp.board, sp."window", sp.period FROM `+s.tKeptPeriods+` sp
JOIN unnest($1::text[], $2::text[], $3::text[]) AS l (b, w, p) ON sp.board = l.b AND sp."window" = l.w AND sp.period = l.p`, boards, ws, pids)
	if err != nil {
		return err
	}
	have := map[key]bool{}
	var k key
	if _, err := pgx.ForEachRow(rows, []any{&k.board, &k.window, &k.period}, func() error {
		have[k] = true
		return nil
	}); err != nil {
		return err
	}
	for _, g := range groups {
		var missing []keptPeriod
		for _, p := range g.periods {
			if k := (key{g.board, p.window, p.period}); !have[k] {
				missing = append(missing, p)
				have[k] = true // one row per (window, period), whatever the bounds
			}
		}
		if len(missing) > 0 {
			if err := s.createPeriods(ctx, g.board, g.policy, g.order, missing); err != nil {
				return err
			}
		}
	}
	return nil
}

// lockBoards takes the lock of every board of subs, in key order: shared
// for appends, exclusive for what must see no Append of the board run
// meanwhile (Retract). For appends it then takes the locks of their
// members' buckets (see memberBuckets), in key order too: every
// transaction takes its board locks first and its bucket locks in one
// order, so none waits in a cycle.
func (s *Store) lockBoards(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission, exclusive bool) error {
	lock := "pg_advisory_xact_lock_shared"
	if exclusive {
		lock = "pg_advisory_xact_lock"
	}
	if err := s.lockKeys(ctx, tx, lock, subs, func(sub leaderboard.Submission) int64 { return s.boardLockKey(sub.Board) }); err != nil || exclusive {
		return err
	}
	return s.lockKeys(ctx, tx, "pg_advisory_xact_lock", subs, func(sub leaderboard.Submission) int64 { return s.memberLockKey(sub.Board, sub.Member) })
}

// lockKeys takes lock on the distinct keys of subs, in ascending order.
func (s *Store) lockKeys(ctx context.Context, tx pgx.Tx, lock string, subs []leaderboard.Submission, key func(leaderboard.Submission) int64) error {
	seen := map[int64]bool{}
	var keys []int64
	for _, sub := range subs {
		if k := key(sub); !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	_, err := tx.Exec(ctx, "SELECT "+lock+"(k) FROM unnest($1::bigint[]) AS k ORDER BY k", keys)
	return err
}

// keepChunk is how many standings one statement of AppendBatch's upserts
// into standings carries.
const keepChunk = 50_000

// keepBatch keeps the standings of a batch's inserted submissions (dup
// marks the others), inside the batch's transaction.
func (s *Store) keepBatch(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission, kept [][]keptPeriod, dup []bool) error {
	for _, g := range groupBatch(subs, kept, dup) {
		if err := s.keepGroup(ctx, tx, subs, kept, g); err != nil {
			return err
		}
	}
	return nil
}

// keptRow is one submission's change to one period's standing.
type keptRow struct {
	window, period, member string
	score                  float64
	at                     time.Time
	ord                    int64
}

// keepGroup keeps the standings of one group of a batch (one board,
// policy and order): it finds which of the group's periods keep standings,
// upserts every change into them chunk by chunk, and clears complete on
// the periods it could not keep.
func (s *Store) keepGroup(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission, kept [][]keptPeriod, g *batchGroup) error {
	ok, err := s.keptPeriodsOf(ctx, tx, g)
	if err != nil {
		return err
	}
	changes := groupChanges(subs, kept, g, ok)
	for start := 0; start < len(changes); start += keepChunk {
		if err := s.keepChanges(ctx, tx, g, changes[start:min(start+keepChunk, len(changes))], ok); err != nil {
			return err
		}
	}
	return s.clearUnkept(ctx, tx, subs, g, ok)
}

// keptPeriodsOf reports which of g's periods have rows that keep this
// policy, order and bounds.
func (s *Store) keptPeriodsOf(ctx context.Context, tx pgx.Tx, g *batchGroup) (map[keptPeriod]bool, error) {
	ok := map[keptPeriod]bool{}
	if len(g.periods) == 0 {
		return ok, nil
	}
	ws, pids, starts, ends := periodArrays(g.periods)
	rows, err := tx.Query(ctx, `SELECT l.i FROM unnest($2::text[], $3::text[], $4::timestamptz[], $5::timestamptz[]) WITH ORDINALITY AS l (w, p, ps, pe, i)
JOIN `+s.tKeptPeriods+` sp ON sp.board = $1 AND sp."window" = l.w AND sp.period = l.p
WHERE sp.complete AND sp.policy = $6 AND sp.score_order = $7 AND sp.period_start = l.ps AND sp.period_end = l.pe`,
		g.board, ws, pids, starts, ends, int16(g.policy), int16(g.order))
	if err != nil {
		return nil, err
	}
	var i int64
	_, err = pgx.ForEachRow(rows, []any{&i}, func() error {
		ok[g.periods[i-1]] = true
		return nil
	})
	return ok, err
}

// groupChanges lists every change of g to a kept period, in (window,
// period, member) order, each member's in batch order: the order rows are
// locked in, chunk after chunk, by every batch and Append alike.
func groupChanges(subs []leaderboard.Submission, kept [][]keptPeriod, g *batchGroup, ok map[keptPeriod]bool) []keptRow {
	var changes []keptRow
	for _, i := range g.idx {
		for _, p := range kept[i] {
			if ok[p] {
				changes = append(changes, keptRow{p.window, p.period, subs[i].Member, subs[i].Score, subs[i].At, int64(i)})
			}
		}
	}
	sort.SliceStable(changes, func(i, j int) bool {
		a, b := &changes[i], &changes[j]
		if a.window != b.window {
			return a.window < b.window
		}
		if a.period != b.period {
			return a.period < b.period
		}
		return a.member < b.member
	})
	return changes
}

// keepChanges upserts one chunk of changes. Under Accumulate, a period
// where some total was not kept (near overflow) is kept no more: ok loses
// it.
func (s *Store) keepChanges(ctx context.Context, tx pgx.Tx, g *batchGroup, chunk []keptRow, ok map[keptPeriod]bool) error {
	n := len(chunk)
	ws, pids, members := make([]string, n), make([]string, n), make([]string, n)
	scores, ats, ords := make([]float64, n), make([]time.Time, n), make([]int64, n)
	standings := map[[2]string]int64{} // by window and period: how many distinct members
	unique := true
	for j, c := range chunk {
		ws[j], pids[j], members[j], scores[j], ats[j], ords[j] = c.window, c.period, c.member, c.score, c.at, c.ord
		if j > 0 && c.window == chunk[j-1].window && c.period == chunk[j-1].period && c.member == chunk[j-1].member {
			unique = false
		} else {
			standings[[2]string{c.window, c.period}]++
		}
	}
	query := s.keepBatchSQL(g.policy, g.order, unique)
	args := []any{g.board, ws, pids, members, scores, ats, ords}
	if g.policy != leaderboard.Accumulate {
		_, err := tx.Exec(ctx, query, args...)
		return err
	}
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return err
	}
	var w, pid string
	var cnt int64
	counts := map[[2]string]int64{}
	if _, err := pgx.ForEachRow(rows, []any{&w, &pid, &cnt}, func() error {
		counts[[2]string{w, pid}] = cnt
		return nil
	}); err != nil {
		return err
	}
	for wp, want := range standings {
		if counts[wp] == want {
			continue
		}
		for p := range ok {
			if p.window == wp[0] && p.period == wp[1] {
				ok[p] = false
			}
		}
	}
	return nil
}

// clearUnkept clears complete on the board's other periods holding one of
// g's times, and on those whose Accumulate totals were not all kept.
func (s *Store) clearUnkept(ctx context.Context, tx pgx.Tx, subs []leaderboard.Submission, g *batchGroup, ok map[keptPeriod]bool) error {
	var keptWs, keptPs []string
	for p, isOK := range ok {
		if isOK {
			keptWs, keptPs = append(keptWs, p.window), append(keptPs, p.period)
		}
	}
	seen := map[time.Time]bool{}
	var ats []time.Time
	first := subs[g.idx[0]].At
	for _, i := range g.idx {
		at := subs[i].At
		if !seen[at] {
			seen[at] = true
			ats = append(ats, at)
			if at.Before(first) {
				first = at
			}
		}
	}
	_, err := tx.Exec(ctx, `UPDATE `+s.tKeptPeriods+` sp SET complete = false
WHERE sp.board = $1 AND sp.complete AND sp.period_end > $2
	AND EXISTS (SELECT 1 FROM unnest($3::timestamptz[]) AS a WHERE a >= sp.period_start AND a < sp.period_end)
	AND NOT EXISTS (SELECT 1 FROM unnest($4::text[], $5::text[]) AS k (w, p) WHERE k.w = sp."window" AND k.p = sp.period)`,
		g.board, first, ats, keptWs, keptPs)
	return err
}

// keepBatchSQL is the statement that keeps a chunk of a batch's changes
// ($2 windows, $3 periods, $4 members, $5 scores, $6 times, $7 the
// submissions' places in the batch) to the standings of board $1. unique
// says no standing changes twice in the chunk: each is then upserted as
// Append does. Otherwise, as ON CONFLICT cannot touch a row twice in one
// statement, each standing's changes are combined first: KeepBest to the
// best, Replace to the last; Accumulate adds them one by one, in batch
// order, to the standing (locked first), as Append would have, with the
// time of the last that is not 0.
//
// Rows are upserted in (window, period, member) order, byte-wise as Go
// sorts the chunks: two batches lock the standings they share in the same
// order, and so does Append.
func (s *Store) keepBatchSQL(policy leaderboard.Policy, order leaderboard.Order, unique bool) string {
	with := `WITH x AS (
	SELECT w, p, m, s, a, o FROM unnest($2::text[], $3::text[], $4::text[], $5::float8[], $6::timestamptz[], $7::bigint[]) AS x (w, p, m, s, a, o)
)`
	const byKey = `w COLLATE "C", p COLLATE "C", m COLLATE "C"`
	insert := `INSERT INTO ` + s.tKept + ` AS st (board, "window", period, member, score, at)`
	conflict := `ON CONFLICT (board, "window", period, member) ` + keptSet(policy, order)
	if unique || policy != leaderboard.Accumulate {
		source := `SELECT $1::text, w, p, m, s, a FROM x ORDER BY ` + byKey
		if !unique {
			last := "o DESC" // Replace
			if policy == leaderboard.KeepBest {
				last = "s DESC, a"
				if order == leaderboard.LowestFirst {
					last = "s, a"
				}
			}
			source = `SELECT DISTINCT ON (` + byKey + `) $1::text, w, p, m, s, a FROM x ORDER BY ` + byKey + `, ` + last
		}
		if policy != leaderboard.Accumulate {
			return with + "\n" + insert + "\n" + source + "\n" + conflict
		}
		return with + `, up AS (
` + insert + "\n" + source + "\n" + conflict + `
	RETURNING st."window" AS w, st.period AS p
)
SELECT w, p, count(*) FROM up GROUP BY w, p`
	}
	sum := func(arr string) string {
		return `(SELECT sum(v ORDER BY i) FROM unnest(` + arr + `) WITH ORDINALITY AS u (v, i))`
	}
	match := `st.board = $1::text AND st."window" = g.w AND st.period = g.p AND st.member = g.m`
	return with + `, g AS (
	SELECT w, p, m, array_agg(s ORDER BY o) AS ss,
		(array_agg(a ORDER BY o DESC) FILTER (WHERE s <> 0))[1] AS anz, (array_agg(a ORDER BY o))[1] AS a1,
		max(abs(s)) AS big, count(*) AS n
	FROM x GROUP BY w, p, m
), lk AS (
	SELECT st.member FROM ` + s.tKept + ` st JOIN g ON ` + match + `
	ORDER BY st."window", st.period, st.member FOR UPDATE OF st
), upd AS (
	UPDATE ` + s.tKept + ` st SET score = ` + sum("st.score || g.ss") + `, at = coalesce(g.anz, st.at)
	FROM g
	WHERE ` + match + ` AND (SELECT count(*) FROM lk) >= 0
		AND greatest(abs(st.score), g.big) < ` + nearOverflow + ` / (g.n + 1)
	RETURNING st."window" AS w, st.period AS p
), ins AS (
	` + insert + `
	SELECT $1::text, g.w, g.p, g.m, ` + sum("g.ss") + `, coalesce(g.anz, g.a1)
	FROM g
	WHERE g.big < ` + nearOverflow + ` / g.n AND (SELECT count(*) FROM upd) >= 0
		AND NOT EXISTS (SELECT 1 FROM ` + s.tKept + ` st WHERE ` + match + `)
	ORDER BY g.w COLLATE "C", g.p COLLATE "C", g.m COLLATE "C"
	` + conflict + `
	RETURNING st."window" AS w, st.period AS p
)
SELECT w, p, count(*) FROM (SELECT w, p FROM upd UNION ALL SELECT w, p FROM ins) t GROUP BY w, p`
}

// standingsKept streams q's period from standings when its row says they
// are complete under q's policy, order and bounds, in one snapshot with
// that check; kept is false (and nothing streamed) otherwise.
func (s *Store) standingsKept(ctx context.Context, q leaderboard.StandingsQuery, fn func(leaderboard.StoredStanding) error) (kept bool, err error) {
	if q.Window == "" || q.Period == "" {
		return false, nil
	}
	dir := "DESC"
	switch {
	case q.Policy != leaderboard.KeepBest && q.Policy != leaderboard.Replace && q.Policy != leaderboard.Accumulate:
		return false, nil // the aggregation refuses it
	case q.Order == leaderboard.LowestFirst:
		dir = "ASC"
	case q.Order != leaderboard.HighestFirst:
		return false, nil
	}
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return false, fmt.Errorf("pgstore: standings: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if kept, err = s.keeps(ctx, tx, q); err != nil || !kept {
		return false, wrapStandings(err)
	}
	_, err = s.stream(ctx, tx, `SELECT member, score, at FROM `+s.tKept+`
WHERE board = $1 AND "window" = $2 AND period = $3 ORDER BY score `+dir+`, at `+dir,
		[]any{q.Board, q.Window, q.Period}, fn)
	return true, err
}

// keeps reports whether the period q names has standings Standings can
// stream: its row complete, under q's policy, order and bounds.
func (s *Store) keeps(ctx context.Context, tx pgx.Tx, q leaderboard.StandingsQuery) (bool, error) {
	var kept bool
	err := tx.QueryRow(ctx, `SELECT complete AND policy = $4 AND score_order = $5 AND period_start = $6 AND period_end = $7
FROM `+s.tKeptPeriods+` WHERE board = $1 AND "window" = $2 AND period = $3`,
		q.Board, q.Window, q.Period, int16(q.Policy), int16(q.Order),
		bound(q.From, pgtype.NegativeInfinity), bound(q.To, pgtype.Infinity)).Scan(&kept)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	return kept, err
}

func wrapStandings(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("pgstore: standings: %w", err)
}

// Remove records that r.Members were removed from every period r.Periods
// lists, and deletes their kept standings and corrections there, in one
// transaction that holds the board's exclusive lock (no Append of the board
// runs meanwhile, so every submission is either before the removal, in seq
// and in the kept standings, or after it). From then on Standings of such a
// period, kept or aggregated, counts only their submissions appended after
// the removal; other periods and ranges are not affected. A member or a
// period listed twice counts once. Bad input writes nothing.
func (s *Store) Remove(ctx context.Context, r leaderboard.Removal) error {
	if err := checkText("board", r.Board, leaderboard.ErrInvalidArgument); err != nil || r.Board == "" {
		return fmt.Errorf("pgstore: remove: %w", errors.Join(err, emptyIf(r.Board == "", "board", leaderboard.ErrInvalidArgument)))
	}
	for _, m := range r.Members {
		if err := checkText("member", m, leaderboard.ErrInvalidMember); err != nil || m == "" {
			return fmt.Errorf("pgstore: remove: %w", errors.Join(err, emptyIf(m == "", "member", leaderboard.ErrInvalidMember)))
		}
	}
	var ws, pids []string
	for _, p := range r.Periods {
		for _, t := range []struct{ what, v string }{{"window", p.Window}, {"period", p.Period}} {
			if err := checkText(t.what, t.v, leaderboard.ErrInvalidArgument); err != nil || t.v == "" {
				return fmt.Errorf("pgstore: remove: %w", errors.Join(err, emptyIf(t.v == "", t.what, leaderboard.ErrInvalidArgument)))
			}
		}
		ws, pids = append(ws, p.Window), append(pids, p.Period)
	}
	if len(r.Members) == 0 || len(r.Periods) == 0 {
		return nil
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(r.Board)); err != nil {
			return err
		}
		// Every submission of the board committed so far has a lower seq,
		// every later one a higher.
		if _, err := tx.Exec(ctx, `INSERT INTO `+s.tRemovals+` (board, "window", period, member, seq, removed_at)
SELECT $1, d.w, d.p, d.m, nextval(pg_get_serial_sequence($5, 'seq')), $6
FROM (SELECT DISTINCT l.w, l.p, m FROM unnest($2::text[], $3::text[]) AS l (w, p) CROSS JOIN unnest($4::text[]) AS m) AS d (w, p, m)
ORDER BY 2, 3, 4
ON CONFLICT (board, "window", period, member) DO UPDATE SET seq = excluded.seq, removed_at = excluded.removed_at`,
			r.Board, ws, pids, r.Members, s.tSubs, r.At); err != nil {
			return err
		}
		// Their kept standings and corrections go with the rest.
		for _, table := range []string{s.tKept, s.tCorrections} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` t USING unnest($2::text[], $3::text[]) AS l (w, p)
WHERE t.board = $1 AND t."window" = l.w AND t.period = l.p AND t.member = ANY($4::text[])`, r.Board, ws, pids, r.Members); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgstore: remove: %w", err)
	}
	return nil
}

// emptyIf is an error saying what is empty, when it is.
func emptyIf(empty bool, what string, sentinel error) error {
	if !empty {
		return nil
	}
	return fmt.Errorf("%w: empty %s", sentinel, what)
}
