package leaderboard_test

import (
	"context"
	"sync"
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
		board, name := newBoard(t, b, lb.WithStore(store), lb.WithWindows(lb.Daily(), lb.AllTime()),
			lb.WithClock(func() time.Time { return clock }))
		for i, m := range []string{"ann", "bob", "cy"} {
			_, err := board.Submit(ctx, m, float64(10*(i+1)))
			require.NoError(t, err)
		}
		var hooked []lb.SealedPeriod
		hook := func(_ context.Context, p lb.SealedPeriod) error { hooked = append(hooked, p); return nil }
		_, err := board.Seal(ctx, hook)
		require.ErrorIs(t, err, lb.ErrNotPresent, "a board never rebuilt")
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		sealed, err := board.Seal(ctx, hook)
		require.NoError(t, err)
		require.Empty(t, sealed, "nothing has closed yet")

		day := lb.Daily().Period(clock)
		clock = future // the day is over
		// Redis loses the board (a restart without persistence) and keeps
		// only a later submission: nothing is sealed until a Rebuild.
		b.Wipe(t, name)
		_, err = board.Submit(ctx, "late", 5, lb.WithTime(day.Start))
		require.NoError(t, err)
		_, err = board.Seal(ctx, hook)
		require.ErrorIs(t, err, lb.ErrNotPresent)
		require.Empty(t, hooked)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		sealed, err = board.Seal(ctx, hook)
		require.NoError(t, err)
		want := lb.SealedPeriod{Window: "daily", Period: day.ID, Entries: []lb.Entry{{Member: "cy", Score: 30, Rank: 1}, {Member: "bob", Score: 20, Rank: 2}, {Member: "ann", Score: 10, Rank: 3}, {Member: "late", Score: 5, Rank: 4}}}
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

		// Past the day's retention (a day by default) its reads are
		// ErrExpired, but the store still has its final standings.
		clock = day.End.Add(25 * time.Hour)
		_, err = board.Top(ctx, 10, lb.At(day.Start))
		require.ErrorIs(t, err, lb.ErrExpired)
		entries, ok, err = board.Sealed(ctx, lb.At(day.Start))
		require.NoError(t, err, "Sealed after the retention")
		require.True(t, ok)
		require.Equal(t, want.Entries, entries)
		_, _, err = board.Sealed(ctx, lb.In(nil))
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
		_, _, err = board.Sealed(ctx, lb.At(time.Time{}))
		require.ErrorIs(t, err, lb.ErrInvalidArgument, "the zero time, not today")
	})
}

// tickingClock is a board clock that moves 1 ms on every read once it
// ticks.
type tickingClock struct {
	mu   sync.Mutex
	now  time.Time
	tick bool
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now
	if c.tick {
		c.now = c.now.Add(time.Millisecond)
	}
	return t
}

// TestSealPeriodExpiringAsRead: a Seal that starts a moment before a
// closed, unsealed day's retention ends finds the day live and closed,
// and reads it after its retention ended. It failed the whole call with
// ErrExpired, sealing nothing of the windows after the day (the closed
// week, whose key lives for days); it skips the day now, as gone.
func TestSealPeriodExpiringAsRead(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		monday := future.Truncate(24 * time.Hour)
		for monday.Weekday() != time.Monday {
			monday = monday.Add(24 * time.Hour)
		}
		sunday := monday.Add(-24 * time.Hour)
		clock := &tickingClock{now: sunday.Add(12 * time.Hour)}
		board, _ := newBoard(t, b, lb.WithStore(newMemStore()),
			lb.WithWindows(lb.Daily(), lb.Weekly()), lb.WithClock(clock.Now))
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "p", 10) // Sunday, and Sunday's week
		require.NoError(t, err)
		clock.mu.Lock()
		// 3 ms before Sunday's retention (one period) ends, at the end of
		// Monday; each read of the clock 1 ms later.
		clock.now, clock.tick = monday.Add(24*time.Hour-3*time.Millisecond), true
		clock.mu.Unlock()
		sealed, err := board.Seal(ctx, nil)
		require.NoError(t, err, "Seal as the day's retention ends")
		require.Len(t, sealed, 1, "the closed week: %+v", sealed)
		require.Equal(t, "weekly", sealed[0].Window)
	})
}
