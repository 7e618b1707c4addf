package pgstore

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// boardTables is every table with a board column.
func boardTables(s *Store) []string {
	return []string{s.tSubs, s.tKept, s.tKeptPeriods, s.tRemovals, s.tResets, s.tCorrections, s.tPeriods, s.tEntries}
}

// boardSnapshot is every row of board in every table, as text.
func boardSnapshot(t *testing.T, s *Store, board string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, table := range boardTables(s) {
		rows, err := s.pool.Query(context.Background(), "SELECT t::text FROM "+table+" t WHERE board = $1 ORDER BY 1", board)
		require.NoError(t, err)
		var line string
		_, err = pgxForEach(rows, &line, func() { out[table] = append(out[table], line) })
		require.NoError(t, err)
	}
	return out
}

// TestDeleteBoard: DeleteBoard leaves no row of the board in any table
// (corrections too), leaves other boards' rows as they were, and the board
// starts afresh: its ids are free and its periods kept again.
func TestDeleteBoard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	fill := func(board string) []leaderboard.Submission {
		subs := []leaderboard.Submission{
			{Board: board, ID: "m1", Member: "a", Score: 3, At: t0, Policy: leaderboard.Accumulate, Periods: []leaderboard.SubmissionPeriod{allTime}},
			{Board: board, Member: "b", Score: 5, At: t0, Policy: leaderboard.Accumulate, Periods: []leaderboard.SubmissionPeriod{allTime}},
		}
		_, err := s.AppendBatch(ctx, subs)
		require.NoError(t, err)
		require.NoError(t, s.Remove(ctx, leaderboard.Removal{Board: board, Members: []string{"b"}, At: t0,
			Periods: []leaderboard.SubmissionPeriod{allTime}}))
		require.NoError(t, s.Correct(ctx, leaderboard.Correction{Board: board, Member: "a", Score: 9, At: t0,
			Policy: leaderboard.Accumulate, Period: allTime}))
		_, err = s.Seal(ctx, board, "weekly", "2026-W48", []leaderboard.Entry{{Member: "a", Score: 3, Rank: 1}})
		require.NoError(t, err)
		require.NoError(t, s.DeletePeriod(ctx, board, leaderboard.SubmissionPeriod{Window: "weekly", Period: "2026-W48"}, t0))
		return subs
	}
	fill("gone")
	fill("gone2") // a name the other extends: no pattern may catch it
	fill("kept")
	before := boardSnapshot(t, s, "kept")
	before2 := boardSnapshot(t, s, "gone2")
	for _, table := range boardTables(s) {
		require.NotEmpty(t, boardSnapshot(t, s, "gone")[table], "%s holds the board before", table)
	}

	require.NoError(t, s.DeleteBoard(ctx, "gone"))
	require.Empty(t, boardSnapshot(t, s, "gone"))
	require.Equal(t, before, boardSnapshot(t, s, "kept"))
	require.Equal(t, before2, boardSnapshot(t, s, "gone2"))

	// Afresh: the id is new, nothing sealed, the period kept from scratch.
	sub := leaderboard.Submission{Board: "gone", ID: "m1", Member: "a", Score: 4, At: t0, Policy: leaderboard.Accumulate,
		Periods: []leaderboard.SubmissionPeriod{allTime}}
	dup, err := s.Append(ctx, sub)
	require.NoError(t, err)
	require.False(t, dup)
	_, sealed, err := s.Sealed(ctx, "gone", "weekly", "2026-W48")
	require.NoError(t, err)
	require.False(t, sealed)
	requireModel(t, s, k, []leaderboard.Submission{sub}, query("gone", leaderboard.Accumulate, leaderboard.HighestFirst, allTime), true)

	require.NoError(t, s.DeleteBoard(ctx, "nobody"))
	for _, bad := range []string{"", "\xff", "a\x00"} {
		err := s.DeleteBoard(ctx, bad)
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
		require.ErrorContains(t, err, "pgstore: delete board: ")
	}
	require.Equal(t, before, boardSnapshot(t, s, "kept"))
}
