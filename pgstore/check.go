package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/skiprank/leaderboard"
)

// repairTargeted is how many differing members a repair rewrites one by
// one; past it, it rewrites the period's standings whole, rather than hold
// every name in memory.
const repairTargeted = 10_000

// CheckStandings compares the standings the store keeps for the period q
// names (q.Window and q.Period) with the aggregation of its log over
// [q.From, q.To), by the rules Standings aggregates with (see
// leaderboard.StandingsChecker). The period is kept when Standings of q
// would stream its kept standings: its row complete, under q's policy,
// order and bounds; when it is not, Kept is false, nothing else is filled
// in, and nothing is written.
//
// Without repair it reads one snapshot and writes nothing. Log and kept
// standings come in one stream ordered by member, and the aggregation is
// made in Go as it goes, so memory does not grow with the period: it reads
// every submission of the period, as a rebuild that aggregates would.
// Replace and Accumulate standings of a member appended to by concurrent
// Appends may show as different (see Standings: they follow the commit
// order, the aggregation seq).
//
// With repair, and when something differs, it rewrites the kept standings
// of the differing members with the log's aggregation (the whole period's
// past 10,000 of them), in one transaction that holds the board's
// exclusive lock, which every Append of the board takes shared: no Append
// runs between the check and the rewrite, and every later one continues
// from the rewritten standings. A log whose aggregation overflows float64
// (an Accumulate total that Redis refused) cannot be kept: repair then
// marks the period incomplete, and Standings aggregates it from then on.
// Repaired reports either.
//
// A query that names no period, or with a policy or order leaderboard does
// not define, or text a text column cannot hold, returns
// leaderboard.ErrInvalidArgument.
func (s *Store) CheckStandings(ctx context.Context, q leaderboard.StandingsQuery, repair bool) (leaderboard.StandingsCheck, error) {
	if err := checkQuery(q); err != nil {
		return leaderboard.StandingsCheck{}, fmt.Errorf("pgstore: check standings: %w", err)
	}
	var c leaderboard.StandingsCheck
	opts := pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}
	if repair {
		opts = pgx.TxOptions{}
	}
	err := pgx.BeginTxFunc(ctx, s.pool, opts, func(tx pgx.Tx) error {
		if repair {
			if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(q.Board)); err != nil {
				return err
			}
		}
		kept, err := s.keeps(ctx, tx, q)
		if err != nil || !kept {
			return err
		}
		c.Kept = true
		differ, err := s.compareKept(ctx, tx, q, &c)
		if err != nil || !repair || c.DifferCount == 0 {
			return err
		}
		if c.DifferCount > repairTargeted {
			differ = nil // every member
		}
		if err := s.recompute(ctx, tx, q, differ); err != nil {
			return err
		}
		c.Repaired = true
		return nil
	})
	if err != nil {
		return leaderboard.StandingsCheck{}, fmt.Errorf("pgstore: check standings: %w", err)
	}
	return c, nil
}

// checkQuery refuses a query CheckStandings cannot check.
func checkQuery(q leaderboard.StandingsQuery) error {
	for _, t := range []struct{ what, v string }{{"board", q.Board}, {"window", q.Window}, {"period", q.Period}} {
		if err := checkText(t.what, t.v, leaderboard.ErrInvalidArgument); err != nil {
			return err
		}
		if t.v == "" {
			return fmt.Errorf("%w: empty %s: the query must name a period", leaderboard.ErrInvalidArgument, t.what)
		}
	}
	_, err := standingsSQL(q, "") // checks policy and order
	return err
}

// memberCheck is one member's side of the comparison: its aggregation from
// the log, and its kept standing.
type memberCheck struct {
	member          string
	agg, kept       leaderboard.StoredStanding
	hasAgg, hasKept bool
}

// compareKept streams the log of q's period and its kept standings by
// member, fills c, and returns the differing members, up to
// repairTargeted+1 of them.
func (s *Store) compareKept(ctx context.Context, tx pgx.Tx, q leaderboard.StandingsQuery, c *leaderboard.StandingsCheck) ([]string, error) {
	from, args, err := s.standingsFrom(q)
	if err != nil {
		return nil, err
	}
	args = append(args, q.Window, q.Period)
	query := fmt.Sprintf(`SELECT member, score, at, false AS kept, seq %s
UNION ALL
SELECT member, score, at, true, 0 FROM %s WHERE board = $1 AND "window" = $%d AND period = $%d
ORDER BY 1, 4, 5`, from, s.tKept, len(args)-1, len(args))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cmp := keptComparison{q: q, c: c}
	var (
		row  leaderboard.StoredStanding
		kept bool
		seq  int64
	)
	for rows.Next() {
		if err := rows.Scan(&row.Member, &row.Score, &row.At, &kept, &seq); err != nil {
			return nil, err
		}
		cmp.add(row, kept)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	cmp.finish()
	return cmp.differ, nil
}

// keptComparison compares one member at a time, as compareKept's stream
// brings them: its submissions folded, then its kept standing.
type keptComparison struct {
	q       leaderboard.StandingsQuery
	c       *leaderboard.StandingsCheck
	cur     memberCheck
	started bool
	// differ lists the differing members, up to repairTargeted+1.
	differ []string
}

// add takes the stream's next row: a submission, or the kept standing.
func (k *keptComparison) add(row leaderboard.StoredStanding, kept bool) {
	if !k.started || row.Member != k.cur.member {
		k.finish()
		k.cur, k.started = memberCheck{member: row.Member}, true
	}
	if kept {
		k.cur.kept, k.cur.hasKept = row, true
		return
	}
	k.cur.agg = fold(k.q.Policy, k.q.Order, k.cur.agg, k.cur.hasAgg, row)
	k.cur.hasAgg = true
}

// finish compares the member in hand, if any.
func (k *keptComparison) finish() {
	if !k.started {
		return
	}
	cur, c := &k.cur, k.c
	if cur.hasAgg {
		c.Members++
	}
	if cur.hasAgg && cur.hasKept && cur.agg.Score == cur.kept.Score && cur.agg.At.Equal(cur.kept.At) {
		return
	}
	c.DifferCount++
	if len(c.Differ) < leaderboard.VerifySample {
		c.Differ = append(c.Differ, cur.member)
	}
	if len(k.differ) <= repairTargeted {
		k.differ = append(k.differ, cur.member)
	}
}

// fold combines a member's standing so far (none when !started) with its
// next submission in append order, as Standings' aggregation does: KeepBest
// keeps the best score and the earliest time it was reached, Replace the
// last submission, Accumulate adds the score (IEEE addition, in append
// order) and takes the time of the last one that is not 0.
func fold(policy leaderboard.Policy, order leaderboard.Order, st leaderboard.StoredStanding, started bool, sub leaderboard.StoredStanding) leaderboard.StoredStanding {
	if !started {
		return sub
	}
	switch policy {
	case leaderboard.Replace:
		return sub
	case leaderboard.Accumulate:
		st.Score += sub.Score
		if sub.Score != 0 { // adding 0 reaches no new total
			st.At = sub.At
		}
		return st
	}
	better := sub.Score > st.Score
	if order == leaderboard.LowestFirst {
		better = sub.Score < st.Score
	}
	if better || (sub.Score == st.Score && sub.At.Before(st.At)) {
		return sub
	}
	return st
}
