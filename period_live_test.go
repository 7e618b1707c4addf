package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// seasonWindow is a user's window of seasons of uneven lengths: a long
// season s1 [b1-90d, b1), a short event s2 [b1, b1+5d), then s3 of 1000
// days; before s1, seasons of 90 days.
type seasonWindow struct{ b1 time.Time }

func (seasonWindow) Name() string { return "season" }

func (w seasonWindow) Period(t time.Time) lb.Period {
	d := 24 * time.Hour
	s1, s2, s3 := w.b1.Add(-90*d), w.b1, w.b1.Add(5*d)
	switch {
	case t.Before(s1):
		n := int(s1.Sub(t)/(90*d)) + 1
		st := s1.Add(-time.Duration(n) * 90 * d)
		if !t.Before(st.Add(90 * d)) {
			st = st.Add(90 * d)
		}
		return lb.Period{ID: "old" + st.UTC().Format("20060102"), Start: st, End: st.Add(90 * d)}
	case t.Before(s2):
		return lb.Period{ID: "s1", Start: s1, End: s2}
	case t.Before(s3):
		return lb.Period{ID: "s2", Start: s2, End: s3}
	}
	return lb.Period{ID: "s3", Start: s3, End: s3.Add(1000 * d)}
}

// TestReadablePeriodsOfUnevenLengths checks that, under the default
// retention (one period length), a long season still readable after the
// short event that followed it has expired is one of the window's
// readable periods: Periods lists it (and not the expired event), Remove
// takes a member off it and Delete removes its key. The walk of readable
// periods must not stop at the first expired period it meets.
func TestReadablePeriodsOfUnevenLengths(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		w := seasonWindow{b1: future}
		clock := &testClock{now: future.Add(-10 * 24 * time.Hour)} // in s1
		board, name := newBoard(t, b, lb.WithWindows(w), lb.WithClock(clock.Now))
		_, err := board.Submit(ctx, "cheater", 100)
		require.NoError(t, err)
		clock.Set(future.Add(20 * 24 * time.Hour)) // s3; s2 expired at b1+10d, s1 expires at b1+90d
		inS1 := future.Add(-time.Hour)
		st, err := board.Rank(ctx, "cheater", lb.At(inS1))
		require.NoError(t, err, "s1 is still readable")
		require.Equal(t, 100.0, st.Score)
		_, err = board.Rank(ctx, "cheater", lb.At(future.Add(time.Hour)))
		require.ErrorIs(t, err, lb.ErrExpired, "s2 is not")

		ps, err := board.Periods(ctx)
		require.NoError(t, err)
		ids := []string{}
		for _, p := range ps {
			ids = append(ids, p.ID)
		}
		assert.Equal(t, []string{"s3", "s1"}, ids, "Periods lists every readable period, newest first")

		require.NoError(t, board.Remove(ctx, "cheater"))
		_, err = board.Rank(ctx, "cheater", lb.At(inS1))
		assert.ErrorIs(t, err, lb.ErrNotRanked, "Remove reaches every readable period")

		_, err = board.Submit(ctx, "again", 5, lb.WithTime(inS1))
		require.NoError(t, err)
		require.NoError(t, board.Delete(ctx))
		assert.Empty(t, boardKeys(t, b, name), "Delete removes every readable period")
	})
}
