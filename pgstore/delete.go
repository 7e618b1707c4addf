package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/skiprank/leaderboard"
)

// DeleteBoard deletes every record of board: its submissions, removals,
// kept standings and kept periods, and its sealed periods with their
// standings, in one transaction that holds the board's exclusive lock (an
// Append of the board waits for it, then starts the board afresh). Other
// boards are not touched. Deleting a board the store holds nothing of is
// not an error; an empty board name, or one that is not valid UTF-8 without
// NUL bytes, returns leaderboard.ErrInvalidArgument.
func (s *Store) DeleteBoard(ctx context.Context, board string) error {
	if err := checkText("board", board, leaderboard.ErrInvalidArgument); err != nil || board == "" {
		return fmt.Errorf("pgstore: delete board: %w", errors.Join(err, emptyIf(board == "", "board", leaderboard.ErrInvalidArgument)))
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.boardLockKey(board)); err != nil {
			return err
		}
		// Sealed entries before their periods (the foreign key).
		for _, table := range []string{s.tSubs, s.tRemovals, s.tKept, s.tKeptPeriods, s.tEntries, s.tPeriods} {
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
