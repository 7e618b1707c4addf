package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// centuries is a window of 200-year periods: [1900, 2100), [2100, 2300)...
type centuries struct{}

func (centuries) Name() string { return "era" }

func (centuries) Period(t time.Time) lb.Period {
	start := 1900 + (t.Year()-1900)/200*200
	if t.Year() < 1900 {
		start -= 200
	}
	s, e := time.Date(start, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(start+200, 1, 1, 0, 0, 0, 0, time.UTC)
	return lb.Period{ID: "e" + s.Format("2006"), Start: s, End: e}
}

// TestCurrentPeriodStartedLongAgo: the current period of a window may
// have started more than a century (the walk's look-back) before now. The
// walk of readable periods asked the window about an instant after that
// start, inside the current period, under the default retention, and
// refused the window: Rebuild, Remove, Delete, Verify and Periods failed
// with ErrInvalidArgument on a board whose Submit had written Redis and
// the store, so no Rebuild could bring its scores back.
func TestCurrentPeriodStartedLongAgo(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		store := newMemStore()
		board, name := newBoard(t, b, lb.WithWindows(centuries{}), lb.WithStore(store), lb.WithClock(fixed(future)))
		_, err := board.Submit(ctx, "m", 5)
		require.NoError(t, err)
		ps, err := board.Periods(ctx)
		require.NoError(t, err)
		var ids []string
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		require.Equal(t, []string{"e1900", "e1700"}, ids, "e1700 is kept its length, 200 years, after it ended")
		b.Wipe(t, name)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		top, err := board.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []lb.Entry{{Member: "m", Score: 5, Rank: 1}}, top)
		require.NoError(t, board.Remove(ctx, "m"))
		require.NoError(t, board.Delete(ctx))
	})
}
