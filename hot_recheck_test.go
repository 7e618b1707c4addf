package leaderboard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestHotTopRecheck: a cached Top that rueidis's cache answered is
// answered again from this process's snapshot, without asking the cache,
// for HotRecheck and no longer; a write of this process that reaches the
// top replaces the snapshot (the next read asks the cache), another
// process's shows once HotRecheck has passed after its invalidation; and
// on a client without a cache every read reaches Redis, however close
// together. The board's clock for this is stopped and moved by hand.
func TestHotTopRecheck(t *testing.T) {
	if lb.HotCoarseClock {
		t.Skip("this platform's monotonic clock cannot time HotRecheck: every read asks the cache")
	}
	eachHotKind(t, runHotTopRecheck)
}

// uncachedRecheck loads the board name on b.Client, which caches
// nothing, and checks that every Top there reaches Redis on a stopped
// clock.
func uncachedRecheck(t *testing.T, b *testredis.Backend, name string, opts []lb.Option) {
	t.Helper()
	uncached, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	loadHotBoard(t, uncached)
	lb.StopHotClock(uncached)
	before := b.Client.Calls()
	for range 3 {
		_, err := uncached.Top(context.Background(), 10)
		require.NoError(t, err)
	}
	require.Equal(t, before+3, b.Client.Calls(), "Tops on a client without a cache")
}

func runHotTopRecheck(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	ctx := context.Background()
	name := shardName(t, b)
	opts := append([]lb.Option{lb.WithHotTop(10), lb.WithPolicy(lb.Replace)}, kind...)
	other, err := lb.New(b.Client, name, opts...) // another process
	require.NoError(t, err)
	uncachedRecheck(t, b, name, opts)

	c := b.Caching(t)
	if c == nil {
		return // miniredis tracks no keys: nothing is cached
	}
	board, err := lb.New(c, name, opts...)
	require.NoError(t, err)
	warmHotCache(t, c, board)
	advance := lb.StopHotClock(board)
	asked := func() int64 { return c.Calls() + c.CacheHits() } // every DoCache
	top := func() []lb.Entry {
		t.Helper()
		got, err := board.Top(ctx, 10)
		require.NoError(t, err)
		return got
	}
	// The first read asks the cache and confirms; the next ones, at the
	// same moment and up to HotRecheck after it, do not ask.
	for range 2 {
		n := asked()
		top()
		require.Equal(t, n+1, asked(), "the read that confirms asks the cache")
		n = asked()
		top()
		advance(lb.HotRecheck - 1)
		top()
		require.Equal(t, n, asked(), "reads within HotRecheck of a confirmed one")
		advance(1)
	}

	// Another process's write into the top: the snapshot holds until
	// HotRecheck has passed, then the invalidation shows.
	n := asked()
	top()
	require.Equal(t, n+1, asked())
	_, err = other.Submit(ctx, "rival", 500)
	require.NoError(t, err)
	time.Sleep(50 * time.Millisecond) // the invalidation has arrived
	require.Equal(t, "m99", top()[0].Member, "a snapshot answers for HotRecheck")
	require.Equal(t, n+1, asked())
	recheckShows(t, top, advance, "rival")

	// This process's write into the top replaces the snapshot: the next
	// read asks the cache at the same moment.
	top()
	_, err = board.Submit(ctx, "star", 1000)
	require.NoError(t, err)
	n = asked()
	top()
	require.Greater(t, asked(), n, "a read after this process's write into the top asked nothing")
	recheckShows(t, top, advance, "star")
}

// recheckShows reads top, moving the stopped clock on by HotRecheck each
// time, until member leads it, for up to 2 s.
func recheckShows(t *testing.T, top func() []lb.Entry, advance func(time.Duration), member string) {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Second); top()[0].Member != member; advance(lb.HotRecheck) {
		require.True(t, time.Now().Before(deadline), "%s never showed", member)
		time.Sleep(time.Millisecond)
	}
}

// TestHotTopRecheckOwnWrites: every write of this process that may change
// the top (a Submit or Set into it, a Batcher's batch, SubmitMany, Remove,
// RemoveBetween, Reset, Delete) replaces or drops its snapshot of the
// mirror: on the stopped clock, the first read after it asks the cache
// where, without the write, the confirmed snapshot answers alone; on
// every kind of board, on Redis and the Cluster.
func TestHotTopRecheckOwnWrites(t *testing.T) {
	if lb.HotCoarseClock {
		t.Skip("this platform's monotonic clock cannot time HotRecheck: every read asks the cache")
	}
	ctx := context.Background()
	writes := []struct {
		name  string
		write func(*lb.Leaderboard) error
	}{
		{"nothing", nil},
		{"Submit", func(b *lb.Leaderboard) error { _, err := b.Submit(ctx, "star", 1000); return err }},
		{"Set", func(b *lb.Leaderboard) error { return b.Set(ctx, "m50", 2000) }},
		{"Batcher", func(b *lb.Leaderboard) error {
			bt, err := b.NewBatcher()
			if err != nil {
				return err
			}
			_, err = bt.Submit(ctx, "star", 3000)
			return errors.Join(err, bt.Close(ctx))
		}},
		{"SubmitMany", func(b *lb.Leaderboard) error { return b.SubmitMany(ctx, map[string]float64{"star": 4000}) }},
		{"Remove", func(b *lb.Leaderboard) error { return b.Remove(ctx, "m99") }},
		{"RemoveBetween", func(b *lb.Leaderboard) error { _, err := b.RemoveBetween(ctx, 95, 99); return err }},
		{"Reset", func(b *lb.Leaderboard) error { return b.Reset(ctx) }},
		{"Delete", func(b *lb.Leaderboard) error { return b.Delete(ctx) }},
	}
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		c := b.Caching(t)
		if c == nil {
			return // miniredis tracks no keys: no snapshot is confirmed (TestHotTopRecheck)
		}
		for _, w := range writes {
			t.Run(w.name, func(t *testing.T) {
				board, err := lb.New(c, shardName(t, b), append([]lb.Option{lb.WithHotTop(10), lb.WithPolicy(lb.Replace)}, kind...)...)
				require.NoError(t, err)
				loadHotBoard(t, board)
				warmHotCache(t, c, board)
				lb.StopHotClock(board)
				_, err = board.Top(ctx, 10) // confirms
				require.NoError(t, err)
				if w.write != nil {
					require.NoError(t, w.write(board))
				}
				n := c.Calls() + c.CacheHits()
				_, err = board.Top(ctx, 10)
				require.NoError(t, err)
				require.Equal(t, w.write != nil, c.Calls()+c.CacheHits() > n, "the read after the write asked the cache")
			})
		}
	})
}
