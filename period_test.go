package leaderboard

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// countingWindow is Daily, counting its Period calls.
type countingWindow struct {
	calls *atomic.Int64
}

func (w countingWindow) Name() string { return "daily" }
func (w countingWindow) Period(t time.Time) Period {
	w.calls.Add(1)
	return Daily().Period(t)
}

// TestCurrentPeriodCache checks that the current period is computed once
// per period, that a clock crossing a reset moves to the next period at
// once, and that reading older periods neither misses them nor evicts the
// current one.
func TestCurrentPeriodCache(t *testing.T) {
	be := testredis.Mini(t)
	ctx := context.Background()
	var calls atomic.Int64
	now := lastSecondAhead()
	var clock atomic.Pointer[time.Time]
	clock.Store(&now)
	name := be.BoardName(t)
	board, err := New(be.Client, name, WithWindows(countingWindow{&calls}),
		WithClock(func() time.Time { return *clock.Load() }), WithRetention(48*time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { be.Wipe(t, name) })

	_, err = board.Submit(ctx, "ann", 10)
	require.NoError(t, err)
	before := calls.Load()
	for range 50 {
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.EqualValues(t, 1, n)
		_, err = board.Rank(ctx, "ann")
		require.NoError(t, err)
	}
	require.Zero(t, calls.Load()-before, "Period called again within the same period")

	// One second later it is the next day: the new period is empty.
	next := now.Add(time.Second)
	clock.Store(&next)
	n, err := board.Count(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
	res, err := board.Submit(ctx, "bob", 5)
	require.NoError(t, err)
	require.Equal(t, Daily().Period(next).ID, res.Windows[0].Period)
	require.NotEqual(t, Daily().Period(now).ID, res.Windows[0].Period)

	// The older period reads as before, and reading it does not evict the
	// current one.
	before = calls.Load()
	for range 10 {
		old, err := board.Top(ctx, 10, At(now))
		require.NoError(t, err)
		require.Equal(t, []Entry{{Member: "ann", Score: 10, Rank: 1}}, old)
		cur, err := board.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []Entry{{Member: "bob", Score: 5, Rank: 1}}, cur)
	}
	require.EqualValues(t, 10, calls.Load()-before, "only the At reads should compute a period")

	// A clock going back (a test clock, a replay) still gets the period that
	// holds its time.
	clock.Store(&now)
	n, err = board.Count(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
}

// TestCurrentPeriodKeptOnReadAtOtherDay checks that a read At a later or
// an earlier day leaves the cached current period in place: the board
// computes the current period once a period (Leaderboard's doc), not
// again on every call without At after such a read.
func TestCurrentPeriodKeptOnReadAtOtherDay(t *testing.T) {
	be := testredis.Mini(t)
	ctx := context.Background()
	var calls atomic.Int64
	now := lastSecondAhead().Add(-12 * time.Hour)
	name := be.BoardName(t)
	board, err := New(be.Client, name, WithWindows(countingWindow{&calls}), WithClock(func() time.Time { return now }))
	require.NoError(t, err)
	t.Cleanup(func() { be.Wipe(t, name) })
	_, err = board.Submit(ctx, "ann", 1)
	require.NoError(t, err)
	for _, at := range []time.Time{now.Add(48 * time.Hour), now.Add(-24 * time.Hour)} {
		_, err = board.Top(ctx, 10, At(at))
		require.NoError(t, err)
		before := calls.Load()
		for range 20 {
			n, err := board.Count(ctx)
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
		}
		require.Zero(t, calls.Load()-before, "current period computed again after a read At %v", at)
	}
}

// milliWindow's periods last one millisecond, the shortest a key's
// expiry tells apart: the most steps a walk of its readable periods could
// take.
type milliWindow struct{ calls *atomic.Int64 }

func (milliWindow) Name() string { return "milli" }

func (w milliWindow) Period(t time.Time) Period {
	w.calls.Add(1)
	start := t.Truncate(time.Millisecond)
	return Period{ID: strconv.FormatInt(start.UnixMilli(), 10), Start: start, End: start.Add(time.Millisecond)}
}

// TestLivePeriodsWalkIsShort checks that under the default retention (one
// period length) the walk of readable periods (Periods, Remove, Delete...)
// lists the current period and the one before it, the only readable ones
// of a regular window, and asks the window about at most 64 instants,
// however short its periods, although it must look back far (a longer
// period further back could still be readable).
func TestLivePeriodsWalkIsShort(t *testing.T) {
	be := testredis.Mini(t)
	ctx := context.Background()
	now := lastSecondAhead().Add(-12 * time.Hour)
	var calls atomic.Int64
	for _, w := range []Window{countingWindow{&calls}, milliWindow{&calls}} {
		name := be.BoardName(t)
		board, err := New(be.Client, name, WithWindows(w), WithClock(func() time.Time { return now }))
		require.NoError(t, err)
		t.Cleanup(func() { be.Wipe(t, name) })
		cur := w.Period(now)
		want := []Period{cur, w.Period(cur.Start.Add(-time.Nanosecond))}
		calls.Store(0)
		ps, err := board.Periods(ctx)
		require.NoError(t, err)
		require.LessOrEqual(t, calls.Load(), int64(64), "%s: window asked %d times", w.Name(), calls.Load())
		got := make([]Period, len(ps))
		for i, p := range ps {
			got[i] = p.Period
		}
		require.Equal(t, want, got, w.Name())
	}
}

// TestShardKeysCache checks that a sharded board's period carries its
// shard keys, its own layout's and its shadow's, built with the period:
// the current period's kept with it in lb.current (a clock crossing a
// reset moves them on), an older period's (At) built for it without
// evicting the current one, and each read finding its own period's shards.
func TestShardKeysCache(t *testing.T) {
	be := testredis.Mini(t)
	ctx := context.Background()
	day1 := lastSecondAhead()
	day2 := day1.Add(time.Second)
	var clock atomic.Pointer[time.Time]
	clock.Store(&day1)
	name := be.BoardName(t)
	board, err := New(be.Client, name, WithWindows(Daily()), WithShards(10, 20), WithShadowShards(15),
		WithClock(func() time.Time { return *clock.Load() }), WithRetention(48*time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { be.Wipe(t, name) })
	sb := baseBackend(board.be).(*shardedBackend)
	kept := func() *target { return board.current[0].Load() }
	wantKeys := func(tg *target, day string) {
		t.Helper()
		require.Equal(t, day, tg.period.ID)
		require.Len(t, tg.shards, 3)
		for i, key := range tg.shards {
			require.Equal(t, sb.shards[i].Period("daily", day), key)
		}
		require.Len(t, tg.shadowShards, 2)
		for i, key := range tg.shadowShards {
			require.Equal(t, sb.shadow.shards[i].Period("daily", day), key)
		}
		require.Equal(t, tg.shards, sb.periodShardKeys(*tg))
		require.Equal(t, tg.shadowShards, sb.shadow.periodShardKeys(*tg))
	}

	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"ann": 5, "bob": 15, "cy": 25}))
	id1, id2 := Daily().Period(day1).ID, Daily().Period(day2).ID
	require.NotEqual(t, id1, id2)
	wantKeys(kept(), id1)
	clock.Store(&day2)
	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"dee": 12}))
	wantKeys(kept(), id2)
	for range 3 {
		old, err := board.Between(ctx, 0, 30, 10, At(day1))
		require.NoError(t, err)
		require.Equal(t, []Entry{{Member: "cy", Score: 25, Rank: 1}, {Member: "bob", Score: 15, Rank: 2}, {Member: "ann", Score: 5, Rank: 3}}, old)
		wantKeys(kept(), id2)
		cur, err := board.Between(ctx, 0, 30, 10)
		require.NoError(t, err)
		require.Equal(t, []Entry{{Member: "dee", Score: 12, Rank: 1}}, cur)
	}
	old := mustTarget(t, board, day1)
	wantKeys(&old, id1)
}

// lastSecondAhead is the last second of a UTC day two months ahead of
// today: a board clock that crosses a daily reset one second later and
// whose keys (their expiry set from it) a Redis's own clock has not yet
// expired, whenever the tests run. A date pinned in the calendar would be
// expired at once by a Redis once its retention lay behind today.
func lastSecondAhead() time.Time {
	return time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 2, 1).Add(-time.Second)
}

// mustTarget is the board's default window's period holding at.
func mustTarget(t *testing.T, lb *Leaderboard, at time.Time) target {
	t.Helper()
	tg, err := lb.target(lb.windows[0], at)
	require.NoError(t, err)
	return tg
}

// TestNewRefusesUnreachablePeriods: a window that would keep over
// maxLivePeriods periods readable at once (one-millisecond periods kept
// an hour: 3.6 million) took writes that no Delete, Remove or Periods could
// reach, each refusing once it had walked a million periods. New refuses
// it from the length of its current period; one kept a minute is taken.
func TestNewRefusesUnreachablePeriods(t *testing.T) {
	be := testredis.Mini(t)
	var calls atomic.Int64
	w := milliWindow{&calls}
	_, err := New(be.Client, be.BoardName(t), WithWindows(w), WithRetention(time.Hour))
	require.ErrorIs(t, err, ErrInvalidArgument)
	require.ErrorContains(t, err, "readable at once")
	_, err = New(be.Client, be.BoardName(t), WithWindows(w), WithClockSkew(time.Hour))
	require.ErrorIs(t, err, ErrInvalidArgument, "an hour of skew ahead")
	board, err := New(be.Client, be.BoardName(t), WithWindows(w), WithRetention(time.Minute))
	require.NoError(t, err)
	ps, err := board.Periods(context.Background())
	require.NoError(t, err)
	require.LessOrEqual(t, len(ps), 60_001+1_000, "a minute of retention and a second of skew")
}
