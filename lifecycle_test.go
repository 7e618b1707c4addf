package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestLifecycle walks a board through its life on every backend, plain and
// sharded (with a shadow layout, so that both layouts go), with and without
// a store: Periods lists the readable periods with their counts, Remove
// reaches the retained ones, Reset empties today alone, a Rebuild keeps
// both, and Delete leaves no key behind and nothing a Rebuild could bring
// back.
func TestLifecycle(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range []string{"plain", "sharded"} {
			for _, stored := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/store=%v", kind, stored), func(t *testing.T) {
					runLifecycle(t, b, kind == "sharded", stored)
				})
			}
		}
	})
}

// lifecycleCounts reads Periods of the daily window as counts, newest first.
func lifecycleCounts(t *testing.T, board *lb.Leaderboard) []int64 {
	t.Helper()
	ps, err := board.Periods(context.Background(), lb.In(lb.Daily()))
	require.NoError(t, err)
	out := make([]int64, len(ps))
	for i, p := range ps {
		out[i] = p.Members
	}
	return out
}

func runLifecycle(t *testing.T, b *testredis.Backend, sharded, stored bool) {
	ctx := context.Background()
	clock := future // today, noon
	day0, day1 := clock.Add(-48*time.Hour), clock.Add(-24*time.Hour)
	name := shardName(t, b)
	opts := []lb.Option{lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRetention(48 * time.Hour),
		lb.WithClock(func() time.Time { return clock })}
	if sharded {
		opts = append(opts, lb.WithShards(0, 10), lb.WithShadowShards(5))
	}
	var store *memStore
	if stored {
		store = newMemStore()
		opts = append(opts, lb.WithStore(store))
	}
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	for _, s := range []struct {
		m     string
		score float64
		at    time.Time
	}{{"a", 5, day0}, {"b", 7, day1}, {"c", 12, day1}, {"a", 3, clock}, {"d", 20, clock}} {
		_, err := board.Submit(ctx, s.m, s.score, lb.WithTime(s.at))
		require.NoError(t, err)
	}

	ps, err := board.Periods(ctx, lb.In(lb.Daily()))
	require.NoError(t, err)
	require.Len(t, ps, 3, "today and the two days within the retention")
	for i, at := range []time.Time{clock, day1, day0} {
		require.Equal(t, lb.Daily().Period(at), ps[i].Period)
	}
	require.Equal(t, []int64{2, 2, 1}, lifecycleCounts(t, board))
	all, err := board.Periods(ctx)
	require.NoError(t, err)
	require.Equal(t, []lb.PeriodInfo{{Period: lb.AllTime().Period(clock), Members: 4}}, all, "the default window: all time")
	_, err = board.Periods(ctx, lb.At(day1))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)

	// Remove reaches the retained day too.
	require.NoError(t, board.Remove(ctx, "c"))
	require.Equal(t, []int64{2, 1, 1}, lifecycleCounts(t, board))
	_, err = board.Rank(ctx, "c", lb.In(lb.Daily()), lb.At(day1))
	require.ErrorIs(t, err, lb.ErrNotRanked, "removed from yesterday's board")

	// Reset: today's day alone, and refused with At or a store that fails.
	for _, q := range [][]lb.Query{{lb.In(lb.Daily()), lb.At(day1)}, {lb.At(clock)}, {nil}} {
		require.ErrorIs(t, board.Reset(ctx, q...), lb.ErrInvalidArgument)
	}
	if stored {
		store.fail = errors.New("store down")
		err := board.Reset(ctx, lb.In(lb.Daily()))
		require.ErrorContains(t, err, "store down")
		require.NotErrorIs(t, err, lb.ErrPending, "the store refused: Redis untouched")
		require.ErrorContains(t, board.Delete(ctx), "store down")
		store.fail = nil
	}
	require.Equal(t, []int64{2, 1, 1}, lifecycleCounts(t, board), "a refused Reset wrote nothing")
	require.NoError(t, board.Reset(ctx, lb.In(lb.Daily())))
	require.Equal(t, []int64{0, 1, 1}, lifecycleCounts(t, board))
	n, err := board.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(3), n, "all time is another window: untouched")
	_, err = board.Submit(ctx, "e", 1)
	require.NoError(t, err)
	require.Equal(t, []int64{1, 1, 1}, lifecycleCounts(t, board), "after a reset, submissions count afresh")
	if sharded {
		reps, err := board.Check(ctx, false)
		require.NoError(t, err)
		for _, r := range reps {
			require.True(t, r.Clean(), "%+v", r)
		}
	}

	if stored {
		views := [][]lb.Query{nil, {lb.In(lb.Daily())}, {lb.In(lb.Daily()), lb.At(day1)}, {lb.In(lb.Daily()), lb.At(day0)}}
		before := boardView(t, board, views...)
		b.Wipe(t, name)
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		require.Equal(t, before, boardView(t, board, views...), "Rebuild keeps the removal and the reset")
	}

	require.NoError(t, board.Delete(ctx))
	require.Empty(t, boardKeys(t, b, name), "Delete left keys")
	require.Equal(t, []int64{0, 0, 0}, lifecycleCounts(t, board))
	present, err := board.Present(ctx)
	require.NoError(t, err)
	require.False(t, present, "Delete takes Rebuild's marker too")
	if stored {
		_, err := board.Rebuild(ctx)
		require.NoError(t, err)
		require.Equal(t, []int64{0, 0, 0}, lifecycleCounts(t, board), "a Rebuild brings nothing back")
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
		require.NoError(t, board.Delete(ctx))
	}
}

// minuteWindow is a window of one minute: with a week's retention it holds
// over 10,000 readable periods.
type minuteWindow struct{}

func (minuteWindow) Name() string { return "minute" }

func (minuteWindow) Period(t time.Time) lb.Period {
	start := t.Truncate(time.Minute)
	return lb.Period{ID: start.UTC().Format("20060102-1504"), Start: start, End: start.Add(time.Minute)}
}

// stuckWindow's periods are hours from two hours before future on, and
// never move back before that: the period before them starts earlier but
// ends where the clock is, which a walk of the readable periods must
// refuse. New, which looks at the periods around now, takes it.
type stuckWindow struct{}

func (stuckWindow) Name() string { return "stuck" }

func (stuckWindow) Period(t time.Time) lb.Period {
	if t.Before(future.Add(-2 * time.Hour)) {
		return lb.Period{ID: "p", Start: future.Add(-3 * time.Hour), End: future.Add(time.Hour)}
	}
	start := t.Truncate(time.Hour)
	return lb.Period{ID: start.UTC().Format("2006010215"), Start: start, End: start.Add(time.Hour)}
}

// TestEveryReadablePeriod: Periods lists every readable period of a window
// however many (a minute window kept a week: 10,081), and Remove reaches
// the oldest of them; a window whose periods do not move back is refused
// with ErrInvalidArgument, not walked in silence.
func TestEveryReadablePeriod(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, _ := newBoard(t, b, lb.WithWindows(minuteWindow{}), lb.WithRetention(7*24*time.Hour), lb.WithClock(fixed(future)))
		old := future.Add(-7*24*time.Hour + 30*time.Second)
		_, err := board.Submit(ctx, "cheater", 10, lb.WithTime(old))
		require.NoError(t, err)
		ps, err := board.Periods(ctx)
		require.NoError(t, err)
		require.Equal(t, 7*24*60+1, len(ps), "readable periods")
		require.Equal(t, minuteWindow{}.Period(old).ID, ps[len(ps)-1].ID)
		require.Equal(t, int64(1), ps[len(ps)-1].Members)
		require.NoError(t, board.Remove(ctx, "cheater"))
		_, err = board.Rank(ctx, "cheater", lb.At(old))
		require.ErrorIs(t, err, lb.ErrNotRanked, "Remove reaches the oldest readable period")

		stuck, _ := newBoard(t, b, lb.WithWindows(stuckWindow{}), lb.WithRetention(3*time.Hour), lb.WithClock(fixed(future)))
		_, err = stuck.Periods(ctx)
		require.ErrorIs(t, err, lb.ErrInvalidArgument)
		require.ErrorIs(t, stuck.Remove(ctx, "m"), lb.ErrInvalidArgument)
	})
}

// TestDeleteLongRetention deletes a sharded board kept for months: it
// names every readable period's shards and partitions (on a Cluster each
// shard's recent versions too), 600,000 keys on one node and over two
// million on a Cluster, which it sends in pipelines of about UnlinkChunk
// keys each. One pipeline of them all missed the client's write timeout
// on a daily board kept for three years on a Cluster, and held every key
// name in memory at once. The keys of every period go, the oldest one's
// included, in the round trips Delete's doc comment counts (deleteTrips),
// by which its example, a daily board of 8 shards kept for a year, takes 4
// on one node and 15 on a Cluster.
func TestDeleteLongRetention(t *testing.T) {
	require.Equal(t, 4, deleteTrips(366, 8, false), "Delete's example on one node")
	require.Equal(t, 15, deleteTrips(366, 8, true), "Delete's example on a Cluster")
	require.Equal(t, 4, deleteTrips(367, 8, false), "Delete's example on one node, a period ahead")
	require.Equal(t, 15, deleteTrips(367, 8, true), "Delete's example on a Cluster, a period ahead")
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := shardName(t, b)
		widest := &widestPipeline{Client: b.Client}
		board, err := lb.New(widest, name, lb.WithWindows(lb.Daily()), lb.WithShards(0, 10), lb.WithShadowShards(5),
			lb.WithRetention(150*24*time.Hour), lb.WithClock(fixed(future)))
		require.NoError(t, err)
		for i, at := range []time.Time{future, future.Add(-30 * 24 * time.Hour), future.Add(-149 * 24 * time.Hour)} {
			_, err := board.Submit(ctx, fmt.Sprintf("m%d", i), float64(i*7), lb.WithTime(at))
			require.NoError(t, err)
		}
		require.NotEmpty(t, b.Snapshot(t, name))
		periods, err := board.Periods(ctx)
		require.NoError(t, err)
		require.Len(t, periods, 151, "the daily periods kept 150 days")
		before := b.Client.Calls()
		require.NoError(t, board.Delete(ctx))
		require.Equal(t, int64(deleteTrips(len(periods), 3+2, b.Name == "cluster")), b.Client.Calls()-before,
			"Delete's round trips: 3 shards and 2 shadow shards a period")
		require.Empty(t, b.Snapshot(t, name), "every key of the board is gone")
		require.LessOrEqual(t, widest.args.Load(), int64(lb.UnlinkChunk+25_000),
			"a pipeline names at most about UnlinkChunk keys (a period's keys are sent whole)")
	})
}

// deleteTrips is the round trips Delete's doc comment gives a sharded
// board without a hot top, of periods readable periods and shards shards a
// period (both layouts'): it names each period's shards (on a Cluster each
// with its 2,048 recent versions) and 4,096 partitions whole, and sends
// them in DoMultis of about UnlinkChunk keys, one after another, a DoMulti
// sent once it holds UnlinkChunk keys or more; the board's own keys (ids,
// data, clocks, markers) go in the last.
func deleteTrips(periods, shards int, cluster bool) int {
	perShard := 1
	if cluster {
		perShard += 2 * keys.RecentParts
	}
	trips, pending := 1, 0 // the last DoMulti
	for range periods {
		if pending >= lb.UnlinkChunk {
			trips, pending = trips+1, 0
		}
		pending += shards*perShard + keys.Partitions
	}
	if pending >= lb.UnlinkChunk { // before the board's own keys
		trips++
	}
	return trips
}

// widestPipeline is a client that records the most arguments one DoMulti
// sent.
type widestPipeline struct {
	rueidis.Client
	args atomic.Int64
}

func (c *widestPipeline) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	var n int64
	for _, cmd := range multi {
		n += int64(len(cmd.Commands()))
	}
	for {
		old := c.args.Load()
		if n <= old || c.args.CompareAndSwap(old, n) {
			break
		}
	}
	return c.Client.DoMulti(ctx, multi...)
}
