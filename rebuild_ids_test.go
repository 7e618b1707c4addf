package leaderboard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestRebuildForgetsIDsTheStoreLacks: Rebuild gives Redis the store's
// memory of WithID ids, not more. A Delete whose Redis step failed after
// the store deleted the board (ErrPending) left the ids in Redis, and
// Rebuild kept them: the next submission with such an id was appended to
// the store as new and taken by Redis for a duplicate (Result.Duplicate,
// nothing applied), so the store held a score Redis did not (Verify:
// Missing). An id the store holds stays a duplicate.
func TestRebuildForgetsIDsTheStoreLacks(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {10}} {
			ctx := context.Background()
			store := newMemStore()
			opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate)}
			if shards != nil {
				opts = append(opts, lb.WithShards(shards...))
			}
			board, name := newBoard(t, b, opts...)
			_, err := board.Submit(ctx, "m", 5, lb.WithID("match1/m"))
			require.NoError(t, err)
			require.NoError(t, store.DeleteBoard(ctx, name)) // Delete's store step; its Redis step failed
			_, err = board.Submit(ctx, "k", 1, lb.WithID("match1/k"))
			require.NoError(t, err)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			res, err := board.Submit(ctx, "m", 7, lb.WithID("match1/m"))
			require.NoError(t, err)
			require.False(t, res.Duplicate, "the store appended it as new")
			require.Equal(t, 7.0, res.Score)
			res, err = board.Submit(ctx, "k", 1, lb.WithID("match1/k"))
			require.NoError(t, err)
			require.True(t, res.Duplicate, "an id the store holds")
			reports, err := board.Verify(ctx)
			require.NoError(t, err)
			for _, r := range reports {
				require.True(t, r.Clean(), "%+v", r)
			}
		}
	})
}
