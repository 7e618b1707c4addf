package leaderboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// Tests of operations whose ctx ends in the middle of them, between their
// round trips.

// cutClient cancels a ctx once a given number of calls whose commands
// match have returned, so that the operation's next round trip meets an
// ended ctx.
type cutClient struct {
	rueidis.Client
	mu     sync.Mutex
	cancel context.CancelFunc
	match  func([]rueidis.Completed) bool // nil: every call
	left   int
}

// arm cancels cancel after n more calls that match; disarm with a nil
// cancel.
func (c *cutClient) arm(cancel context.CancelFunc, n int, match func([]rueidis.Completed) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cancel, c.left, c.match = cancel, n, match
}

// counts tells whether a call of cmds counts, read before the call:
// rueidis recycles a command once it is sent.
func (c *cutClient) counts(cmds []rueidis.Completed) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.cancel != nil && (c.match == nil || c.match(cmds))
}

// returned cancels the ctx when a counted call was the nth.
func (c *cutClient) returned(counted bool) {
	if !counted {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.left--; c.left == 0 && c.cancel != nil {
		c.cancel()
	}
}

func (c *cutClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	n := c.counts([]rueidis.Completed{cmd})
	defer c.returned(n)
	return c.Client.Do(ctx, cmd)
}

func (c *cutClient) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	n := c.counts(multi)
	defer c.returned(n)
	return c.Client.DoMulti(ctx, multi...)
}

// sends matches a call that holds a command named verb.
func sends(verb string) func([]rueidis.Completed) bool {
	return func(cmds []rueidis.Completed) bool {
		return slices.ContainsFunc(cmds, func(c rueidis.Completed) bool {
			return strings.EqualFold(c.Commands()[0], verb)
		})
	}
}

// TestRebuildCutShortInSwap: a Rebuild whose ctx ends while it swaps a
// sharded period's copies in (after two of its swap transactions) returns
// the ctx's error and leaves none of its copies behind: the ones not
// swapped yet stayed for the day their expiry gives them, a full copy of
// the board's unswapped keys on each such try.
func TestRebuildCutShortInSwap(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		cut := &cutClient{Client: b.Client}
		name := shardName(t, b)
		board, err := lb.New(cut, name, lb.WithStore(newMemStore()), lb.WithShards(10, 100))
		require.NoError(t, err)
		for i := range 200 {
			_, err := board.Submit(ctx, fmt.Sprintf("m%03d", i), float64(i))
			require.NoError(t, err)
		}
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		cut.arm(cancel, 2, sends("MULTI"))
		_, err = board.Rebuild(cctx)
		cut.arm(nil, 0, nil)
		require.ErrorIs(t, err, context.Canceled)
		left := b.Keys(t, "*{"+name+"*:rebuild:*")
		require.Zero(t, len(left), "copies left behind, such as %v", left[:min(len(left), 1)])
	})
}

// TestHotMirrorGoesAfterCtxEnds: on a sharded Cluster board with a hot
// top, whose mirror upkeep is a round trip after the write's, a write
// whose ctx ends after its steps returns its answer and still deletes the
// mirror (sent on a ctx that does not end with the caller's), so Top shows
// the write: Top kept the old leader after a new best, and a removed
// cheater, until the mirror expired 10 seconds later.
func TestHotMirrorGoesAfterCtxEnds(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	cut := &cutClient{Client: b.Client}
	board, err := lb.New(cut, shardName(t, b), lb.WithShards(10, 100), lb.WithHotTop(5))
	require.NoError(t, err)
	for i, m := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		_, err := board.Submit(ctx, m, float64(i*30+1))
		require.NoError(t, err)
	}
	topIs := func(want string, why string) {
		t.Helper()
		top, err := board.Top(ctx, 1)
		require.NoError(t, err)
		require.Equal(t, want, top[0].Member, why)
	}
	topIs("h", "the mirror is built")
	cctx, cancel := context.WithCancel(ctx)
	cut.arm(cancel, 2, nil) // ends after the Submit's two steps
	res, err := board.Submit(cctx, "best", 5000)
	cut.arm(nil, 0, nil)
	cancel()
	require.NoError(t, err, "the write's answer is returned")
	require.Equal(t, int64(1), res.Rank)
	topIs("best", "a new best whose ctx ended before the mirror's upkeep")

	for after := 1; after <= 3; after++ {
		_, err = board.Submit(ctx, "cheater", 9000+float64(after))
		require.NoError(t, err)
		topIs("cheater", "before the removal")
		cctx, cancel := context.WithCancel(ctx)
		cut.arm(cancel, after, nil)
		err = board.Remove(cctx, "cheater")
		cut.arm(nil, 0, nil)
		cancel()
		_, rerr := board.Rank(ctx, "cheater")
		if err != nil && rerr == nil {
			continue // cut before the removal: nothing to show
		}
		require.ErrorIs(t, rerr, lb.ErrNotRanked, "after %d calls", after)
		// Invalidation may trail the write by milliseconds (no caching
		// client here, so none): the delete itself is what is checked.
		time.Sleep(10 * time.Millisecond)
		topIs("best", fmt.Sprintf("Remove cut after %d calls (error %v): the removed member stays out of Top", after, err))
	}
}
