package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestHotTopFollowsEveryWrite: with WithHotTop and a client that caches, a
// cached Top(k) must reflect Set, Remove, RemoveBetween and SubmitMany
// (and Submit) within moments, on every kind of board and policy.
func TestHotTopFollowsEveryWrite(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		c := b.Caching(t)
		if c == nil {
			c = b.Client
		}
		for _, sh := range [][]float64{nil, {0, 3}} {
			for _, p := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
				for _, o := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
					t.Run(fmt.Sprintf("%v/%v/%v", sh, p, o), func(t *testing.T) {
						runHotFollows(t, b, c, sh, p, o, o == lb.LowestFirst)
					})
				}
			}
		}
	})
}

func runHotFollows(t *testing.T, b *testredis.Backend, c *testredis.CountingClient, sh []float64, p lb.Policy, o lb.Order, store bool) {
	ctx := context.Background()
	name := shardName(t, b)
	// One fixed clock: the truth's daily top, read before the polls, and the
	// board's are then one period's even across midnight UTC.
	opts := []lb.Option{lb.WithPolicy(p), lb.WithOrder(o), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future))}
	if sh != nil {
		opts = append(opts, lb.WithShards(sh...))
	}
	if store {
		opts = append(opts, lb.WithStore(newMemStore()))
	}
	const k = 4
	board, err := lb.New(c, name, append(opts, lb.WithHotTop(k))...)
	require.NoError(t, err)
	truth, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	other, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(k))...) // another process
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(uint64(len(sh)), uint64(p)*7+uint64(o)))
	members := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
	scores := []float64{-3, 0, 1, 2, 2, 4, 6, 9}
	var log []string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ops:\n%s", strings.Join(log, "\n"))
		}
	})
	for step := range 120 {
		mem, s := members[rng.IntN(len(members))], scores[rng.IntN(len(scores))]
		q := lb.In(lb.AllTime())
		if rng.IntN(3) == 0 {
			q = lb.In(lb.Daily())
		}
		board, writer := board, board
		if rng.IntN(2) == 0 {
			writer = other
		}
		switch x := rng.IntN(10); {
		case x < 3:
			log = append(log, fmt.Sprintf("%d Set(%s, %v)", step, mem, s))
			require.NoError(t, writer.Set(ctx, mem, s, q))
		case x < 5:
			log = append(log, fmt.Sprintf("%d Submit(%s, %v)", step, mem, s))
			_, err := writer.Submit(ctx, mem, s)
			require.NoError(t, err)
		case x < 7:
			m := map[string]float64{mem: s, members[rng.IntN(len(members))]: scores[rng.IntN(len(scores))]}
			log = append(log, fmt.Sprintf("%d SubmitMany(%v)", step, m))
			require.NoError(t, writer.SubmitMany(ctx, m))
		case x < 9:
			log = append(log, fmt.Sprintf("%d Remove(%s)", step, mem))
			require.NoError(t, writer.Remove(ctx, mem))
		default:
			lo := scores[rng.IntN(len(scores))]
			log = append(log, fmt.Sprintf("%d RemoveBetween(%v, +Inf)", step, lo))
			_, err := writer.RemoveBetween(ctx, lo, math.Inf(1), q)
			require.NoError(t, err)
		}
		for _, qq := range []lb.Query{lb.In(lb.AllTime()), lb.In(lb.Daily())} {
			want, err := truth.Top(ctx, k, qq)
			require.NoError(t, err)
			deadline := time.Now().Add(2 * time.Second)
			for {
				got, err := board.Top(ctx, k, qq)
				require.NoError(t, err)
				if fmt.Sprint(got) == fmt.Sprint(want) {
					break
				}
				if time.Now().After(deadline) {
					require.Equal(t, want, got, "step %d: cached Top trails the board by more than 2s", step)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}
	}
}

// TestWriteRoundTrips counts the round trips of Set, SubmitMany,
// Remove, RemoveBetween, Ranks and Among against their doc comments, with
// and without a store and a tie-break, on every kind of board.
func TestWriteRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, sh := range [][]float64{nil, {0, 3}} {
			for _, store := range []bool{false, true} {
				for _, tbName := range []string{"", "later"} {
					for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
						t.Run(fmt.Sprintf("%v/store=%v/tb=%s/%v", sh, store, tbName, rank), func(t *testing.T) {
							opts := []lb.Option{lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithRanking(rank), lb.WithPolicy(lb.KeepBest)}
							if sh != nil {
								opts = append(opts, lb.WithShards(sh...))
							}
							if store {
								opts = append(opts, lb.WithStore(newMemStore()))
							}
							if tbName != "" {
								tb, err := lb.LaterFirst(lb.TimeOrder{Epoch: time.Now().Add(-time.Hour), Resolution: time.Second, MaxScore: 1e6, Decimals: 1})
								require.NoError(t, err)
								opts = append(opts, lb.WithTieBreak(tb))
							}
							board, err := lb.New(b.Client, shardName(t, b), opts...)
							require.NoError(t, err)
							sharded, cluster := sh != nil, b.Name == "cluster"
							many := map[string]float64{}
							for i := range 50 {
								many[fmt.Sprintf("m%02d", i)] = float64(i%9 - 2)
							}
							type op struct {
								name string
								want int64
								fn   func() error
							}
							two := func(one, shardedOne, shardedCluster int64) int64 {
								switch {
								case !sharded:
									return one
								case cluster:
									return shardedCluster
								}
								return shardedOne
							}
							rbOne := int64(1)
							if store {
								rbOne = 2
							}
							i := 0
							ops := []op{
								{"Set", two(1, 1, 2), func() error { i++; return board.Set(ctx, "m01", float64(i%7-3)) }},
								{"Set daily", two(1, 1, 2), func() error { i++; return board.Set(ctx, "m02", float64(i%5), lb.In(lb.Daily())) }},
								{"SubmitMany", two(1, 1, 2), func() error { return board.SubmitMany(ctx, many) }},
								{"Remove", two(1, 1, 2), func() error { return board.Remove(ctx, "m03", "m04", "ghost") }},
								{"Ranks", two(1, 2, 2), func() error { _, err := board.Ranks(ctx, []string{"m05", "ghost", "m06"}); return err }},
								{"Among", 1, func() error { _, err := board.Among(ctx, []string{"m05", "ghost", "m06", "m07"}); return err }},
								{"RemoveBetween", two(rbOne, 2, 3), func() error {
									_, err := board.RemoveBetween(ctx, 5.5, 5.5)
									require.NoError(t, board.SubmitMany(ctx, map[string]float64{"m01": 5.5, "m09": 5.5}))
									_, err2 := board.RemoveBetween(ctx, 5.5, 5.5)
									return errors.Join(err, err2)
								}},
							}
							for _, o := range ops {
								require.NoError(t, o.fn(), "%s warm-up", o.name)
								require.NoError(t, o.fn(), "%s warm-up", o.name)
								if o.name == "RemoveBetween" {
									require.NoError(t, board.SubmitMany(ctx, map[string]float64{"m01": 5.5, "m09": 5.5}))
									before := b.Client.Calls()
									n, err := board.RemoveBetween(ctx, 5.5, 5.5)
									require.NoError(t, err)
									require.Equal(t, int64(2), n)
									require.LessOrEqual(t, b.Client.Calls()-before, o.want, "%s round trips", o.name)
									continue
								}
								before := b.Client.Calls()
								require.NoError(t, o.fn(), o.name)
								require.LessOrEqual(t, b.Client.Calls()-before, o.want, "%s round trips", o.name)
							}
						})
					}
				}
			}
		}
	})
}
