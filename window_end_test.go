package leaderboard_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// lastInstant is the last instant a time.Time holds, in year 292277024627:
// time.Unix(s) of s up to a month below math.MaxInt64-62135596800 (what a
// server may build from a client's "at" in seconds) lies in the last
// month before it.
var lastInstant = time.Unix(math.MaxInt64-62135596800, 999_999_999)

// TestCalendarPeriodAtTheEndOfTime: the built-in windows answer for every
// instant up to the last one a time.Time holds, with a period that holds
// it and meets the one before. Period looked for the period after the
// last one, whose start lies beyond that instant, forever: the date
// arithmetic stops there (Add) or wraps to the past (AddDate), so a read
// At such an instant, or New on such a clock, never returned. The last
// period now has no End.
func TestCalendarPeriodAtTheEndOfTime(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	require.NoError(t, err)
	windows := []lb.Window{lb.Daily(), lb.Weekly(), lb.Monthly(), lb.DailyIn(ny), lb.WeeklyIn(ny), lb.MonthlyIn(ny), lb.DailyIn(tokyo), lb.MonthlyIn(tokyo)}
	for _, w := range windows {
		for back := time.Duration(0); back < 40*24*time.Hour; back += 5 * time.Hour {
			at := lastInstant.Add(-back)
			p := w.Period(at)
			require.False(t, at.Before(p.Start), "%s: %v before its period %q's start %v", w.Name(), at, p.ID, p.Start)
			if !p.End.IsZero() {
				require.True(t, at.Before(p.End), "%s: %v not before its period %q's end %v", w.Name(), at, p.ID, p.End)
				require.Equal(t, p.ID, w.Period(p.End.Add(-time.Nanosecond)).ID, "%s: %v", w.Name(), at)
			}
			prev := w.Period(p.Start.Add(-time.Nanosecond))
			require.Equal(t, p.Start, prev.End, "%s: the period before %q (%v) does not end at its start", w.Name(), p.ID, at)
			require.NotEqual(t, p.ID, prev.ID, "%s: %v", w.Name(), at)
		}
		require.True(t, w.Period(lastInstant).End.IsZero(), "%s: the last period ends", w.Name())
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, _ := newBoard(t, b, lb.WithWindows(lb.Daily(), lb.Weekly(), lb.Monthly()))
		for _, w := range []lb.Window{lb.Daily(), lb.Weekly(), lb.Monthly()} {
			es, err := board.Top(ctx, 3, lb.In(w), lb.At(lastInstant))
			require.NoError(t, err, w.Name())
			require.Empty(t, es, w.Name())
		}
		_, err := lb.New(b.Client, b.BoardName(t), lb.WithWindows(lb.Monthly()), lb.WithClock(fixed(lastInstant)))
		require.NoError(t, err, "New on a clock at the last instant")
	})
}
