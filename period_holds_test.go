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
// gives s1 for the instants over a day before its start too, as if s1
// held them: a window's bug, which the board must refuse.
type lastSeason struct {
	start  time.Time
	claims bool
}

func (lastSeason) Name() string { return "season" }

func (w lastSeason) Period(t time.Time) lb.Period {
	if t.Before(w.start) && !(w.claims && t.Before(w.start.Add(-24*time.Hour))) {
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
// no key; New refuses such a window when its period of now is one, and
// a write At an instant where the window goes wrong is refused. A window
// whose last period never ends is fine.
func TestPeriodWithoutEndMustHoldTheInstant(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		start := future.Add(time.Hour)
		store := newMemStore()
		_, err := lb.New(b.Client, b.BoardName(t), lb.WithWindows(lastSeason{start: start, claims: true}), lb.WithStore(store),
			lb.WithClock(fixed(start.Add(-48*time.Hour))))
		require.ErrorIs(t, err, lb.ErrInvalidArgument, "its period of now does not hold now")
		board, name := newBoard(t, b, lb.WithWindows(lastSeason{start: start, claims: true}), lb.WithStore(store),
			lb.WithClock(fixed(future)))
		claimed := start.Add(-48 * time.Hour)
		_, err = board.Submit(ctx, "m", 5, lb.WithTime(claimed))
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
		require.ErrorIs(t, board.Set(ctx, "m", 5, lb.At(claimed)), lb.ErrInvalidArgument)
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
