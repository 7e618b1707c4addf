package leaderboard

import (
	"context"
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
	now := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
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
	require.Equal(t, "2026-12-01", res.Windows[0].Period)

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

// TestShardKeysCache checks that a sharded board keeps the shard keys of
// each window's latest period only: reads of an older period (At) get
// that period's shards without evicting the current one's, and a clock
// crossing a reset moves the kept keys to the new period.
func TestShardKeysCache(t *testing.T) {
	be := testredis.Mini(t)
	ctx := context.Background()
	day1 := time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)
	day2 := day1.Add(time.Second)
	var clock atomic.Pointer[time.Time]
	clock.Store(&day1)
	name := be.BoardName(t)
	board, err := New(be.Client, name, WithWindows(Daily()), WithShards(10, 20),
		WithClock(func() time.Time { return *clock.Load() }), WithRetention(48*time.Hour))
	require.NoError(t, err)
	t.Cleanup(func() { be.Wipe(t, name) })
	sb := board.be.(*shardedBackend)
	kept := func() string { return sb.periodKeys["daily"].Load().period.ID }

	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"ann": 5, "bob": 15, "cy": 25}))
	require.Equal(t, "2026-11-30", kept())
	clock.Store(&day2)
	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"dee": 12}))
	require.Equal(t, "2026-12-01", kept(), "a new period's keys replace the old")
	for range 3 {
		old, err := board.Between(ctx, 0, 30, 10, At(day1))
		require.NoError(t, err)
		require.Equal(t, []Entry{{Member: "cy", Score: 25, Rank: 1}, {Member: "bob", Score: 15, Rank: 2}, {Member: "ann", Score: 5, Rank: 3}}, old)
		require.Equal(t, "2026-12-01", kept(), "an older period's read must not evict the current keys")
		cur, err := board.Between(ctx, 0, 30, 10)
		require.NoError(t, err)
		require.Equal(t, []Entry{{Member: "dee", Score: 12, Rank: 1}}, cur)
	}
	for i, key := range sb.periodShardKeys(mustTarget(t, board, day2)) {
		require.Equal(t, sb.shards[i].Period("daily", "2026-12-01"), key)
	}
}

// mustTarget is the board's default window's period holding at.
func mustTarget(t *testing.T, lb *Leaderboard, at time.Time) target {
	t.Helper()
	tg, err := lb.target(lb.windows[0], at)
	require.NoError(t, err)
	return tg
}
