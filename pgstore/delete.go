package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/skiprank/leaderboard"
)

// DeleteBoard deletes every record of board: its submissions, removals,
// resets, corrections, kept standings and kept periods, and its sealed
// periods with their standings, in one transaction that holds the board's
// exclusive lock (an Append of the board waits for it, then starts the
// board afresh). Other boards are not touched. Deleting a board the store
// holds nothing of is not an error; an empty board name, or one that is not
// valid UTF-8 without NUL bytes, returns leaderboard.ErrInvalidArgument.
func (s *Store) DeleteBoard(ctx context.Context, board string) error {
	if err := checkText("board", board, leaderboard.ErrInvalidArgument); err != nil || board == "" {
		return fmt.Errorf("pgstore: delete board: %w", errors.Join(err, emptyIf(board == "", "board", leaderboard.ErrInvalidArgument)))
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(board)); err != nil {
			return err
		}
		// Sealed entries before their periods (the foreign key).
		for _, table := range []string{s.tSubs, s.tRemovals, s.tResets, s.tCorrections, s.tKept, s.tKeptPeriods, s.tEntries, s.tPeriods} {
			if _, err := tx.Exec(ctx, "DELETE FROM "+table+" WHERE board = $1", board); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgstore: delete board: %w", err)
	}
	return nil
}

// DeletePeriod records that board's window period p was reset at at, and
// deletes the period's kept standings and corrections, in one transaction
// that holds the board's exclusive lock (no Append of the board runs
// meanwhile, so every submission is either before the reset, in seq and in
// the kept standings, or after it). From then on Standings of the period,
// kept or aggregated, counts only the submissions appended after the reset;
// the submissions themselves stay (other periods and ranges count them).
// Bad input writes nothing.
func (s *Store) DeletePeriod(ctx context.Context, board string, p leaderboard.SubmissionPeriod, at time.Time) error {
	for _, t := range []struct{ what, v string }{{"board", board}, {"window", p.Window}, {"period", p.Period}} {
		if err := checkText(t.what, t.v, leaderboard.ErrInvalidArgument); err != nil || t.v == "" {
			return fmt.Errorf("pgstore: delete period: %w", errors.Join(err, emptyIf(t.v == "", t.what, leaderboard.ErrInvalidArgument)))
		}
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(board)); err != nil {
			return err
		}
		// Every submission of the board committed so far has a lower seq,
		// every later one a higher.
		if _, err := tx.Exec(ctx, `INSERT INTO `+s.tResets+` (board, "window", period, seq, reset_at)
VALUES ($1, $2, $3, nextval(pg_get_serial_sequence($4, 'seq')), $5)
ON CONFLICT (board, "window", period) DO UPDATE SET seq = excluded.seq, reset_at = excluded.reset_at`,
			board, p.Window, p.Period, s.tSubs, at); err != nil {
			return err
		}
		// Its kept standings and corrections go with the rest.
		for _, table := range []string{s.tKept, s.tCorrections} {
			if _, err := tx.Exec(ctx, `DELETE FROM `+table+` WHERE board = $1 AND "window" = $2 AND period = $3`, board, p.Window, p.Period); err != nil {
				return fmt.Errorf("%s: %w", table, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pgstore: delete period: %w", err)
	}
	return nil
}
