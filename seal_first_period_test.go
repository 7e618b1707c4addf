package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestSealFirstPeriodWithoutStart: a window's first period, which has no
// Start (it holds every instant before its End), is sealed like any
// closed period once it ends. Seal read it At its Start, the zero time,
// which a read refuses: Seal returned ErrInvalidArgument and sealed
// nothing, though Periods listed the period and reads At an instant in it
// answered.
func TestSealFirstPeriodWithoutStart(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		start := future.Add(-time.Hour)
		clock := &testClock{now: start.Add(-time.Hour)}
		board, _ := newBoard(t, b, lb.WithWindows(lastSeason{start: start}), lb.WithStore(newMemStore()),
			lb.WithClock(clock.Now), lb.WithRetention(48*time.Hour))
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "m", 5)
		require.NoError(t, err)
		clock.Set(future) // s0 has ended; s1 runs
		sealed, err := board.Seal(ctx, nil)
		require.NoError(t, err)
		want := []lb.Entry{{Member: "m", Score: 5, Rank: 1}}
		require.Equal(t, []lb.SealedPeriod{{Window: "season", Period: "s0", Entries: want}}, sealed)
		es, ok, err := board.Sealed(ctx, lb.At(start.Add(-time.Minute)))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, want, es)
	})
}
