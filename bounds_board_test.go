package leaderboard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestProposeBounds loads a board whose members start at 0 (a spike of
// 30%) and spread over [1, 10000) for the rest, and checks the proposal
// against the scores the test knows: the spike keeps a shard of its own,
// the other shards hold about equal shares, a board made with the bounds
// is accepted; on unsharded, sharded and tie-broken boards, either order.
func TestProposeBounds(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: future.Add(-time.Hour), Resolution: time.Second, MaxScore: 1e6, Decimals: 2})
		require.NoError(t, err)
		for name, opts := range map[string][]lb.Option{
			"plain":            {},
			"plain lowest":     {lb.WithOrder(lb.LowestFirst)},
			"sharded":          {lb.WithShards(5000)},
			"sharded lowest":   {lb.WithShards(100, 7000), lb.WithOrder(lb.LowestFirst)},
			"tie-break":        {lb.WithTieBreak(tb), lb.WithClock(fixed(future))},
			"tie-break shards": {lb.WithTieBreak(tb), lb.WithClock(fixed(future)), lb.WithShards(2500.5)},
		} {
			t.Run(name, func(t *testing.T) {
				board, _ := newBoard(t, b, opts...)
				got, err := board.ProposeBounds(ctx, 5)
				require.NoError(t, err)
				require.Empty(t, got, "an empty board")
				rng := rand.New(rand.NewPCG(11, 12))
				scores := map[string]float64{}
				for i := range 2000 {
					s := 0.0
					if i%10 >= 3 {
						s = float64(1+rng.IntN(999_900)) / 100
					}
					scores[fmt.Sprintf("p%d", i)] = s
				}
				require.NoError(t, board.SubmitMany(ctx, scores))
				bounds, err := board.ProposeBounds(ctx, 5)
				require.NoError(t, err)
				require.Len(t, bounds, 4, "%v", bounds)
				require.True(t, slices.IsSorted(bounds))
				_, err = lb.New(b.Client, "proposed", lb.WithShards(bounds...))
				require.NoError(t, err, "WithShards(%v)", bounds)

				sizes := make([]int, len(bounds)+1)
				for _, s := range scores {
					n := 0
					for _, x := range bounds {
						if x <= s {
							n++
						}
					}
					sizes[n]++
				}
				// The zeros alone in the lowest shard, with at most a
				// sample's step (2000/80) of members above them.
				require.GreaterOrEqual(t, sizes[0], 600, "sizes %v under %v", sizes, bounds)
				require.LessOrEqual(t, sizes[0], 600+25, "sizes %v under %v", sizes, bounds)
				for _, n := range sizes[1:] {
					require.InDelta(t, 350, n, 60, "sizes %v under %v", sizes, bounds)
				}
			})
		}
		board, _ := newBoard(t, b)
		for _, bad := range []int{-1, 0, 1, lb.MaxProposedShards + 1} {
			_, err := board.ProposeBounds(ctx, bad)
			require.ErrorIs(t, err, lb.ErrInvalidArgument, "shards = %d", bad)
		}
		_, err = board.ProposeBounds(ctx, 4, lb.In(lb.Daily()))
		require.ErrorIs(t, err, lb.ErrInvalidArgument, "a window the board lacks")
	})
}
