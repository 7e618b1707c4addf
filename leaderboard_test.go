package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// future is the fixed clock reading of tests that need one: a real Redis
// expires keys by its own clock, so it lies ahead of today, whenever the
// tests run. Tests pinned to calendar dates use longRetention instead.
var future = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 2, 0).Add(12 * time.Hour)

// longRetention keeps keys of periods pinned to past or near dates alive on
// a real Redis for as long as anyone runs these tests.
const longRetention = 60 * 365 * 24 * time.Hour

func fixed(t time.Time) func() time.Time { return func() time.Time { return t } }

// testClock is a board clock a test moves (WithClock(c.Now)).
type testClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *testClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *testClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

func newBoard(t *testing.T, b *testredis.Backend, opts ...lb.Option) (*lb.Leaderboard, string) {
	t.Helper()
	name := b.BoardName(t)
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	return board, name
}

// nilPtrWindow is a user's window type, passed as a nil pointer.
type nilPtrWindow struct{ name string }

func (w *nilPtrWindow) Name() string               { return w.name }
func (w *nilPtrWindow) Period(time.Time) lb.Period { return lb.Period{ID: "x"} }

func TestNewRefusesBadInput(t *testing.T) {
	c := testredis.Mini(t).Client
	cases := map[string]struct {
		name string
		opts []lb.Option
	}{
		"empty name":         {"", nil},
		"space in name":      {"a b", nil},
		"tab in name":        {"a\tb", nil},
		"open brace":         {"a{b", nil},
		"close brace":        {"a}b", nil},
		"no windows":         {"ok", []lb.Option{lb.WithWindows()}},
		"nil window":         {"ok", []lb.Option{lb.WithWindows(nil)}},
		"named nil window":   {"ok", []lb.Option{lb.WithWindows(lb.Named("x", nil))}},
		"nil pointer window": {"ok", []lb.Option{lb.WithWindows((*nilPtrWindow)(nil))}},
		"duplicate windows":  {"ok", []lb.Option{lb.WithWindows(lb.Daily(), lb.DailyIn(time.UTC))}},
		"bad window name":    {"ok", []lb.Option{lb.WithWindows(lb.Named("a:b", lb.Daily()))}},
		"window named data":  {"ok", []lb.Option{lb.WithWindows(lb.Named("data", lb.AllTime()))}},
		"window named ids":   {"ok", []lb.Option{lb.WithWindows(lb.AllTime(), lb.Named("ids", lb.Daily()))}},
		"negative retention": {"ok", []lb.Option{lb.WithRetention(-time.Second)}},
		"bad order":          {"ok", []lb.Option{lb.WithOrder(lb.Order(7))}},
		"bad policy":         {"ok", []lb.Option{lb.WithPolicy(lb.Policy(-1))}},
		"bad ranking":        {"ok", []lb.Option{lb.WithRanking(lb.RankMode(2))}},
		"nil clock":          {"ok", []lb.Option{lb.WithClock(nil)}},
		"empty prefix":       {"ok", []lb.Option{lb.WithKeyPrefix("")}},
		"prefix with brace":  {"ok", []lb.Option{lb.WithKeyPrefix("x{")}},
		"nil option":         {"ok", []lb.Option{nil}},
		"unsorted shards":    {"ok", []lb.Option{lb.WithShards(20, 10)}},
		"repeated shard":     {"ok", []lb.Option{lb.WithShards(10, 10)}},
		"NaN shard":          {"ok", []lb.Option{lb.WithShards(math.NaN())}},
		"Inf shard":          {"ok", []lb.Option{lb.WithShards(1, math.Inf(1))}},
		"# in name":          {"a#s1", nil},
		"name not UTF-8":     {"race\xff\xfe", nil},
		"name of 201 bytes":  {strings.Repeat("n", 201), nil},
		"window not UTF-8":   {"ok", []lb.Option{lb.WithWindows(lb.Named("d\xff", lb.Daily()))}},
		"long window name":   {"ok", []lb.Option{lb.WithWindows(lb.Named(strings.Repeat("w", 201), lb.Daily()))}},
		"prefix not UTF-8":   {"ok", []lb.Option{lb.WithKeyPrefix("lb\xc3")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			board, err := lb.New(c, tc.name, tc.opts...)
			require.ErrorIs(t, err, lb.ErrInvalidArgument)
			require.Nil(t, board)
		})
	}
	_, err := lb.New(nil, "ok")
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
	_, err = lb.New((*testredis.CountingClient)(nil), "ok") // a nil pointer in the interface
	require.ErrorIs(t, err, lb.ErrInvalidArgument)

	board, err := lb.New(c, "ok", lb.WithKeyPrefix("game:7"), lb.WithShards(), lb.WithRetention(0),
		lb.WithWindows(lb.Daily(), lb.Named("daily-berlin", lb.DailyIn(time.UTC))))
	require.NoError(t, err)
	require.NotNil(t, board)
}

func TestBadInputWritesNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
			for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
				t.Run(fmt.Sprint(policy, ranking), func(t *testing.T) {
					board, name := newBoard(t, b, lb.WithPolicy(policy), lb.WithRanking(ranking),
						lb.WithWindows(lb.AllTime(), lb.Daily(), lb.Weekly(), lb.Monthly()), lb.WithClock(fixed(future)))
					_, err := board.Submit(ctx, "seed", 10, lb.WithData("Seed"))
					require.NoError(t, err)
					before := b.Snapshot(t, name)
					require.Len(t, before, 5, "four windows and the members' data")

					long := strings.Repeat("x", lb.MaxMemberLen+1)
					for _, s := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
						_, err = board.Submit(ctx, "p", s)
						require.ErrorIs(t, err, lb.ErrInvalidScore)
						err = board.SubmitMany(ctx, map[string]float64{"ok": 1, "p": s})
						require.ErrorIs(t, err, lb.ErrInvalidScore)
					}
					for _, m := range []string{"", long} {
						_, err = board.Submit(ctx, m, 1)
						require.ErrorIs(t, err, lb.ErrInvalidMember)
						require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"ok": 1, m: 1}), lb.ErrInvalidMember)
						require.ErrorIs(t, board.Remove(ctx, "seed", m), lb.ErrInvalidMember)
						_, err = board.Rank(ctx, m)
						require.ErrorIs(t, err, lb.ErrInvalidMember)
						_, err = board.Around(ctx, m, 1)
						require.ErrorIs(t, err, lb.ErrInvalidMember)
						_, err = board.Among(ctx, []string{"seed", m})
						require.ErrorIs(t, err, lb.ErrInvalidMember)
						_, err = board.Ranks(ctx, []string{"seed", m})
						require.ErrorIs(t, err, lb.ErrInvalidMember)
						require.ErrorIs(t, board.SetData(ctx, m, "x"), lb.ErrInvalidMember)
					}
					tooLong := strings.Repeat("d", lb.MaxDataLen+1)
					_, err = board.Submit(ctx, "seed", 99, lb.WithData(tooLong))
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "data of MaxDataLen+1 bytes")
					require.ErrorIs(t, board.SetData(ctx, "seed", tooLong), lb.ErrInvalidArgument)
					require.ErrorIs(t, board.SetData(ctx, "new", tooLong), lb.ErrInvalidArgument)
					_, err = board.Submit(ctx, strings.Repeat("y", lb.MaxMemberLen), 1, lb.WithTime(future.Add(time.Second+time.Millisecond)))
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "a time after the clock and its default skew")
					for _, id := range []string{"", strings.Repeat("i", lb.MaxIDLen+1)} {
						_, err = board.Submit(ctx, "p", 1, lb.WithID(id))
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "id of %d bytes", len(id))
					}
					_, err = board.Submit(ctx, "p", 1, nil)
					require.ErrorIs(t, err, lb.ErrInvalidArgument)

					for _, n := range []int{0, -1, lb.MaxN + 1} {
						_, err = board.Top(ctx, n)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "n=%d", n)
						_, err = board.Page(ctx, 1, n)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "size=%d", n)
					}
					for _, n := range []int{0, -3} {
						_, err = board.Page(ctx, n, 10)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "number=%d", n)
					}
					// Pages whose first position overflows int64: past the
					// end, no entries and no error (it said "page number =
					// 9223372036854776, want 1 or more").
					count, err := board.Count(ctx)
					require.NoError(t, err)
					for _, ns := range [][2]int{{math.MaxInt, 10}, {math.MaxInt/lb.MaxN + 1, lb.MaxN}, {1 << 62, 4}, {math.MaxInt, 1}} {
						p, err := board.Page(ctx, ns[0], ns[1])
						require.NoError(t, err, "Page(%d, %d): past the end", ns[0], ns[1])
						require.Empty(t, p.Entries, "Page(%d, %d)", ns[0], ns[1])
						require.Equal(t, count, p.Total, "Page(%d, %d)", ns[0], ns[1])
						require.Equal(t, ns[0], p.Number)
					}
					for _, r := range []int{-1, lb.MaxRadius + 1} {
						_, err = board.Around(ctx, "seed", r)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "radius=%d", r)
					}
					_, err = board.Among(ctx, make([]string, lb.MaxN+1))
					require.ErrorIs(t, err, lb.ErrInvalidArgument)
					for _, n := range []int{0, lb.MaxN + 1} {
						ms := make([]string, n)
						for i := range ms {
							ms[i] = "seed"
						}
						_, err = board.Ranks(ctx, ms)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Ranks of %d members", n)
					}
					_, err = board.Ranks(ctx, nil)
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "Ranks(nil)")
					for _, pct := range []float64{0, -1, 100.000001, math.NaN(), math.Inf(1), math.Inf(-1)} {
						_, err = board.Cutoff(ctx, pct)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Cutoff(%v)", pct)
					}
					for _, fr := range [][2]int64{{0, 5}, {-1, 5}, {5, 4}, {1, lb.MaxN + 1}, {math.MaxInt64 - 1, math.MaxInt64}} {
						_, err = board.Range(ctx, fr[0], fr[1])
						if fr[0] == math.MaxInt64-1 {
							require.NoError(t, err, "Range far past the end: empty")
							continue
						}
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Range(%d, %d)", fr[0], fr[1])
					}
					nan, inf := math.NaN(), math.Inf(1)
					for _, r := range [][2]float64{{nan, 1}, {1, nan}, {nan, nan}, {2, 1}, {inf, -inf}} {
						_, err = board.Between(ctx, r[0], r[1], 10)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Between(%v, %v)", r[0], r[1])
						_, err = board.CountBetween(ctx, r[0], r[1])
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "CountBetween(%v, %v)", r[0], r[1])
						_, err = board.RemoveBetween(ctx, r[0], r[1])
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "RemoveBetween(%v, %v)", r[0], r[1])
					}
					for _, n := range []int{0, -1, lb.MaxN + 1} {
						_, err = board.Between(ctx, 0, 100, n)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Between n=%d", n)
					}
					_, err = board.RemoveBetween(ctx, -inf, inf, lb.At(future))
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "RemoveBetween At")
					for _, x := range []float64{nan, inf, -inf} {
						_, _, err = board.AroundScore(ctx, x, 1)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "AroundScore(%v)", x)
						require.ErrorIs(t, board.Set(ctx, "seed", x), lb.ErrInvalidScore, "Set(%v)", x)
					}
					for _, r := range []int{-1, lb.MaxRadius + 1} {
						_, _, err = board.AroundScore(ctx, 5, r)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "AroundScore radius=%d", r)
					}
					for _, m := range []string{"", long} {
						require.ErrorIs(t, board.Set(ctx, m, 1), lb.ErrInvalidMember)
					}
					require.ErrorIs(t, board.Set(ctx, "seed", 1, lb.At(future)), lb.ErrInvalidArgument, "Set At")
					require.ErrorIs(t, board.Set(ctx, "seed", 1, lb.In(lb.Named("season", lb.Daily()))), lb.ErrInvalidArgument)
					for _, err := range board.All(ctx, nil) {
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "All(nil query)")
					}
					_, err = board.Top(ctx, 1, lb.In(lb.Named("season", lb.Daily())))
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "a window the board does not have")
					_, err = board.Count(ctx, nil)
					require.ErrorIs(t, err, lb.ErrInvalidArgument)
					// A nil window, or a nil pointer to one, in In: refused,
					// not the default window (a Reset would empty it), nor a
					// panic.
					for _, w := range []lb.Window{nil, (*nilPtrWindow)(nil)} {
						in := lb.In(w)
						_, err = board.Top(ctx, 1, in)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Top(In(%#v))", w)
						_, err = board.Rank(ctx, "seed", in)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Rank(In(%#v))", w)
						_, err = board.Between(ctx, 0, 1, 1, in)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Between(In(%#v))", w)
						require.ErrorIs(t, board.Reset(ctx, in), lb.ErrInvalidArgument, "Reset(In(%#v))", w)
						_, err = board.RemoveBetween(ctx, -inf, inf, in)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "RemoveBetween(In(%#v))", w)
						require.ErrorIs(t, board.Set(ctx, "seed", 1, in), lb.ErrInvalidArgument, "Set(In(%#v))", w)
						_, err = board.Periods(ctx, in)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Periods(In(%#v))", w)
						for _, err := range board.All(ctx, in) {
							require.ErrorIs(t, err, lb.ErrInvalidArgument, "All(In(%#v))", w)
						}
						_, err = board.Check(ctx, false, in)
						require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check(In(%#v))", w)
					}
					// The zero time (an unset variable) in At or WithTime:
					// refused, not read as no time at all (the current
					// period).
					zero := lb.At(time.Time{})
					_, err = board.Top(ctx, 1, zero)
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "Top(At(zero))")
					_, err = board.Rank(ctx, "seed", zero, lb.In(lb.AllTime()))
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "Rank(At(zero))")
					_, err = board.Count(ctx, zero)
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "Count(At(zero))")
					_, err = board.Check(ctx, false, zero)
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "Check(At(zero))")
					require.ErrorIs(t, board.Reset(ctx, zero), lb.ErrInvalidArgument, "Reset(At(zero))")
					_, err = board.Submit(ctx, "p", 1, lb.WithTime(time.Time{}))
					require.ErrorIs(t, err, lb.ErrInvalidArgument, "WithTime(zero)")

					_, err = board.Rank(ctx, "nobody")
					require.ErrorIs(t, err, lb.ErrNotRanked)
					require.False(t, errors.Is(err, rueidis.Nil), "rueidis.Nil must not leak")
					_, err = board.Around(ctx, "nobody", 2)
					require.ErrorIs(t, err, lb.ErrNotRanked)
					require.False(t, errors.Is(err, rueidis.Nil), "rueidis.Nil must not leak")

					require.Equal(t, before, b.Snapshot(t, name), "a refused call wrote something")
				})
			}
		}
	})
}

// TestPagesPastInt64: a page whose first position overflows int64 is past
// the end of any board (API: "a page past the end: no entries, no error"),
// on every kind of board, with its total; Range near math.MaxInt64 too.
func TestPagesPastInt64(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		kinds := map[string][]lb.Option{
			"plain":               nil,
			"competition":         {lb.WithRanking(lb.Competition)},
			"sharded":             {lb.WithShards(2, 4)},
			"sharded competition": {lb.WithShards(2, 4), lb.WithRanking(lb.Competition)},
			"hot":                 {lb.WithHotTop(5)},
			"replica reads":       {lb.WithReplicaReads(), lb.WithShards(3)},
		}
		for kind, opts := range kinds {
			t.Run(kind, func(t *testing.T) {
				board, err := lb.New(b.Client, shardName(t, b), opts...)
				require.NoError(t, err)
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 3, "c": 5, "d": 5}))
				for _, ns := range [][2]int{{math.MaxInt, 10}, {math.MaxInt/lb.MaxN + 1, lb.MaxN}, {1 << 62, 4}, {math.MaxInt, 1}, {math.MaxInt / 2, 2}} {
					p, err := board.Page(ctx, ns[0], ns[1])
					require.NoError(t, err, "Page(%d, %d): past the end", ns[0], ns[1])
					require.Empty(t, p.Entries, "Page(%d, %d)", ns[0], ns[1])
					require.Equal(t, int64(4), p.Total, "Page(%d, %d)", ns[0], ns[1])
				}
				es, err := board.Range(ctx, math.MaxInt64-lb.MaxN+1, math.MaxInt64)
				require.NoError(t, err)
				require.Empty(t, es)
			})
		}
	})
}

func TestAccumulateOverflowWritesNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			board, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithRanking(ranking),
				lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
			// Only the all-time total would overflow (the day of this replay
			// has expired): the check must refuse the daily write too.
			res, err := board.Submit(ctx, "p", math.MaxFloat64, lb.WithTime(future.Add(-48*time.Hour)))
			require.NoError(t, err)
			require.True(t, res.Windows[1].Closed)
			require.NoError(t, board.SubmitMany(ctx, map[string]float64{"q": -math.MaxFloat64}))
			before := b.Snapshot(t, name)

			_, err = board.Submit(ctx, "p", math.MaxFloat64)
			require.ErrorIs(t, err, lb.ErrInvalidScore)
			require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"r": 5, "q": -math.MaxFloat64}), lb.ErrInvalidScore)
			require.Equal(t, before, b.Snapshot(t, name))

			// Totals at the edge that stay finite are fine.
			res, err = board.Submit(ctx, "q", math.MaxFloat64)
			require.NoError(t, err)
			require.Equal(t, 0.0, res.Score)
		}
	})
}

// TestAccumulateIncrementBound checks the edge between the two ways Submit
// adds under Accumulate: increments below 2^970 go as a plain ZINCRBY,
// which cannot overflow a finite total; larger ones through the script,
// which refuses an overflowing total.
func TestAccumulateIncrementBound(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()))
		_, err := board.Submit(ctx, "p", math.MaxFloat64)
		require.NoError(t, err)
		below := math.Nextafter(0x1p970, 0)
		res, err := board.Submit(ctx, "p", below)
		require.NoError(t, err)
		require.Equal(t, math.MaxFloat64, res.Score, "MaxFloat64 + (2^970 - ulp) rounds back to MaxFloat64")
		require.False(t, res.Changed)

		before := b.Snapshot(t, name)
		_, err = board.Submit(ctx, "p", 0x1p970)
		require.ErrorIs(t, err, lb.ErrInvalidScore, "MaxFloat64 + 2^970 rounds to +Inf")
		require.Equal(t, before, b.Snapshot(t, name))

		// A negative zero is stored as 0, never "-0".
		res, err = board.Submit(ctx, "z", math.Copysign(0, -1))
		require.NoError(t, err)
		require.True(t, res.Changed)
		keys := b.Keys(t, "*{"+name+"}*")
		require.Len(t, keys, len(res.Windows))
		for _, k := range keys {
			v, err := b.Client.Do(ctx, b.Client.B().Zscore().Key(k).Member("z").Build()).ToString()
			require.NoError(t, err, k)
			require.Equal(t, "0", v, k)
		}
	})
}

func TestTieOrderIsByMemberInBoardDirection(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		members := map[string]float64{"alice": 5, "bob": 5, "Carol": 5, "dave": 9, "eve": 1}
		high, _ := newBoard(t, b)
		require.NoError(t, high.SubmitMany(ctx, members))
		top, err := high.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"dave", "bob", "alice", "Carol", "eve"}, names(top))

		low, _ := newBoard(t, b, lb.WithOrder(lb.LowestFirst), lb.WithRanking(lb.Competition))
		require.NoError(t, low.SubmitMany(ctx, members))
		top, err = low.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"eve", "Carol", "alice", "bob", "dave"}, names(top))
		require.Equal(t, []int64{1, 2, 2, 2, 5}, ranks(top))

		among, err := high.Among(ctx, []string{"alice", "Carol", "bob", "zed", "bob"})
		require.NoError(t, err)
		require.Equal(t, []string{"bob", "alice", "Carol"}, names(among))
		require.Equal(t, []int64{1, 2, 3}, ranks(among))
	})
}

func names(es []lb.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Member
	}
	return out
}

func ranks(es []lb.Entry) []int64 {
	out := make([]int64, len(es))
	for i, e := range es {
		out[i] = e.Rank
	}
	return out
}

func TestSubmitResult(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, _ := newBoard(t, b, lb.WithWindows(lb.Weekly(), lb.AllTime()), lb.WithClock(fixed(future)))
		res, err := board.Submit(ctx, "ann", 100)
		require.NoError(t, err)
		require.True(t, res.Changed)
		require.Equal(t, lb.Entry{Member: "ann"}, res.Previous)
		require.Equal(t, lb.Standing{Entry: lb.Entry{Member: "ann", Score: 100, Rank: 1}, Total: 1, Percentile: 100}, res.Standing)
		require.Len(t, res.Windows, 2)
		require.Equal(t, "weekly", res.Windows[0].Window)
		require.Equal(t, lb.Weekly().Period(future).ID, res.Windows[0].Period)
		require.Equal(t, "alltime", res.Windows[1].Window)
		require.Equal(t, "alltime", res.Windows[1].Period)

		_, err = board.Submit(ctx, "ben", 150)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "cat", 50)
		require.NoError(t, err)

		res, err = board.Submit(ctx, "ann", 90) // not a best
		require.NoError(t, err)
		require.False(t, res.Changed)
		require.Equal(t, lb.Entry{Member: "ann", Score: 100, Rank: 2}, res.Previous)
		require.Equal(t, lb.Standing{Entry: lb.Entry{Member: "ann", Score: 100, Rank: 2}, Total: 3, Percentile: 50}, res.Standing)

		res, err = board.Submit(ctx, "ann", 200)
		require.NoError(t, err)
		require.True(t, res.Changed)
		require.Equal(t, lb.Entry{Member: "ann", Score: 100, Rank: 2}, res.Previous)
		require.Equal(t, lb.Standing{Entry: lb.Entry{Member: "ann", Score: 200, Rank: 1}, Total: 3, Percentile: 100}, res.Standing)
		for _, w := range res.Windows {
			require.Equal(t, res.Standing, w.Standing, w.Window)
			require.False(t, w.Closed)
		}
	})
}

// TestExpiryIsAbsolute checks every windowed key's expiry: its period's end
// plus the retention, the same after any number of writes, and none on the
// all-time key.
func TestExpiryIsAbsolute(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Accumulate} {
			clock := future
			board, name := newBoard(t, b, lb.WithPolicy(policy), lb.WithClock(func() time.Time { return clock }),
				lb.WithWindows(lb.AllTime(), lb.Daily(), lb.Weekly(), lb.Monthly()))
			_, err := board.Submit(ctx, "p", 1)
			require.NoError(t, err)
			clock = clock.Add(3 * time.Hour)
			_, err = board.Submit(ctx, "p", 2)
			require.NoError(t, err)
			require.NoError(t, board.SubmitMany(ctx, map[string]float64{"q": 3}))

			want := map[string]time.Time{"lb:{" + name + "}:alltime": {}}
			for _, w := range []lb.Window{lb.Daily(), lb.Weekly(), lb.Monthly()} {
				p := w.Period(future)
				want["lb:{"+name+"}:"+w.Name()+":"+p.ID] = p.End.Add(p.End.Sub(p.Start))
			}
			require.ElementsMatch(t, keysOf(want), b.Keys(t, "lb:{"+name+"}*"))
			for key, at := range want {
				require.Equal(t, at, expireTime(t, b, key), key)
			}
		}
	})
}

func keysOf(m map[string]time.Time) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// expireTime reads a key's absolute expiry; zero for none.
func expireTime(t *testing.T, b *testredis.Backend, key string) time.Time {
	t.Helper()
	c := b.Client.Client
	ms, err := c.Do(context.Background(), c.B().Pexpiretime().Key(key).Build()).AsInt64()
	require.NoError(t, err)
	require.NotEqual(t, int64(-2), ms, "no key %s", key)
	if ms == -1 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

func TestWindowsOnBoard(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		t.Run("ISO week-year edge", func(t *testing.T) {
			var clock time.Time
			board, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.Weekly(), lb.Monthly()),
				lb.WithRetention(longRetention), lb.WithClock(func() time.Time { return clock }))
			for _, day := range []time.Time{
				time.Date(2026, 12, 28, 0, 0, 0, 0, time.UTC),
				time.Date(2027, 1, 1, 23, 59, 59, 0, time.UTC),
				time.Date(2027, 1, 3, 23, 59, 59, 999e6, time.UTC),
				time.Date(2027, 1, 4, 0, 0, 0, 0, time.UTC),
			} {
				clock = day
				_, err := board.Submit(ctx, "p", 1)
				require.NoError(t, err)
			}
			w53, err := board.Count(ctx, lb.At(time.Date(2026, 12, 31, 0, 0, 0, 0, time.UTC)))
			require.NoError(t, err)
			require.Equal(t, int64(1), w53)
			st, err := board.Rank(ctx, "p", lb.At(time.Date(2027, 1, 2, 0, 0, 0, 0, time.UTC)))
			require.NoError(t, err)
			require.Equal(t, 3.0, st.Score, "three submissions in 2026-W53")
			st, err = board.Rank(ctx, "p")
			require.NoError(t, err)
			require.Equal(t, 1.0, st.Score, "one in 2027-W01")
			st, err = board.Rank(ctx, "p", lb.In(lb.Monthly()), lb.At(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
			require.NoError(t, err)
			require.Equal(t, 1.0, st.Score, "one in 2026-12")
			require.ElementsMatch(t, []string{
				"lb:{" + name + "}:weekly:2026-W53", "lb:{" + name + "}:weekly:2027-W01",
				"lb:{" + name + "}:monthly:2026-12", "lb:{" + name + "}:monthly:2027-01",
			}, b.Keys(t, "lb:{"+name+"}*"))
		})
		t.Run("DST change in Europe/Berlin", func(t *testing.T) {
			var clock time.Time
			board, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.DailyIn(berlin)),
				lb.WithRetention(longRetention), lb.WithClock(func() time.Time { return clock }))
			// 2027-03-28 is 23 hours long in Berlin: 02:00 CET jumps to 03:00 CEST.
			for _, at := range []time.Time{
				time.Date(2027, 3, 27, 23, 59, 0, 0, berlin),
				time.Date(2027, 3, 28, 0, 0, 0, 0, berlin),
				time.Date(2027, 3, 28, 3, 30, 0, 0, berlin),
				time.Date(2027, 3, 28, 23, 59, 0, 0, berlin),
				time.Date(2027, 3, 29, 0, 0, 0, 0, berlin),
			} {
				clock = at
				_, err := board.Submit(ctx, "p", 1)
				require.NoError(t, err)
			}
			key := "lb:{" + name + "}:daily:2027-03-28"
			n, err := board.Rank(ctx, "p", lb.At(time.Date(2027, 3, 28, 12, 0, 0, 0, berlin)))
			require.NoError(t, err)
			require.Equal(t, 3.0, n.Score)
			// The day ends at local midnight, 22:00 UTC in summer time.
			require.Equal(t, time.Date(2027, 3, 28, 22, 0, 0, 0, time.UTC).Add(longRetention), expireTime(t, b, key))
		})
		t.Run("a window of the user's own", func(t *testing.T) {
			season := tenDaySeason{start: time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)}
			clock := time.Date(2027, 3, 11, 0, 0, 0, 0, time.UTC) // day 69: season 6
			board, name := newBoard(t, b, lb.WithWindows(season, lb.AllTime()), lb.WithRetention(longRetention),
				lb.WithClock(func() time.Time { return clock }))
			_, err := board.Submit(ctx, "p", 7)
			require.NoError(t, err)
			clock = clock.Add(24 * time.Hour) // day 70: season 7 starts
			res, err := board.Submit(ctx, "q", 8)
			require.NoError(t, err)
			require.Equal(t, "S7", res.Windows[0].Period)
			require.Equal(t, int64(1), res.Total)
			top, err := board.Top(ctx, 5, lb.At(clock.Add(-time.Hour)))
			require.NoError(t, err)
			require.Equal(t, []string{"p"}, names(top))
			require.Equal(t, time.Date(2027, 3, 12, 0, 0, 0, 0, time.UTC).Add(longRetention), expireTime(t, b, "lb:{"+name+"}:season:S6"))
		})
		t.Run("late replay into an expired period", func(t *testing.T) {
			board, name := newBoard(t, b, lb.WithWindows(lb.Daily(), lb.AllTime()), lb.WithClock(fixed(future)))
			res, err := board.Submit(ctx, "p", 5, lb.WithTime(future.Add(-72*time.Hour)))
			require.NoError(t, err)
			require.True(t, res.Windows[0].Closed)
			require.Equal(t, lb.Daily().Period(future.Add(-72*time.Hour)).ID, res.Windows[0].Period)
			require.False(t, res.Windows[1].Closed)
			require.Equal(t, int64(1), res.Windows[1].Standing.Rank)
			require.Equal(t, []string{"lb:{" + name + "}:alltime"}, b.Keys(t, "lb:{"+name+"}*"))
		})
	})
}

// tenDaySeason is a window a user writes: ten-day seasons from a start.
type tenDaySeason struct{ start time.Time }

func (tenDaySeason) Name() string { return "season" }

func (s tenDaySeason) Period(t time.Time) lb.Period {
	n := int(t.Sub(s.start) / (240 * time.Hour))
	start := s.start.Add(time.Duration(n) * 240 * time.Hour)
	return lb.Period{ID: fmt.Sprintf("S%d", n), Start: start, End: start.Add(240 * time.Hour)}
}

// TestExpiredPeriodReadsExpired moves miniredis's clock past a period's end
// plus retention: the key is gone, and every read At it returns ErrExpired,
// decided from the clock without a call to Redis; a live period nobody
// played reads as empty.
func TestExpiredPeriodReadsExpired(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	clock := time.Date(2026, 11, 30, 22, 0, 0, 0, time.UTC)
	b.Mini.SetTime(clock)
	board, _ := newBoard(t, b, lb.WithWindows(lb.Daily()), lb.WithRetention(6*time.Hour),
		lb.WithClock(func() time.Time { return clock }))
	_, err := board.Submit(ctx, "p", 1)
	require.NoError(t, err)
	day := lb.At(clock)

	clock = clock.Add(7 * time.Hour) // 05:00 next day: closed, still readable
	b.Mini.FastForward(7 * time.Hour)
	n, err := board.Count(ctx, day)
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	n, err = board.Count(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "the new day starts empty")

	clock = clock.Add(time.Hour + time.Millisecond) // past 06:00: expired
	b.Mini.FastForward(time.Hour + time.Millisecond)
	calls := b.Client.Calls()
	for what, read := range map[string]func() error{
		"Count":   func() error { _, err := board.Count(ctx, day); return err },
		"Rank":    func() error { _, err := board.Rank(ctx, "p", day); return err },
		"Top":     func() error { _, err := board.Top(ctx, 10, day); return err },
		"Page":    func() error { _, err := board.Page(ctx, 1, 10, day); return err },
		"Around":  func() error { _, err := board.Around(ctx, "p", 2, day); return err },
		"Among":   func() error { _, err := board.Among(ctx, []string{"p"}, day); return err },
		"Ranks":   func() error { _, err := board.Ranks(ctx, []string{"p"}, day); return err },
		"Periods": func() error { _, err := board.Periods(ctx, day); return err },
	} {
		err := read()
		if what == "Periods" {
			require.ErrorIs(t, err, lb.ErrInvalidArgument, "Periods takes no At")
			continue
		}
		require.ErrorIs(t, err, lb.ErrExpired, what)
	}
	require.Equal(t, calls, b.Client.Calls(), "an expired period is decided without Redis")
	n, err = board.Count(ctx, lb.At(clock))
	require.NoError(t, err)
	require.Equal(t, int64(0), n, "today, nobody played: empty, no error")
}

// TestExpiryOnRealRedis lets a real Redis expire a key by its own clock: a
// one-second window with no retention.
func TestExpiryOnRealRedis(t *testing.T) {
	b := testredis.Real(t)
	ctx := context.Background()
	board, name := newBoard(t, b, lb.WithWindows(secondWindow{}), lb.WithRetention(0))
	_, err := board.Submit(ctx, "p", 1)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		return len(b.Keys(t, "lb:{"+name+"}*")) == 0
	}, 5*time.Second, 50*time.Millisecond, "the key of a closed period must expire")
}

type secondWindow struct{}

func (secondWindow) Name() string { return "second" }

func (secondWindow) Period(t time.Time) lb.Period {
	start := t.Truncate(time.Second)
	return lb.Period{ID: start.UTC().Format("150405"), Start: start, End: start.Add(time.Second)}
}

// TestConcurrentSubmitsLoseNothing has 32 goroutines submit to the same
// members at once: no increment and no best may be lost.
func TestConcurrentSubmitsLoseNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		const workers, rounds, members = 32, 40, 5
		for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			acc, _ := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithRanking(ranking), lb.WithWindows(lb.AllTime(), lb.Daily()))
			best, _ := newBoard(t, b, lb.WithRanking(ranking), lb.WithWindows(lb.AllTime(), lb.Weekly()))
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < rounds; r++ {
						m := fmt.Sprintf("m%d", (w+r)%members)
						if _, err := acc.Submit(ctx, m, 1); err != nil {
							errs <- err
							return
						}
						if _, err := best.Submit(ctx, m, float64(w*rounds+r)); err != nil {
							errs <- err
							return
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			var sum float64
			for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
				top, err := acc.Top(ctx, 10, lb.In(w))
				require.NoError(t, err)
				sum = 0
				for _, e := range top {
					sum += e.Score
				}
				require.Equal(t, float64(workers*rounds), sum, w.Name())
			}
			for _, w := range []lb.Window{lb.AllTime(), lb.Weekly()} {
				top, err := best.Top(ctx, 10, lb.In(w))
				require.NoError(t, err)
				require.Len(t, top, members)
				for _, e := range top {
					var want float64
					for w := 0; w < workers; w++ {
						for r := 0; r < rounds; r++ {
							if fmt.Sprintf("m%d", (w+r)%members) == e.Member {
								want = math.Max(want, float64(w*rounds+r))
							}
						}
					}
					require.Equal(t, want, e.Score, e.Member)
				}
			}
		}
	})
}

// TestOneRoundTrip counts the calls each operation makes on the client.
func TestOneRoundTrip(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
			for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
				board, _ := newBoard(t, b, lb.WithPolicy(policy), lb.WithRanking(ranking),
					lb.WithWindows(lb.AllTime(), lb.Daily(), lb.Weekly(), lb.Monthly()))
				ops := []struct {
					name string
					op   func() error
				}{
					{"Submit", func() error { _, err := board.Submit(ctx, "a", 3); return err }},
					{"SubmitMany", func() error { return board.SubmitMany(ctx, map[string]float64{"b": 1, "c": 2, "d": 9}) }},
					{"Top", func() error { _, err := board.Top(ctx, 3); return err }},
					{"Rank", func() error { _, err := board.Rank(ctx, "a"); return err }},
					{"Around", func() error { _, err := board.Around(ctx, "a", 1); return err }},
					{"Page", func() error { _, err := board.Page(ctx, 2, 2); return err }},
					{"Among", func() error { _, err := board.Among(ctx, []string{"a", "b", "x"}); return err }},
					{"Count", func() error { _, err := board.Count(ctx); return err }},
					{"Remove", func() error { return board.Remove(ctx, "x", "y") }},
				}
				for _, o := range ops {
					require.NoError(t, o.op(), o.name) // loads the scripts it uses
					before := b.Client.Calls()
					require.NoError(t, o.op(), o.name)
					require.Equal(t, int64(1), b.Client.Calls()-before, "%s under %v/%v", o.name, policy, ranking)
				}
			}
		}
	})
}

// TestRedisErrorsAreWrapped puts a string where a board's key should be.
func TestRedisErrorsAreWrapped(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, ranking := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			board, name := newBoard(t, b, lb.WithRanking(ranking))
			c := b.Client.Client
			require.NoError(t, c.Do(ctx, c.B().Set().Key("lb:{"+name+"}:alltime").Value("x").Build()).Error())
			_, err := board.Submit(ctx, "p", 1)
			require.ErrorContains(t, err, "leaderboard: submit: ")
			require.ErrorContains(t, err, "WRONGTYPE")
			_, err = board.Top(ctx, 3)
			require.ErrorContains(t, err, "leaderboard: top: ")
			_, err = board.Rank(ctx, "p")
			require.ErrorContains(t, err, "leaderboard: rank: ")
			require.NotErrorIs(t, err, lb.ErrNotRanked)
			_, err = board.Around(ctx, "p", 2)
			require.ErrorContains(t, err, "leaderboard: around: ")
			_, err = board.Page(ctx, 1, 3)
			require.ErrorContains(t, err, "leaderboard: page: ")
			_, err = board.Among(ctx, []string{"p"})
			require.ErrorContains(t, err, "leaderboard: among: ")
			_, err = board.Count(ctx)
			require.ErrorContains(t, err, "leaderboard: count: ")
			require.ErrorContains(t, board.Remove(ctx, "p"), "leaderboard: remove: ")
			require.ErrorContains(t, board.SubmitMany(ctx, map[string]float64{"p": 1}), "leaderboard: submit many: ")
		}
	})
}

// TestSubmitManyRefusesTheFirstBadEntry: a SubmitMany with several bad
// entries names the one whose member sorts first, whatever order Go's map
// gives them in (it named whichever it met first: one call ErrInvalidScore,
// the same call again ErrInvalidMember), and writes nothing.
func TestSubmitManyRefusesTheFirstBadEntry(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, name := newBoard(t, b)
		_, err := board.Submit(ctx, "seed", 1)
		require.NoError(t, err)
		before := b.Snapshot(t, name)
		batch := map[string]float64{"ok": 1, "b": math.NaN(), "": 2, "c": math.Inf(1), "d": 3}
		for range 50 {
			err := board.SubmitMany(ctx, batch)
			require.ErrorIs(t, err, lb.ErrInvalidMember, "the empty member sorts first")
			require.NotErrorIs(t, err, lb.ErrInvalidScore)
		}
		delete(batch, "")
		for range 50 {
			err := board.SubmitMany(ctx, batch)
			require.ErrorIs(t, err, lb.ErrInvalidScore)
			require.ErrorContains(t, err, `member "b"`)
		}
		require.Equal(t, before, b.Snapshot(t, name))
	})
}
