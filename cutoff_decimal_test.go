package leaderboard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestCutoffOfADecimalPercent: Cutoff(percent) is the entry at position
// ceil(Total*percent/100), "the score to reach to be in the best
// percent%". A percent written in decimal is a float64 a hair off it
// (64.4 is 64.400000000000006), and the product landed a hair above the
// whole position the decimal names: 64.4% of 250 members is 161 of them,
// but 250*64.4/100 computes as 161.00000000000003, and Cutoff returned
// the 162nd entry (64.8% of the board). So too 8.8% of 375 (33, not 34)
// and a third of 3 (1, not 2). On plain and sharded boards (one script on
// one node, the counts then the entry on a Cluster), every backend, with
// and without IncludeData.
func TestCutoffOfADecimalPercent(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{
			"plain":           nil,
			"plain-compete":   {lb.WithRanking(lb.Competition)},
			"sharded":         {lb.WithShards(100, 200)},
			"sharded-compete": {lb.WithShards(100, 200), lb.WithRanking(lb.Competition)},
		} {
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				for _, c := range []struct {
					total   int
					percent float64
					want    int64
				}{
					{250, 64.4, 161},
					{375, 8.8, 33},
					{3, 100.0 / 3, 1},
					{375, 8.9, 34}, // 33.375: the next whole position
					{250, 64.5, 162},
				} {
					board, err := lb.New(b.Client, shardName(t, b), opts...)
					require.NoError(t, err)
					scores := map[string]float64{}
					for i := range c.total {
						scores[fmt.Sprintf("m%03d", i)] = float64(i) // distinct: position i+1 holds c.total-1-i
					}
					require.NoError(t, board.SubmitMany(ctx, scores))
					for _, q := range [][]lb.Query{nil, {lb.IncludeData()}} {
						e, err := board.Cutoff(ctx, c.percent, q...)
						require.NoError(t, err)
						require.Equal(t, c.want, e.Rank, "Cutoff(%v) of %d members", c.percent, c.total)
						require.Equal(t, float64(int64(c.total)-c.want), e.Score, "Cutoff(%v) of %d members", c.percent, c.total)
					}
				}
			})
		}
	})
}
