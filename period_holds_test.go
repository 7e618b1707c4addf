package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// lastSeason is a window of seasons whose last one never ends: "s0" until
// its start, then "s1" from it on, without an End. With claims set it
// gives s1 for every instant, as if s1 held the instants before its start
// too: a window's bug, which the board must refuse.
type lastSeason struct {
	start  time.Time
	claims bool
}

func (lastSeason) Name() string { return "season" }

func (w lastSeason) Period(t time.Time) lb.Period {
	if t.Before(w.start) && !w.claims {
		return lb.Period{ID: "s0", End: w.start}
	}
	return lb.Period{ID: "s1", Start: w.start}
}

// TestPeriodWithoutEndMustHoldTheInstant: a period that never ends must
// still hold the instant it was given for, as one that ends must. A window
// that gave a never-ending period starting after the submission's time was
// taken: Submit wrote the score into that period in Redis and appended it
// to the store, where no Rebuild could find it (the store counts the
// period from its start on), and Rebuild, Remove and Delete then failed on
// the window. Bad input writes nothing: ErrInvalidArgument, no store row,
// no key. A window whose last period never ends is fine.
func TestPeriodWithoutEndMustHoldTheInstant(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		start := future.Add(time.Hour)
		store := newMemStore()
		board, name := newBoard(t, b, lb.WithWindows(lastSeason{start: start, claims: true}), lb.WithStore(store),
			lb.WithClock(fixed(future)))
		_, err := board.Submit(ctx, "m", 5)
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
		require.ErrorIs(t, board.Set(ctx, "m", 5), lb.ErrInvalidArgument)
		require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"m": 5}), lb.ErrInvalidArgument)
		require.Zero(t, store.count(), "no store row")
		require.Empty(t, b.Snapshot(t, name), "no key")

		good, name := newBoard(t, b, lb.WithWindows(lastSeason{start: start}), lb.WithStore(store),
			lb.WithClock(fixed(start.Add(time.Hour))))
		_, err = good.Submit(ctx, "m", 5)
		require.NoError(t, err)
		_, err = good.Submit(ctx, "early", 3, lb.WithTime(future))
		require.NoError(t, err)
		b.Wipe(t, name)
		_, err = good.Rebuild(ctx)
		require.NoError(t, err)
		top, err := good.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []lb.Entry{{Member: "m", Score: 5, Rank: 1}}, top)
	})
}
