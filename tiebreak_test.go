package leaderboard

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var tbEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func mustComposite(t testing.TB, o TimeOrder, later bool) *composite {
	t.Helper()
	c, err := newComposite(o, later)
	require.NoError(t, err)
	return c
}

func TestCompositeConstructorGuards(t *testing.T) {
	_, err := newComposite(TimeOrder{Epoch: tbEpoch, Resolution: time.Millisecond, MaxScore: 1e6}, false)
	require.ErrorIs(t, err, ErrPrecision)
	require.ErrorContains(t, err, "MaxScore 1e+06")
	require.ErrorContains(t, err, "1ms")
	require.ErrorContains(t, err, "under one year")

	c := mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 1e6}, false)
	require.Equal(t, int64(1<<53)/1_000_001, c.slots)
	require.Equal(t, tbEpoch.Add(time.Duration(c.slots)*time.Second), c.Horizon())
	require.Greater(t, c.Horizon().Year(), 2300)

	c = mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: time.Millisecond, MaxScore: 1e5}, true)
	require.Equal(t, int64(1<<53)/100_001, c.slots)
	require.Equal(t, 2028, c.Horizon().Year())

	// The one-year line itself: the largest MaxScore whose horizon still
	// reaches a year after Epoch passes, the next refused.
	year := tbEpoch.AddDate(1, 0, 0).Sub(tbEpoch) / time.Second
	okMax := float64(1<<53/int64(year) - 1)
	mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: okMax}, false)
	_, err = newComposite(TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: okMax + 1}, false)
	require.ErrorIs(t, err, ErrPrecision)

	for name, o := range map[string]TimeOrder{
		"zero epoch":        {Resolution: time.Second, MaxScore: 10},
		"zero resolution":   {Epoch: tbEpoch, MaxScore: 10},
		"negative res":      {Epoch: tbEpoch, Resolution: -time.Second, MaxScore: 10},
		"zero max":          {Epoch: tbEpoch, Resolution: time.Second},
		"negative max":      {Epoch: tbEpoch, Resolution: time.Second, MaxScore: -1},
		"NaN max":           {Epoch: tbEpoch, Resolution: time.Second, MaxScore: math.NaN()},
		"Inf max":           {Epoch: tbEpoch, Resolution: time.Second, MaxScore: math.Inf(1)},
		"negative decimals": {Epoch: tbEpoch, Resolution: time.Second, MaxScore: 10, Decimals: -1},
		"16 decimals":       {Epoch: tbEpoch, Resolution: time.Second, MaxScore: 10, Decimals: 16},
	} {
		for _, ctor := range []func(TimeOrder) (TieBreak, error){EarlierFirst, LaterFirst} {
			tb, err := ctor(o)
			require.ErrorIs(t, err, ErrInvalidArgument, name)
			require.Nil(t, tb, "a failed constructor must return a nil interface: %s", name)
		}
	}
	_, err = newComposite(TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 1 << 53}, false)
	require.ErrorIs(t, err, ErrPrecision, "no room for time at all")
	_, err = newComposite(TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 0.001}, false)
	require.ErrorIs(t, err, ErrPrecision, "MaxScore below one step of Decimals")
	require.ErrorContains(t, err, "below one step of 0 decimals", "the error names what is wrong, not the room for time")

	// With Decimals, 2^51 steps and more: a float64 score does not hold
	// every one (FuzzComposite). Below that line, a long Resolution keeps
	// a year of horizon in four slots; from it, refused whatever the
	// Resolution.
	days := 24 * time.Hour
	c = mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: 100 * days, MaxScore: float64(1<<51-1) / 10, Decimals: 1}, false)
	require.Equal(t, int64(1<<51-1), c.maxS)
	require.Equal(t, int64(4), c.slots)
	_, err = newComposite(TimeOrder{Epoch: tbEpoch, Resolution: 400 * days, MaxScore: float64(1<<51) / 10, Decimals: 1}, false)
	require.ErrorIs(t, err, ErrPrecision, "2^51 steps of one decimal")
	require.ErrorContains(t, err, "2^51")
	c = mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: 400 * days, MaxScore: 1<<53 - 2}, false)
	require.Equal(t, int64(1), c.slots, "whole scores: every one up to 2^53 is a float64")
}

func TestCompositeSubmitGuards(t *testing.T) {
	c := mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 1000.5, Decimals: 2}, false)
	for _, ok := range []float64{0, 12.34, -12.34, 1000.5, -1000.5, 0.01, 999.99} {
		s, err := c.scaled(ok)
		require.NoError(t, err, ok)
		back, _ := c.decode(c.encode(s, 0, true), true)
		require.Equal(t, ok, back)
	}
	for _, bad := range []float64{1000.51, -1000.51, 12.345, 0.001, 1e-9, 1e300} {
		_, err := c.scaled(bad)
		require.ErrorIs(t, err, ErrPrecision, "%v", bad)
	}
	_, err := c.slot(tbEpoch)
	require.NoError(t, err)
	last, err := c.slot(c.Horizon().Add(-time.Nanosecond))
	require.NoError(t, err)
	require.Equal(t, c.slots-1, last)
	_, err = c.slot(tbEpoch.Add(-time.Nanosecond))
	require.ErrorIs(t, err, ErrPrecision)
	_, err = c.slot(c.Horizon())
	require.ErrorIs(t, err, ErrPrecision)
}

// TestCompositeSumOfScaled: a float64 running sum of scores of Decimals
// fraction digits (as a store adds an Accumulate board's submissions) is
// taken back to the exact sum Redis holds as integers, which scaled then
// takes: 0.1 + 0.2, and long random sums whose totals stay within
// MaxScore, as Redis keeps them.
func TestCompositeSumOfScaled(t *testing.T) {
	c := mustComposite(t, TimeOrder{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 1}, false)
	a, b := 0.1, 0.2 // variables: Go adds constants exactly
	_, err := c.scaled(a + b)
	require.ErrorIs(t, err, ErrPrecision, "the float64 sum as it is")
	s, err := c.scaled(c.sumOfScaled(a + b))
	require.NoError(t, err)
	require.Equal(t, int64(3), s)
	for _, o := range []TimeOrder{
		{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 1},
		{Epoch: tbEpoch, Resolution: time.Minute, MaxScore: 1e7, Decimals: 3},
	} {
		c := mustComposite(t, o, false)
		rng := rand.New(rand.NewPCG(uint64(o.Decimals), 7))
		var exact int64
		var total float64
		for i := range 200000 {
			v := rng.Int64N(2*c.maxS+1) - c.maxS
			if a := exact + v; a > c.maxS || a < -c.maxS {
				continue // Redis refuses a total beyond MaxScore
			}
			exact += v
			total += float64(v) / c.scale
			got, err := c.scaled(c.sumOfScaled(total))
			require.NoError(t, err, "step %d", i)
			require.Equal(t, exact, got, "step %d: %v", i, total)
		}
	}
}

// TestCompositeOrder checks that comparing composites is comparing (score,
// time) under the rule, for both orders and both rules, at the edges of the
// range and at random.
func TestCompositeOrder(t *testing.T) {
	const seed = 20261130
	rng := rand.New(rand.NewPCG(seed, seed))
	for _, o := range []TimeOrder{
		{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 1e6},
		{Epoch: tbEpoch, Resolution: time.Second, MaxScore: 99999.99, Decimals: 2},
		{Epoch: tbEpoch, Resolution: time.Hour, MaxScore: 1e12},
	} {
		for _, later := range []bool{false, true} {
			c := mustComposite(t, o, later)
			scores := []int64{-c.maxS, -c.maxS + 1, -1, 0, 1, c.maxS - 1, c.maxS}
			slots := []int64{0, 1, c.slots / 2, c.slots - 2, c.slots - 1}
			for i := 0; i < 3000; i++ {
				scores = append(scores, rng.Int64N(2*c.maxS+1)-c.maxS)
				slots = append(slots, rng.Int64N(c.slots))
			}
			for _, high := range []bool{true, false} {
				for i := range scores {
					j := rng.IntN(len(scores))
					a, b := scores[i], scores[j]
					ta, tb := slots[i%len(slots)], slots[j%len(slots)]
					ca, cb := c.encode(a, ta, high), c.encode(b, tb, high)
					require.Less(t, math.Abs(ca), float64(1<<53), "composite must stay exact")

					// want: does (a, ta) rank strictly before (b, tb)?
					want := (high && a > b) || (!high && a < b)
					if a == b {
						want = (!later && ta < tb) || (later && ta > tb)
					}
					got := (high && ca > cb) || (!high && ca < cb)
					require.Equal(t, want, got, "seed %d: %v high=%v later=%v (%d,%d) vs (%d,%d)", seed, o, high, later, a, ta, b, tb)

					for _, pair := range [][2]int64{{a, ta}, {b, tb}} {
						enc := c.encode(pair[0], pair[1], high)
						score, slot := c.decode(enc, high)
						require.Equal(t, float64(pair[0])/c.scale, score)
						require.Equal(t, pair[1], slot)
					}
				}
			}
		}
	}
}

// FuzzComposite drives the encoder with arbitrary settings, scores and
// times: whatever the constructor accepts must encode exactly, decode back
// to the same score and slot, and order as (score, time) under the rule;
// and every scaled score it holds (an Accumulate total reaches any, from
// ta) must decode to a plain score that scales back to it, as a read
// reports it and a store, a Rebuild or a resubmission takes it back.
// Its seed corpus is in testdata/fuzz/FuzzComposite.
func FuzzComposite(f *testing.F) {
	f.Add(1e6, uint8(0), int64(time.Second), 12.0, int64(100), 12.0, int64(200), false, true)
	f.Add(99999.99, uint8(2), int64(time.Second), 12.34, int64(5), -0.5, int64(5), true, false)
	// Three slots of 400 days: 265384.8371508836 was refused as having
	// more than 10 fraction digits; one slot: two totals read as one score.
	f.Add(265384.8371509351, uint8(10), int64(400*24*time.Hour), 1.0, int64(5307696743018187), 1.0, int64(0), false, true)
	f.Add(5.980645282782323e+08, uint8(7), int64(400*24*time.Hour), 1.0, int64(464), 1.0, int64(0), false, true)
	f.Fuzz(func(t *testing.T, maxScore float64, decimals uint8, res int64, a float64, ta int64, b float64, tb int64, later, high bool) {
		c, err := newComposite(TimeOrder{Epoch: tbEpoch, Resolution: time.Duration(res), MaxScore: maxScore, Decimals: int(decimals)}, later)
		if err != nil {
			if !errors.Is(err, ErrPrecision) && !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("constructor error matches no sentinel: %v", err)
			}
			return
		}
		s := mod(ta, 2*c.maxS+1) - c.maxS
		plain, _ := c.decode(c.encode(s, mod(tb, c.slots), high), high)
		if back, err := c.scaled(plain); err != nil || back != s {
			t.Fatalf("%v: scaled score %d reads as %v, which scales to %d (%v)", c, s, plain, back, err)
		}
		sa, errA := c.scaled(a)
		sb, errB := c.scaled(b)
		if errA != nil || errB != nil {
			return
		}
		ta, tb = mod(ta, c.slots), mod(tb, c.slots)
		ca, cb := c.encode(sa, ta, high), c.encode(sb, tb, high)
		if math.Abs(ca) >= 1<<53 || math.Abs(cb) >= 1<<53 || ca != math.Trunc(ca) {
			t.Fatalf("inexact composite %v / %v for %v", ca, cb, c)
		}
		if got, slot := c.decode(ca, high); got != a && !(a == 0 && got == 0) || slot != ta {
			t.Fatalf("%v: (%v, %d) decodes as (%v, %d)", c, a, ta, got, slot)
		}
		want := (high && a > b) || (!high && a < b)
		if a == b {
			want = (!later && ta < tb) || (later && ta > tb)
		}
		if got := (high && ca > cb) || (!high && ca < cb); got != want {
			t.Fatalf("%v high=%v: (%v,%d) before (%v,%d) = %v, want %v", c, high, a, ta, b, tb, got, want)
		}
	})
}

func mod(x, m int64) int64 {
	x %= m
	if x < 0 {
		x += m
	}
	return x
}

// TestTieBreakSlotsCountFromTheEpoch pins the slots a stored value holds:
// they count from the Epoch itself, as every version of the SDK wrote them
// (a board's values must not change with the version: processes of two
// versions write one board in a rolling deploy, and Verify compares the
// store's values with Redis's exactly). Counting from the Epoch cut to the
// microsecond put a whole-second stamp one slot later than an older
// process did, on a board whose Epoch lies inside a microsecond: the two
// ordered the same instant differently and Verify reported every member.
// Only a stamp in the Epoch's microsecond before the Epoch itself, which
// was refused, counts as the Epoch.
func TestTieBreakSlotsCountFromTheEpoch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		epoch time.Time
		at    time.Duration // after t0
		want  int64
	}{
		{t0, 0, 0},
		{t0, 10 * time.Second, 10},
		{t0.Add(500 * time.Nanosecond), 0, 0}, // in the Epoch's microsecond
		{t0.Add(500 * time.Nanosecond), time.Microsecond, 0},
		{t0.Add(500 * time.Nanosecond), time.Second, 0},
		{t0.Add(500 * time.Nanosecond), time.Second + time.Microsecond, 1},
		{t0.Add(500 * time.Nanosecond), 10 * time.Second, 9},
	} {
		tb, err := newComposite(TimeOrder{Epoch: c.epoch, Resolution: time.Second, MaxScore: 1e6}, false)
		require.NoError(t, err)
		got, err := tb.slot(t0.Add(c.at))
		require.NoError(t, err, "%v after %v", c.at, c.epoch)
		require.Equal(t, c.want, got, "%v after %v", c.at, c.epoch)
		_, err = tb.slot(t0.Add(-time.Microsecond))
		require.ErrorIs(t, err, ErrPrecision)
		require.Equal(t, c.epoch.Add(time.Duration(tb.slots)*time.Second), tb.Horizon())
	}
}
