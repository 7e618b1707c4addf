package leaderboard

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FuzzScoreBounds: atLeast is the smallest scaled score whose plain score
// (as decode reports it) is x or more, atMost the largest that is x or
// less, for any finite x, within one step beyond MaxScore.
func FuzzScoreBounds(f *testing.F) {
	for _, seed := range []struct {
		x        float64
		decimals int
		max      float64
	}{{0, 0, 1000}, {0.5, 0, 1000}, {-0.5, 0, 1000}, {0.005, 2, 1000}, {-12.345, 2, 1000}, {1e9, 2, 1000},
		{-1e300, 3, 5e4}, {4999.95, 1, 5e4}, {0.1 + 0.2, 1, 5e4}, {5e-324, 15, 1}} {
		f.Add(seed.x, seed.decimals, seed.max)
	}
	f.Fuzz(func(t *testing.T, x float64, decimals int, maxScore float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		o := TimeOrder{Epoch: time.Unix(0, 0), Resolution: time.Hour, MaxScore: maxScore, Decimals: decimals}
		c, err := newComposite(o, false)
		if err != nil {
			return
		}
		lo, hi := c.atLeast(x), c.atMost(x)
		lim := c.maxS + 1
		require.True(t, lo >= -lim && lo <= lim && hi >= -lim && hi <= lim, "x=%v: %d, %d beyond ±%d", x, lo, hi, lim)
		plain := func(s int64) float64 { return float64(s) / c.scale }
		// Clamped one step beyond MaxScore, a bound is beyond every score
		// the board stores.
		if lo < lim {
			require.GreaterOrEqual(t, plain(lo), x, "atLeast(%v) = %d", x, lo)
		}
		if lo > -lim {
			require.Less(t, plain(lo-1), x, "atLeast(%v) = %d is not the smallest", x, lo)
		}
		if hi > -lim {
			require.LessOrEqual(t, plain(hi), x, "atMost(%v) = %d", x, hi)
		}
		if hi < lim {
			require.Greater(t, plain(hi+1), x, "atMost(%v) = %d is not the largest", x, hi)
		}
		require.LessOrEqual(t, hi, lo, "x=%v: atMost %d beyond atLeast %d", x, hi, lo)
		require.LessOrEqual(t, lo-hi, int64(1), "x=%v: a scaled score between atMost %d and atLeast %d", x, hi, lo)
	})
}
