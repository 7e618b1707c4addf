package leaderboard_test

import (
	"context"
	"fmt"
	"testing"

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
