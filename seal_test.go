package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

func TestSealClosedPeriods(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		store := newMemStore()
		clock := future.Add(-24 * time.Hour)
		board, _ := newBoard(t, b, lb.WithStore(store), lb.WithWindows(lb.Daily(), lb.AllTime()),
			lb.WithClock(func() time.Time { return clock }))
		for i, m := range []string{"ann", "bob", "cy"} {
			_, err := board.Submit(ctx, m, float64(10*(i+1)))
			require.NoError(t, err)
		}
		var hooked []lb.SealedPeriod
		hook := func(_ context.Context, p lb.SealedPeriod) error { hooked = append(hooked, p); return nil }
		sealed, err := board.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, sealed, "nothing has closed yet")

		day := lb.Daily().Period(clock)
		clock = future // the day is over
		sealed, err = board.Seal(ctx, hook)
		require.NoError(t, err)
		want := lb.SealedPeriod{Window: "daily", Period: day.ID, Entries: []lb.Entry{{Member: "cy", Score: 30, Rank: 1}, {Member: "bob", Score: 20, Rank: 2}, {Member: "ann", Score: 10, Rank: 3}}}
		require.Equal(t, []lb.SealedPeriod{want}, sealed)
		require.Equal(t, []lb.SealedPeriod{want}, hooked)

		sealed, err = board.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, sealed, "sealed once")
		require.Len(t, hooked, 1, "the hook runs once")

		entries, ok, err := board.Sealed(ctx, lb.At(day.Start))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want.Entries, entries)
		_, ok, err = board.Sealed(ctx)
		require.NoError(t, err)
		require.False(t, ok, "today is not sealed")
	})
}
