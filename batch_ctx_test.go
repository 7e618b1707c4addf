package leaderboard_test

import (
	"context"
	"fmt"
	"testing"
	"time"

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

// Callers of one batch whose ctxs share a Done are woken together (one
// watch of that ctx a batch, not a select each, even when the batch's
// first caller has a ctx of its own): when that ctx ends they
// return its error at once, and the batch's other callers (another ctx,
// one that cannot end) still get their Results when it is written; when
// the batch is written first, every caller gets its Result, the ctx's
// later end changing nothing.
func TestBatcherSharedCtx(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {0, 100}} {
			board, _ := newBoard(t, b, lb.WithShards(shards...))
			for _, endFirst := range []bool{true, false} {
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				shared, cancel := context.WithCancel(context.Background())
				own, cancelOwn := context.WithCancel(context.Background())
				// The first caller's ctx is its own: the watch starts
				// with the two sharing one after it.
				ctxs := []context.Context{own, shared, shared, context.Background(), shared}
				isShared := func(i int) bool { return ctxs[i] == shared }
				type answer struct {
					res lb.Result
					err error
				}
				answers := make([]chan answer, len(ctxs))
				for i, ctx := range ctxs {
					answers[i] = make(chan answer, 1)
					before, fin := lb.BatchJoined(bt), make(chan struct{})
					go func() {
						defer close(fin)
						res, err := bt.Submit(ctx, fmt.Sprintf("m%d", i), float64(10+i))
						answers[i] <- answer{res, err}
					}()
					waitJoined(bt, before, fin)
				}
				require.True(t, lb.BatchWatched(bt), "three callers share a ctx: the batch should watch it")
				if endFirst {
					cancel()
					for _, i := range []int{1, 2, 4} {
						select {
						case a := <-answers[i]:
							require.ErrorIs(t, a.err, context.Canceled, "caller %d", i)
						case <-time.After(10 * time.Second):
							t.Fatalf("caller %d of the ended ctx still waits", i)
						}
					}
				}
				require.NoError(t, bt.Flush(context.Background()))
				for i := range ctxs {
					if endFirst && isShared(i) {
						continue
					}
					var a answer
					select {
					case a = <-answers[i]:
					case <-time.After(10 * time.Second):
						t.Fatalf("caller %d still waits for a batch written", i)
					}
					require.NoError(t, a.err, "caller %d", i)
					require.Equal(t, fmt.Sprintf("m%d", i), a.res.Standing.Member, "caller %d", i)
					require.Equal(t, float64(10+i), a.res.Standing.Score, "caller %d", i)
					require.Positive(t, a.res.Standing.Rank, "caller %d", i)
				}
				cancel()
				cancelOwn()
				require.NoError(t, bt.Close(context.Background()))
			}
		}
	})
}

// A Batcher's Submit with a ctx that has already ended returns ctx's error
// as the board's Submit does, a submission whose every window period has
// closed too (it joins no batch: it was answered at once, as written),
// with a store or without, and records nothing.
func TestBatcherEndedCtxClosedWindows(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	ended, cancel := context.WithCancel(ctx)
	cancel()
	late := lb.WithTime(future.AddDate(0, 0, -5))
	for _, withStore := range []bool{false, true} {
		store := newMemStore()
		opts := []lb.Option{lb.WithWindows(lb.Daily()), lb.WithClock(fixed(future))}
		if withStore {
			opts = append(opts, lb.WithStore(store))
		}
		board, _ := newBoard(t, b, opts...)
		_, err := board.Submit(ended, "p", 1, late)
		require.ErrorIs(t, err, context.Canceled, "the board's Submit, for comparison")
		bt, err := board.NewBatcher()
		require.NoError(t, err)
		_, err = bt.Submit(ended, "p", 1, late)
		require.ErrorIs(t, err, context.Canceled, "store %v", withStore)
		require.NoError(t, bt.Close(ctx))
		require.Empty(t, store.subs, "store %v", withStore)
	}
}
