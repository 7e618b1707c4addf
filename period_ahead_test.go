package leaderboard_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// aheadPair is two processes of one daily board whose clocks differ by
// 0.6 s, within the default WithClockSkew: a has crossed midnight and
// writes into the new day, b is 0.3 s before it.
type aheadPair struct {
	a, b     *lb.Leaderboard
	name     string
	clkB     *testClock
	midnight time.Time
}

func newAheadPair(t *testing.T, b *testredis.Backend, opts ...lb.Option) aheadPair {
	midnight := time.Date(2027, 3, 2, 0, 0, 0, 0, time.UTC)
	name := b.BoardName(t)
	clkA := &testClock{now: midnight.Add(300 * time.Millisecond)}
	clkB := &testClock{now: midnight.Add(-300 * time.Millisecond)}
	opts = append([]lb.Option{lb.WithWindows(lb.Daily())}, opts...)
	pa, err := lb.New(b.Client, name, append(opts, lb.WithClock(clkA.Now))...)
	require.NoError(t, err)
	pb, err := lb.New(b.Client, name, append(opts, lb.WithClock(clkB.Now))...)
	require.NoError(t, err)
	return aheadPair{a: pa, b: pb, name: name, clkB: clkB, midnight: midnight}
}

// TestLivePeriodsReachClockAhead: Remove, Delete and Rebuild run by a
// process whose clock is a little behind another's (within the clock
// skew) reach the period the other already writes into: else, once the
// first clock crosses too, a removed cheater is back, a deleted board is
// back, and a score the store holds is missing from a board that Present
// reports whole.
func TestLivePeriodsReachClockAhead(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range []struct {
			name string
			opts []lb.Option
		}{{"plain", nil}, {"sharded", []lb.Option{lb.WithShards(3)}}} {
			t.Run(kind.name, func(t *testing.T) {
				t.Run("remove", func(t *testing.T) { aheadRemove(t, b, kind.opts) })
				t.Run("delete", func(t *testing.T) { aheadDelete(t, b, kind.opts) })
				t.Run("rebuild", func(t *testing.T) { aheadRebuild(t, b, kind.opts) })
			})
		}
	})
}

func aheadRemove(t *testing.T, b *testredis.Backend, opts []lb.Option) {
	ctx := context.Background()
	p := newAheadPair(t, b, opts...)
	_, err := p.a.Submit(ctx, "cheater", 1e6)
	require.NoError(t, err)
	require.NoError(t, p.b.Remove(ctx, "cheater"))
	p.clkB.Set(p.midnight.Add(time.Second))
	_, err = p.b.Rank(ctx, "cheater")
	require.ErrorIs(t, err, lb.ErrNotRanked, "the removed member is back after midnight")
}

func aheadDelete(t *testing.T, b *testredis.Backend, opts []lb.Option) {
	ctx := context.Background()
	p := newAheadPair(t, b, opts...)
	_, err := p.a.Submit(ctx, "p", 5)
	require.NoError(t, err)
	require.NoError(t, p.b.Delete(ctx))
	n, err := p.b.Count(ctx, lb.At(p.midnight))
	require.NoError(t, err)
	require.Zero(t, n, "the new day outlived Delete")
}

func aheadRebuild(t *testing.T, b *testredis.Backend, opts []lb.Option) {
	ctx := context.Background()
	p := newAheadPair(t, b, append(opts, lb.WithStore(newMemStore()))...)
	_, err := p.b.Rebuild(ctx)
	require.NoError(t, err)
	_, err = p.a.Submit(ctx, "p", 5)
	require.NoError(t, err)
	b.Wipe(t, p.name)
	_, err = p.b.Rebuild(ctx)
	require.NoError(t, err)
	p.clkB.Set(p.midnight.Add(time.Second))
	ok, err := p.b.Present(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	st, err := p.b.Rank(ctx, "p")
	require.NoError(t, err, "a score the store holds is missing after Rebuild")
	require.Equal(t, 5.0, st.Score)
}

// TestAtFarFuture: a read At a time beyond what Unix milliseconds hold
// (an expiry computed there wrapped to 1970) reads an empty period, not
// ErrExpired.
func TestAtFarFuture(t *testing.T) {
	b := testredis.Mini(t)
	board, _ := newBoard(t, b, lb.WithWindows(lb.Daily()))
	es, err := board.Top(context.Background(), 3, lb.At(time.Unix(1<<62, 0)))
	require.NoError(t, err)
	require.Empty(t, es)
}
