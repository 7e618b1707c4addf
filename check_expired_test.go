package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestCheckAtAnExpiredPeriod: Check At a period past its retention
// returns ErrExpired, as a read At it does, without a call to Redis (with
// repair too, which would otherwise write into keys Redis is expiring);
// a window whose period there is still kept is checked as before.
func TestCheckAtAnExpiredPeriod(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	b.Mini.SetTime(clock)
	board, _ := newBoard(t, b, lb.WithShards(100), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithRetention(6*time.Hour), lb.WithClock(func() time.Time { return clock }))
	for m, v := range map[string]float64{"low": 10, "high": 200} {
		_, err := board.Submit(ctx, m, v)
		require.NoError(t, err)
	}
	day := lb.At(clock)

	clock = clock.Add(7 * time.Hour) // closed, still kept
	b.Mini.FastForward(7 * time.Hour)
	reports, err := board.Check(ctx, false, day)
	require.NoError(t, err)
	require.Len(t, reports, 2)
	for _, r := range reports {
		require.Equal(t, int64(2), r.Members, r.Window)
		require.True(t, r.Clean(), r.Window)
	}

	clock = clock.Add(time.Hour + time.Millisecond) // past the daily period's retention
	b.Mini.FastForward(time.Hour + time.Millisecond)
	calls := b.Client.Calls()
	for _, repair := range []bool{false, true} {
		_, err = board.Check(ctx, repair, day)
		require.ErrorIs(t, err, lb.ErrExpired, "repair %v", repair)
		_, err = board.Check(ctx, repair, day, lb.In(lb.Daily()))
		require.ErrorIs(t, err, lb.ErrExpired, "repair %v, In(Daily)", repair)
	}
	require.Equal(t, calls, b.Client.Calls(), "an expired period is decided without Redis")

	reports, err = board.Check(ctx, false, day, lb.In(lb.AllTime()))
	require.NoError(t, err, "the all-time period is never past its retention")
	require.Len(t, reports, 1)
	require.Equal(t, int64(2), reports[0].Members)
}
