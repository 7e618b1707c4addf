package leaderboard_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// A bound of -0 is the bound 0 (-0 == 0: both put a score of 0 in the shard
// above them), so processes of one board given WithShards(-0, 10) and
// WithShards(0, 10) (a bound parsed from "-0", one ProposeBounds made of a
// spike at -5e-324) are the same board: the same keys, each reading what the
// other wrote.
func TestNegativeZeroBoundIsZero(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := b.BoardName(t)
		plus, err := lb.New(b.Client, name, lb.WithShards(0, 10))
		require.NoError(t, err)
		minus, err := lb.New(b.Client, name, lb.WithShards(math.Copysign(0, -1), 10))
		require.NoError(t, err)
		t.Cleanup(func() { _ = plus.Delete(context.Background()) })
		_, err = plus.Submit(ctx, "p", 5)
		require.NoError(t, err)
		_, err = minus.Submit(ctx, "q", -5)
		require.NoError(t, err)
		for _, board := range []*lb.Leaderboard{plus, minus} {
			top, err := board.Top(ctx, 10)
			require.NoError(t, err)
			require.Equal(t, []lb.Entry{{Member: "p", Score: 5, Rank: 1}, {Member: "q", Score: -5, Rank: 2}}, top)
		}
	})
}
