package leaderboard_test

import (
	"context"
	"testing"
	"time"

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

// retryingStore is a memStore that runs retry as Rebuild starts reading
// its ids: a client's retry arriving while Rebuild puts ids back.
type retryingStore struct {
	*memStore
	retry func()
}

func (s retryingStore) IDsSince(ctx context.Context, board string, since time.Time, fn func(id, member string, received time.Time) error) error {
	if s.retry != nil {
		s.retry()
	}
	return s.memStore.IDsSince(ctx, board, since, fn)
}

// TestRebuildKeepsIDsWhileItRestoresThem: a WithID retry that reaches
// Redis while Rebuild gives Redis back its ids is a duplicate, as before
// and after. Rebuild emptied the id sets before it read the store's ids,
// and such a retry, which the store takes for a duplicate and Redis must
// then apply when it does not know the id (an ErrPending retry), was
// applied a second time on the totals just rebuilt.
func TestRebuildKeepsIDsWhileItRestoresThem(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {10}} {
			ctx := context.Background()
			store := retryingStore{memStore: newMemStore()}
			opts := []lb.Option{lb.WithStore(&store), lb.WithPolicy(lb.Accumulate)}
			if shards != nil {
				opts = append(opts, lb.WithShards(shards...))
			}
			board, _ := newBoard(t, b, opts...)
			_, err := board.Submit(ctx, "m", 5, lb.WithID("match1/m"))
			require.NoError(t, err)
			var retried lb.Result
			store.retry = func() {
				retried, err = board.Submit(ctx, "m", 5, lb.WithID("match1/m"))
				require.NoError(t, err)
			}
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			require.True(t, retried.Duplicate, "the retry during Rebuild")
			st, err := board.Rank(ctx, "m")
			require.NoError(t, err)
			require.Equal(t, 5.0, st.Score)
			res, err := board.Submit(ctx, "m", 5, lb.WithID("match1/m"))
			require.NoError(t, err)
			require.True(t, res.Duplicate, "the retry after Rebuild")
			reports, err := board.Verify(ctx)
			require.NoError(t, err)
			for _, r := range reports {
				require.True(t, r.Clean(), "%+v", r)
			}
		}
	})
}

// TestRebuildRetryAfterItsPeriodSwapped: a WithID retry that reaches
// Redis while Rebuild runs is a duplicate, also after its period was
// swapped in. After a wipe (or for an ErrPending submission) Redis does
// not know the id, and Rebuild gave it back only after every period:
// a retry between its period's swap and then (a retry the service let
// flow during the rebuild) was applied again on the totals just rebuilt,
// which held it already. The ids go back first now.
func TestRebuildRetryAfterItsPeriodSwapped(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, shards := range [][]float64{nil, {10}} {
			ctx := context.Background()
			opts := []lb.Option{lb.WithStore(newMemStore()), lb.WithPolicy(lb.Accumulate), lb.WithShards(shards...)}
			name := shardName(t, b)
			board, err := lb.New(b.Client, name, opts...)
			require.NoError(t, err)
			_, err = board.Submit(ctx, "m", 5, lb.WithID("match1/m"))
			require.NoError(t, err)
			b.Wipe(t, name) // Redis lost the board, its ids with it
			var retried []lb.Result
			_, err = board.Rebuild(ctx, lb.WithProgress(func(p lb.RebuildProgress) {
				if p.Done { // the period is swapped in, with m's 5
					res, err := board.Submit(ctx, "m", 5, lb.WithID("match1/m"))
					require.NoError(t, err)
					retried = append(retried, res)
				}
			}))
			require.NoError(t, err)
			require.NotEmpty(t, retried)
			for _, res := range retried {
				require.True(t, res.Duplicate, "shards %v: the retry during Rebuild: %+v", shards, res)
			}
			st, err := board.Rank(ctx, "m")
			require.NoError(t, err)
			require.Equal(t, 5.0, st.Score, "shards %v: counted once", shards)
			reports, err := board.Verify(ctx)
			require.NoError(t, err)
			for _, r := range reports {
				require.True(t, r.Clean(), "%+v", r)
			}
		}
	})
}
