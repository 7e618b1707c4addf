package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/skiprank/leaderboard"
)

// The store is an IDKeeper: it knows when every WithID id was received;
// and an IDReplayer: it returns the submission an id names.
// Received is the submission's Submission.Received as Append stored it
// (truncated to the microsecond), or, when that was zero, the database's
// clock at the append (created_at); rows appended before migration 4 have
// the latter.

// IDReceived reports when the submission with id reached the store for
// board (see leaderboard.IDKeeper), in UTC, and its member; ok is false
// when the store holds none. An empty id names none. Board or id that are
// not valid UTF-8 without NUL bytes return leaderboard.ErrInvalidArgument.
func (s *Store) IDReceived(ctx context.Context, board, id string) (received time.Time, member string, ok bool, err error) {
	if err := checkBoardID(board, id); err != nil {
		return time.Time{}, "", false, fmt.Errorf("pgstore: id received: %w", err)
	}
	if id == "" {
		return time.Time{}, "", false, nil
	}
	err = s.pool.QueryRow(ctx, `SELECT coalesce(received, created_at), member FROM `+s.tSubs+` WHERE board = $1 AND id = $2`,
		board, id).Scan(&received, &member)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, "", false, nil
	}
	if err != nil {
		return time.Time{}, "", false, fmt.Errorf("pgstore: id received: %w", err)
	}
	return received.UTC(), member, true, nil
}

// IDSubmission returns the submission with id that the store holds for
// board (see leaderboard.IDReplayer): its Board, ID, Member, Score, At
// and Received (as IDReceived reports it), times in UTC; ok is false when
// the store holds none. An empty id names none. Board or id that are not
// valid UTF-8 without NUL bytes return leaderboard.ErrInvalidArgument.
func (s *Store) IDSubmission(ctx context.Context, board, id string) (sub leaderboard.Submission, ok bool, err error) {
	if err := checkBoardID(board, id); err != nil {
		return sub, false, fmt.Errorf("pgstore: id submission: %w", err)
	}
	if id == "" {
		return sub, false, nil
	}
	sub.Board, sub.ID = board, id
	err = s.pool.QueryRow(ctx, `SELECT member, score, at, coalesce(received, created_at) FROM `+s.tSubs+`
WHERE board = $1 AND id = $2`, board, id).Scan(&sub.Member, &sub.Score, &sub.At, &sub.Received)
	if errors.Is(err, pgx.ErrNoRows) {
		return leaderboard.Submission{}, false, nil
	}
	if err != nil {
		return leaderboard.Submission{}, false, fmt.Errorf("pgstore: id submission: %w", err)
	}
	sub.At, sub.Received = sub.At.UTC(), sub.Received.UTC()
	return sub, true, nil
}

// IDsSince calls fn for every id of board received at or after since (zero:
// every id), in no particular order, from one range scan of an index
// (migration 4). Rows are read as they arrive; an error from fn stops the
// walk (the query is cancelled) and is returned as it is.
func (s *Store) IDsSince(ctx context.Context, board string, since time.Time, fn func(id, member string, received time.Time) error) error {
	if err := checkBoardID(board, ""); err != nil {
		return fmt.Errorf("pgstore: ids since: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	rows, err := s.pool.Query(ctx, s.idsSinceSQL(), board, bound(since, pgtype.NegativeInfinity))
	if err != nil {
		return fmt.Errorf("pgstore: ids since: %w", err)
	}
	defer rows.Close()
	var (
		id, member string
		received   time.Time
	)
	for rows.Next() {
		if err := rows.Scan(&id, &member, &received); err != nil {
			return fmt.Errorf("pgstore: ids since: %w", err)
		}
		if err := fn(id, member, received.UTC()); err != nil {
			cancel()
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgstore: ids since: %w", err)
	}
	return nil
}

// idsSinceSQL is IDsSince's query: board $1, since $2. Its WHERE is the
// index's (migration 4).
func (s *Store) idsSinceSQL() string {
	return `SELECT id, member, coalesce(received, created_at) FROM ` + s.tSubs + `
WHERE board = $1 AND id IS NOT NULL AND coalesce(received, created_at) >= $2`
}

// checkBoardID refuses a board or id a text column cannot hold.
func checkBoardID(board, id string) error {
	if err := checkText("board", board, leaderboard.ErrInvalidArgument); err != nil {
		return err
	}
	return checkText("id", id, leaderboard.ErrInvalidArgument)
}
