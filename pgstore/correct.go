package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/skiprank/leaderboard"
)

// Correct records c, an operator's correction (a board's Set) of c.Member's
// standing in the window period c.Period (see leaderboard.Corrector), and
// keeps the period's standings exact, in one transaction that holds the
// board's exclusive lock: no Append of the board runs meanwhile, so every
// submission is either before the correction, in seq and in the kept
// standings, or after it.
//
// From then on Standings of the period, kept or aggregated, counts the
// member's submissions appended before the correction as one submission of
// c.Score at c.At (truncated to the microsecond, as Append does), combined
// with the later ones by the board's policy. A newer correction replaces
// it; a later Remove of the member from the period, or DeletePeriod of the
// period, drops it. As a submission would, the correction counts only in a
// range [From, To) holding c.At (a board's Set passes its clock, which the
// current period holds). Other periods and ranges are not affected.
//
// Bad input (text a text column cannot hold, an empty board, member, window
// or period, a NaN or infinite score, a policy or order leaderboard does
// not define, a period that does not end after it starts) returns a typed
// error and writes nothing.
func (s *Store) Correct(ctx context.Context, c leaderboard.Correction) error {
	// The checks and truncations of a submission to the same period.
	sub, held, err := prepare(leaderboard.Submission{Board: c.Board, Member: c.Member, Score: c.Score, At: c.At,
		Policy: c.Policy, Order: c.Order, Periods: []leaderboard.SubmissionPeriod{c.Period}})
	if err != nil {
		return fmt.Errorf("pgstore: correct: %w", err)
	}
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(sub.Board)); err != nil {
			return err
		}
		// A period first written to by a correction (a Set before any
		// Submit in it) is kept from then on, as an Append would keep it,
		// rather than aggregated for good.
		if len(held) > 0 {
			if err := s.insertPeriods(ctx, tx, sub.Board, sub.Policy, sub.Order, held); err != nil {
				return err
			}
		}
		// Every submission of the board committed so far has a lower seq,
		// every later one a higher.
		if _, err := tx.Exec(ctx, `INSERT INTO `+s.tCorrections+` (board, "window", period, member, seq, score, corrected_at)
VALUES ($1, $2, $3, $4, nextval(pg_get_serial_sequence($5, 'seq')), $6, $7)
ON CONFLICT (board, "window", period, member)
DO UPDATE SET seq = excluded.seq, score = excluded.score, corrected_at = excluded.corrected_at`,
			sub.Board, c.Period.Window, c.Period.Period, sub.Member, s.tSubs, sub.Score, sub.At); err != nil {
			return err
		}
		return s.keepCorrection(ctx, tx, sub, c.Period)
	})
	if err != nil {
		return fmt.Errorf("pgstore: correct: %w", err)
	}
	return nil
}

// keepCorrection makes sub's member's kept standing in period p what the
// aggregation now makes it: the correction sub stands for alone, when the
// period's row holds its time, else nothing (the member's earlier
// submissions no longer count, and the correction is outside the period's
// bounds). Whatever the policy, a correction with nothing after it is the
// member's standing, so the row's policy and order do not matter; later
// Appends combine with it as with any kept standing. A period whose kept
// standings are incomplete is aggregated anyway: only its stale row goes.
func (s *Store) keepCorrection(ctx context.Context, tx pgx.Tx, sub leaderboard.Submission, p leaderboard.SubmissionPeriod) error {
	if _, err := tx.Exec(ctx, `DELETE FROM `+s.tKept+` WHERE board = $1 AND "window" = $2 AND period = $3 AND member = $4`,
		sub.Board, p.Window, p.Period, sub.Member); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `INSERT INTO `+s.tKept+` (board, "window", period, member, score, at)
SELECT sp.board, sp."window", sp.period, $4::text, $5::float8, $6::timestamptz FROM `+s.tKeptPeriods+` sp
WHERE sp.board = $1 AND sp."window" = $2 AND sp.period = $3 AND sp.complete
	AND sp.period_start <= $6::timestamptz AND sp.period_end > $6::timestamptz`,
		sub.Board, p.Window, p.Period, sub.Member, sub.Score, sub.At)
	return err
}
