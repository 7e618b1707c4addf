package leaderboard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// A Batcher's Submit with a ctx that has already ended writes nothing, as
// the board's Submit writes nothing then: it returns ctx's error, and a
// caller that retries on it must not find its first try applied as well
// (an Accumulate total counted twice).
func TestBatcherEndedCtxWritesNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, shards := range [][]float64{nil, {0, 100}} {
			board, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithShards(shards...),
				lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
			_, err := board.Submit(ctx, "seed", 10)
			require.NoError(t, err)
			before := b.Snapshot(t, name)

			ended, cancel := context.WithCancel(ctx)
			cancel()
			bt, err := board.NewBatcher()
			require.NoError(t, err)
			_, err = bt.Submit(ended, "p", 7)
			require.ErrorIs(t, err, context.Canceled)
			_, err = bt.Submit(ended, "seed", 5)
			require.ErrorIs(t, err, context.Canceled)
			_, err = board.Submit(ended, "q", 7)
			require.ErrorIs(t, err, context.Canceled, "the board's Submit, for comparison")
			require.NoError(t, bt.Close(ctx))
			require.Equal(t, before, b.Snapshot(t, name), "shards %v: a submission whose ctx had ended was written", shards)
		}
	})
}
