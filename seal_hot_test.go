package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestSealReadsThePeriodNotTheMirror: on a board WithHotTop(MaxN) Seal read
// a period's first page from the top mirror, which trails the writes of a
// process without WithHotTop (an admin tool) by up to 10 seconds, and a
// write whose mirror delete failed as long: Seal, run a second after the
// period's end, sealed the mirror's stale standings for good. It reads the
// period itself.
func TestSealReadsThePeriodNotTheMirror(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		day := lb.Daily().Period(future.Add(-24 * time.Hour))
		clock := &testClock{now: day.End.Add(-time.Hour)}
		name := b.BoardName(t)
		opts := []lb.Option{lb.WithStore(newMemStore()), lb.WithWindows(lb.Daily()), lb.WithClock(clock.Now)}
		hot, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(lb.MaxN))...)
		require.NoError(t, err)
		admin, err := lb.New(b.Client, name, opts...)
		require.NoError(t, err)
		_, err = hot.Rebuild(ctx)
		require.NoError(t, err)
		for m, s := range map[string]float64{"ann": 10, "bob": 5} {
			_, err := hot.Submit(ctx, m, s)
			require.NoError(t, err)
		}
		top, err := hot.Top(ctx, 2)
		require.NoError(t, err)
		require.Len(t, top, 2)
		require.NoError(t, admin.Set(ctx, "bob", 30), "a correction from a process without the hot top")

		clock.Set(day.End.Add(time.Second))
		sealed, err := hot.Seal(ctx, nil)
		require.NoError(t, err)
		want := []lb.Entry{{Member: "bob", Score: 30, Rank: 1}, {Member: "ann", Score: 10, Rank: 2}}
		require.Equal(t, []lb.SealedPeriod{{Window: "daily", Period: day.ID, Entries: want}}, sealed)
	})
}
