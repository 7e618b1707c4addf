package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/durabletest"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// boardView is everything a reader sees of a board, for before/after
// comparisons.
func boardView(t *testing.T, board *lb.Leaderboard, queries ...[]lb.Query) []any {
	t.Helper()
	ctx := context.Background()
	var out []any
	for _, q := range queries {
		top, err := board.Top(ctx, 1000, q...)
		require.NoError(t, err)
		n, err := board.Count(ctx, q...)
		require.NoError(t, err)
		out = append(out, top, n)
		for _, e := range top {
			st, err := board.Rank(ctx, e.Member, q...)
			require.NoError(t, err)
			out = append(out, st)
		}
	}
	return out
}

func TestRebuildAfterWipe(t *testing.T) {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: time.Now().Add(-30 * 24 * time.Hour).Truncate(time.Hour), Resolution: time.Second, MaxScore: 1e6, Decimals: 1})
	require.NoError(t, err)
	variants := map[string][]lb.Option{
		"keepbest":         {},
		"accumulate":       {lb.WithPolicy(lb.Accumulate), lb.WithRanking(lb.Competition)},
		"replace-lowest":   {lb.WithPolicy(lb.Replace), lb.WithOrder(lb.LowestFirst)},
		"tiebreak":         {lb.WithTieBreak(tb), lb.WithPolicy(lb.Accumulate)},
		"sharded":          {lb.WithShards(-2, 0, 3), lb.WithPolicy(lb.Accumulate)},
		"sharded-tiebreak": {lb.WithShards(1, 2), lb.WithTieBreak(tb)},
		// Rebuild fills the shadow layout too (WithShadowShards).
		"sharded-shadow": {lb.WithShards(-2, 0, 3), lb.WithShadowShards(-1, 2.5), lb.WithPolicy(lb.Accumulate)},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for name, opts := range variants {
			t.Run(name, func(t *testing.T) {
				store := newMemStore()
				clock := future.Add(-36 * time.Hour) // yesterday's day stays live
				board, bname := newBoard(t, b, append(opts, lb.WithStore(store), lb.WithWindows(lb.AllTime(), lb.Daily()),
					lb.WithClock(func() time.Time { return clock }))...)
				present, err := board.Present(ctx)
				require.NoError(t, err)
				require.False(t, present, "a board never rebuilt has no marker")
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				present, err = board.Present(ctx)
				require.NoError(t, err)
				require.True(t, present)

				vals := []float64{-3, -1, 0, 0.5, 1, 2.5, 4, 7}
				for i := 0; i < 120; i++ {
					if i == 60 {
						clock = future // the next day
					}
					m := fmt.Sprintf("p%d", (i*7)%23)
					_, err := board.Submit(ctx, m, vals[(i*5)%len(vals)], lb.WithTime(clock.Add(-time.Duration(i%5)*time.Minute)))
					require.NoError(t, err)
				}
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"bulk1": 2, "bulk2": 0.5, "p3": 1}))
				day1 := []lb.Query{lb.In(lb.Daily()), lb.At(future.Add(-36 * time.Hour))}
				views := [][]lb.Query{nil, {lb.In(lb.Daily())}, day1}
				before := boardView(t, board, views...)
				reports, err := board.Verify(ctx)
				require.NoError(t, err)
				require.Len(t, reports, 3, "all time, today, yesterday")
				for _, r := range reports {
					require.True(t, r.Clean(), "%+v", r)
				}

				b.Wipe(t, bname)
				present, err = board.Present(ctx)
				require.NoError(t, err)
				require.False(t, present, "the wipe must show")
				reports, err = board.Verify(ctx)
				require.NoError(t, err)
				require.False(t, reports[0].Clean())
				require.Equal(t, reports[0].StoreMembers, reports[0].MissingCount)

				var progress []lb.RebuildProgress
				rep, err := board.Rebuild(ctx, lb.WithProgress(func(p lb.RebuildProgress) { progress = append(progress, p) }))
				require.NoError(t, err)
				require.Equal(t, 3, rep.Periods)
				require.Empty(t, rep.Refused)
				require.NotEmpty(t, progress)
				require.True(t, progress[len(progress)-1].Done)
				require.Equal(t, 3, progress[len(progress)-1].PeriodsDone)
				require.Equal(t, before, boardView(t, board, views...), "the rebuilt board reads as before")
				requireVerified(t, board)
				if strings.HasPrefix(name, "sharded") {
					checks, err := board.Check(ctx, false)
					require.NoError(t, err)
					shadows := 0
					for _, c := range checks {
						require.True(t, c.Clean(), "%+v", c)
						require.Positive(t, c.Members, "%+v", c)
						shadows += boolInt(c.Shadow)
					}
					if name == "sharded-shadow" {
						require.Equal(t, 2, shadows, "a report of the shadow of each window")
					}
				}

				// Verify sees a member Redis lost and one it holds wrong.
				c := b.Client.Client
				top, err := board.Top(ctx, 2)
				require.NoError(t, err)
				if !strings.HasPrefix(name, "sharded") {
					require.NoError(t, c.Do(ctx, c.B().Zrem().Key("lb:{"+bname+"}:alltime").Member(top[0].Member).Build()).Error())
					require.NoError(t, c.Do(ctx, c.B().Zadd().Key("lb:{"+bname+"}:alltime").ScoreMember().ScoreMember(12345, top[1].Member).Build()).Error())
					reports, err = board.Verify(ctx)
					require.NoError(t, err)
					require.Equal(t, []string{top[0].Member}, reports[0].Missing)
					require.Equal(t, []string{top[1].Member}, reports[0].Different)
					require.Equal(t, int64(0), reports[0].Extra)
				}
			})
		}
	})
}

// TestRebuildAfterRedisKilled: see durabletest.KillAndRebuild; pgstore runs
// the same test against PostgreSQL.
func TestRebuildAfterRedisKilled(t *testing.T) {
	durabletest.KillAndRebuild(t, newMemStore(), "fault")
}

// streamStore streams n made-up members for every period, calling hook
// before each one; the rest is memStore's.
type streamStore struct {
	*memStore
	n    int
	hook func(i int) error
}

func (s *streamStore) Standings(ctx context.Context, q lb.StandingsQuery, fn func(lb.StoredStanding) error) error {
	for i := range s.n {
		if s.hook != nil {
			if err := s.hook(i); err != nil {
				return err
			}
		}
		if err := fn(lb.StoredStanding{Member: fmt.Sprintf("m%d", i), Score: float64(s.n - i), At: future}); err != nil {
			return err
		}
	}
	return nil
}

// settledWriters waits until no goroutine of a rebuild's pipeline writer
// is left. (Counting all goroutines would not do: rueidis replaces a
// connection whose round trip a cancelled context cut short.)
func settledWriters(t *testing.T) {
	t.Helper()
	writers := func() int {
		buf := make([]byte, 1<<20)
		buf = buf[:runtime.Stack(buf, true)]
		return strings.Count(string(buf), "startPipelineWriter")
	}
	require.Eventually(t, func() bool { return writers() == 0 }, 5*time.Second, 10*time.Millisecond,
		"pipeline writers left: %d", writers())
}

// TestRebuildOverlapStops: the writers that send a rebuild's pipelines
// while the store is read stop with the rebuild, whether the store fails,
// Redis fails or the context is cancelled, and the board is left as it was.
func TestRebuildOverlapStops(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sharded := range []bool{false, true} {
			t.Run(fmt.Sprint("sharded=", sharded), func(t *testing.T) {
				store := &streamStore{memStore: newMemStore(), n: 50_000}
				opts := []lb.Option{lb.WithStore(store), lb.WithClock(fixed(future))}
				if sharded {
					opts = append(opts, lb.WithShards(15_000, 30_000))
				}
				board, name := newBoard(t, b, opts...)
				rep, err := board.Rebuild(ctx)
				require.NoError(t, err)
				require.Equal(t, int64(store.n), rep.Members)
				top, err := board.Top(ctx, 3)
				require.NoError(t, err)
				require.Equal(t, []lb.Entry{{Member: "m0", Score: 50000, Rank: 1}, {Member: "m1", Score: 49999, Rank: 2}, {Member: "m2", Score: 49998, Rank: 3}}, top)
				// What readers see, and which keys there are (Snapshot reads
				// sorted sets only; the marker and index are not).
				snapshot := func() []any {
					var keys []string
					for _, k := range b.Keys(t, "*{"+name+"*") {
						if !strings.Contains(k, ":rebuild:") {
							keys = append(keys, k)
						}
					}
					sort.Strings(keys)
					top, err := board.Top(ctx, 20)
					require.NoError(t, err)
					n, err := board.Count(ctx)
					require.NoError(t, err)
					return []any{keys, top, n}
				}
				before := snapshot()

				// The store fails after many pipelines went out.
				boom := errors.New("boom")
				store.hook = func(i int) error {
					if i == 40_000 {
						return boom
					}
					return nil
				}
				_, err = board.Rebuild(ctx)
				require.ErrorIs(t, err, boom)
				settledWriters(t)
				require.Equal(t, before, snapshot(), "a failed rebuild swaps nothing in")
				requireCopiesExpire(t, b, name)

				// The context is cancelled midway.
				cctx, cancel := context.WithCancel(ctx)
				store.hook = func(i int) error {
					if i == 25_000 {
						cancel()
					}
					return nil
				}
				_, err = board.Rebuild(cctx)
				require.ErrorIs(t, err, context.Canceled)
				settledWriters(t)
				require.Equal(t, before, snapshot())
				requireCopiesExpire(t, b, name)

				// Redis refuses the commands: the copy being built becomes
				// a string once its first writes are in.
				c := b.Client.Client
				restore := lb.NameRebuildCopies("t")
				store.hook = func(i int) error {
					if i == 0 {
						key := "lb:{" + name + "}:alltime:rebuild:t"
						if sharded {
							key = keys.NewBoard("lb", name).Shards([]float64{15_000, 30_000})[0].Period("alltime", "alltime") + ":rebuild:t"
						}
						return c.Do(ctx, c.B().Set().Key(key).Value("x").Build()).Error()
					}
					return nil
				}
				_, err = board.Rebuild(ctx)
				require.ErrorContains(t, err, "WRONGTYPE")
				require.ErrorContains(t, err, "leaderboard: rebuild")
				restore()
				settledWriters(t)
				require.Equal(t, before, snapshot())
				requireCopiesExpire(t, b, name)

				// And it still rebuilds after all that.
				store.hook = nil
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				settledWriters(t)
				require.Equal(t, before, snapshot())
			})
		}
	})
}

// requireCopiesExpire checks that a rebuild cut short left no copy that
// never expires: it deletes them, and one a write still in flight put
// back expires (freshLife).
func requireCopiesExpire(t *testing.T, b *testredis.Backend, name string) {
	t.Helper()
	c := b.Client.Client
	for _, k := range b.Keys(t, "*{"+name+"*:rebuild:*") {
		ttl, err := c.Do(context.Background(), c.B().Pttl().Key(k).Build()).AsInt64()
		require.NoError(t, err)
		require.True(t, ttl > 0 || ttl == -2, "copy %s left with PTTL %d", k, ttl)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
