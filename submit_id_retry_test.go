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

// TestPendingRetryAppliesTheStored: a submission that reached the store
// but not Redis (ErrPending) is retried with its id, another score and no
// WithTime, after the day turned. Redis applies the submission the store
// holds, its score in its day, and so holds what a Rebuild gives: the
// acknowledged standing survives it (before, Redis applied the retry's
// score in the new day, and a Rebuild took it back).
func TestPendingRetryAppliesTheStored(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		day := future.Truncate(24 * time.Hour)
		tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: day.Add(-48 * time.Hour), Resolution: time.Millisecond, MaxScore: 1000})
		require.NoError(t, err)
		for _, c := range []struct {
			name string
			opts []lb.Option
		}{{"plain", nil}, {"tie-break", []lb.Option{lb.WithTieBreak(tb)}}, {"sharded", []lb.Option{lb.WithShards(5)}}} {
			t.Run(c.name, func(t *testing.T) { pendingRetry(t, b, day, c.opts) })
		}
	})
}

func pendingRetry(t *testing.T, b *testredis.Backend, day time.Time, extra []lb.Option) {
	ctx := context.Background()
	clock := day.Add(-time.Second)
	store := newMemStore()
	opts := append([]lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate),
		lb.WithWindows(lb.Daily(), lb.AllTime()), lb.WithDedupeWindow(time.Hour),
		lb.WithClock(func() time.Time { return clock })}, extra...)
	board, name := newBoard(t, b, opts...)
	_, err := board.Submit(ctx, "q", 4)
	require.NoError(t, err)
	// The ctx ends once the store holds the submission, before Redis.
	gone, cancel := context.WithCancel(ctx)
	store.afterAppend = cancel
	_, err = board.Submit(gone, "p", 2, lb.WithID("b"))
	require.ErrorIs(t, err, lb.ErrPending)
	store.afterAppend = nil
	clock = day.Add(time.Second)
	res, err := board.Submit(ctx, "p", 7, lb.WithID("b"))
	require.NoError(t, err)
	require.False(t, res.Duplicate)
	require.Equal(t, 2.0, res.Score, "the stored score, not the retry's")
	require.Equal(t, day.Add(-time.Second).Format("2006-01-02"), res.Windows[0].Period, "the stored time's day")
	res, err = board.Submit(ctx, "p", 7, lb.WithID("b"))
	require.NoError(t, err)
	require.True(t, res.Duplicate, "applied once")
	requireVerified(t, board)

	before := standings(t, board, day.Add(-time.Second))
	b.Wipe(t, name)
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	require.Equal(t, before, standings(t, board, day.Add(-time.Second)), "Redis held what a Rebuild gives")
}

// standings lists every entry of every window of board (Daily at yesterday
// and now, AllTime) as "window/member=score".
func standings(t *testing.T, board *lb.Leaderboard, yesterday time.Time) []string {
	t.Helper()
	var out []string
	for _, q := range [][]lb.Query{{lb.In(lb.Daily()), lb.At(yesterday)}, {lb.In(lb.Daily())}, {lb.In(lb.AllTime())}} {
		top, err := board.Top(context.Background(), 10, q...)
		require.NoError(t, err)
		for _, e := range top {
			out = append(out, fmt.Sprintf("%d/%s=%v", len(out), e.Member, e.Score))
		}
		out = append(out, "|")
	}
	return out
}

// TestRetryAtDedupeEdge: a retry of an applied submission in the last
// millisecond of the dedupe window, after Redis forgot the id (it counts
// in milliseconds), is a duplicate: the store and Redis agree, to the
// microsecond, on where the window ends (before, the store took the retry
// for one Redis still knew, and Redis applied it again).
func TestRetryAtDedupeEdge(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for i, store := range []lb.Store{receivedOnly{newMemStore()}, newMemStore(), newMemStore()} {
			clock := future.Add(700 * time.Microsecond)
			opts := []lb.Option{lb.WithStore(store), lb.WithPolicy(lb.Accumulate),
				lb.WithDedupeWindow(time.Hour), lb.WithClock(func() time.Time { return clock })}
			if i == 2 {
				opts = append(opts, lb.WithShards(1))
			}
			board, _ := newBoard(t, b, opts...)
			_, err := board.Submit(ctx, "p", 2, lb.WithID("a"))
			require.NoError(t, err)
			clock = future.Add(time.Hour + 500*time.Microsecond)
			res, err := board.Submit(ctx, "p", 2, lb.WithID("a"))
			require.NoError(t, err)
			require.True(t, res.Duplicate, "%d: %T", i, store)
			require.Equal(t, 2.0, res.Score)
			requireVerified(t, board)
		}
	})
}

// receivedOnly is an IDKeeper that is not an IDReplayer.
type receivedOnly struct{ *memStore }

func (receivedOnly) IDSubmission() {} // hides memStore's
