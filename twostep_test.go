package leaderboard_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestTwoStepAround: with WithTwoStepAround an Ordinal Around without data
// takes two calls of plain commands and answers what the script answers,
// at either end of the board too; a member without a score is
// ErrNotRanked; Competition ranks and IncludeData keep the one-call script.
func TestTwoStepAround(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := b.BoardName(t)
		for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			one, err := lb.New(b.Client, name+rank.String(), lb.WithRanking(rank))
			require.NoError(t, err)
			cc := &testredis.CountingClient{Client: b.Client}
			two, err := lb.New(cc, name+rank.String(), lb.WithRanking(rank), lb.WithTwoStepAround())
			require.NoError(t, err)
			scores := map[string]float64{}
			for i := range 40 {
				scores[fmt.Sprintf("m%02d", i)] = float64(i % 15)
			}
			require.NoError(t, one.SubmitMany(ctx, scores))
			_, err = two.Around(ctx, "m00", 3, lb.IncludeData()) // loads the script
			require.NoError(t, err)
			for _, m := range []string{"m00", "m07", "m14", "m39", "m25"} {
				for _, radius := range []int{0, 3, 30} {
					want, err := one.Around(ctx, m, radius)
					require.NoError(t, err)
					before := cc.Calls()
					got, err := two.Around(ctx, m, radius)
					require.NoError(t, err)
					require.Equal(t, want, got, "%v %s radius %d", rank, m, radius)
					calls := int64(2)
					if rank == lb.Competition {
						calls = 1
					}
					require.Equal(t, calls, cc.Calls()-before, "%v calls", rank)
				}
			}
			before := cc.Calls()
			_, err = two.Around(ctx, "m07", 2, lb.IncludeData())
			require.NoError(t, err)
			require.Equal(t, int64(1), cc.Calls()-before, "IncludeData: the script")
			_, err = two.Around(ctx, "nobody", 2)
			require.ErrorIs(t, err, lb.ErrNotRanked)
		}
	})
}

// hookClient runs hook once, after the first DoMulti whose commands hold
// a ZCARD (WithTwoStepAround's first step), before answering it.
type hookClient struct {
	rueidis.Client
	hook func()
	done atomic.Bool
}

func (c *hookClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	fire := false
	for _, cmd := range multi {
		if cs := cmd.Commands(); len(cs) > 0 && cs[0] == "ZCARD" {
			fire = true
		}
	}
	res := c.Client.DoMulti(ctx, multi...)
	if fire && c.hook != nil && c.done.CompareAndSwap(false, true) {
		c.hook()
	}
	return res
}

// TestTwoStepAroundWriteBetweenSteps: with WithTwoStepAround, one atomic
// write between the two steps (a SubmitMany that raises b and adds f below
// e) leaves e at the position the first step read, but the end of the
// board placed the slice by the count the first step read: Around must
// answer the board after the write (b..f), not a..e with b's new score,
// the Around of neither board.
func TestTwoStepAroundWriteBetweenSteps(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := b.BoardName(t)
		writer, err := lb.New(b.Client, name, lb.WithPolicy(lb.Replace))
		require.NoError(t, err)
		require.NoError(t, writer.SubmitMany(ctx, map[string]float64{"a": 50, "b": 40, "c": 30, "d": 20, "e": 10}))
		hc := &hookClient{Client: b.Client}
		hc.hook = func() {
			if err := writer.SubmitMany(ctx, map[string]float64{"b": 45, "f": 5}); err != nil {
				t.Error(err)
			}
		}
		board, err := lb.New(hc, name, lb.WithPolicy(lb.Replace), lb.WithTwoStepAround())
		require.NoError(t, err)
		got, err := board.Around(ctx, "e", 2)
		require.NoError(t, err)
		want, err := writer.Around(ctx, "e", 2) // the board after the write
		require.NoError(t, err)
		require.True(t, hc.done.Load(), "the write ran between the steps")
		require.Equal(t, want, got)
	})
}
