package pgstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// era is a window whose current period runs from 10001 BC to 300000 AD,
// beyond both ends of what timestamptz holds, after a first period "pre"
// that never started and before a last one "post" that never ends.
type era struct{}

var eraStart, eraEnd = time.Date(-10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)

func (era) Name() string { return "era" }

func (era) Period(t time.Time) leaderboard.Period {
	switch {
	case t.Before(eraStart):
		return leaderboard.Period{ID: "pre", End: eraStart}
	case t.Before(eraEnd):
		return leaderboard.Period{ID: "now", Start: eraStart, End: eraEnd}
	}
	return leaderboard.Period{ID: "post", Start: eraEnd}
}

// TestPeriodBoundsBeyondTimestamptz: a period whose bounds lie beyond
// what timestamptz holds keeps the submissions it holds, as if those
// bounds were infinite. Its bounds went to PostgreSQL as they were: every
// Submit failed with "timestamp out of range", no sentinel, and so did
// Rebuild and Verify.
func TestPeriodBoundsBeyondTimestamptz(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		s := newStore(t)
		name := b.BoardName(t)
		board, err := leaderboard.New(b.Client, name, leaderboard.WithStore(s),
			leaderboard.WithWindows(era{}), leaderboard.WithPolicy(leaderboard.Accumulate))
		require.NoError(t, err)
		for _, m := range []string{"a", "b", "a"} {
			_, err := board.Submit(ctx, m, 2)
			require.NoError(t, err)
		}
		requireRebuildKeeps(t, b, name, board, func() []any { return boardView(t, board) })
		top, err := board.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []leaderboard.Entry{{Member: "a", Score: 4, Rank: 1}, {Member: "b", Score: 2, Rank: 2}}, top)
		reports, err := board.Verify(ctx)
		require.NoError(t, err)
		require.True(t, reports[0].Store.Kept, "the period's standings are kept")
	})
}

// TestPeriodBoundsBeyondTimestamptzHoldNothing: a listed period that ends
// before timestamptz's first instant, or starts after its last, holds no
// time the store keeps: Append keeps no standing in it.
func TestPeriodBoundsBeyondTimestamptzHoldNothing(t *testing.T) {
	ctx := context.Background()
	s := newStore(t)
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	for _, p := range []leaderboard.SubmissionPeriod{
		{Window: "old", Period: "p", Start: eraStart.AddDate(-1, 0, 0), End: eraStart},
		{Window: "late", Period: "p", Start: eraEnd, End: eraEnd.AddDate(1, 0, 0)},
	} {
		_, err := s.Append(ctx, leaderboard.Submission{Board: "b", Member: "m", Score: 1, At: at, Policy: leaderboard.KeepBest,
			Periods: []leaderboard.SubmissionPeriod{p}})
		require.NoError(t, err)
		var n int
		require.NoError(t, s.pool.QueryRow(ctx, `SELECT count(*) FROM `+s.tKept+` WHERE "window" = $1`, p.Window).Scan(&n))
		require.Zero(t, n, "%s holds no time the store keeps", p.Window)
	}
}
