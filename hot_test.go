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

// TestHotTopCache: with WithHotTop and a client that tracks keys, Top and
// Range within the top k come from the client's memory, a write below the
// top leaves them there, and a write into the top (from this process or
// another) reaches them within moments. On miniredis, which does not
// track keys, every read reaches the mirror in Redis: the answers are the
// same.
func TestHotTopCache(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		c := b.Caching(t)
		caching := c != nil
		if !caching {
			c = b.Client
		}
		name := b.BoardName(t)
		board, err := lb.New(c, name, lb.WithHotTop(10), lb.WithPolicy(lb.Replace))
		require.NoError(t, err)
		other, err := lb.New(b.Client, name, lb.WithHotTop(10), lb.WithPolicy(lb.Replace)) // another process
		require.NoError(t, err)
		scores := map[string]float64{}
		for i := range 100 {
			scores[fmt.Sprintf("m%02d", i)] = float64(i)
		}
		require.NoError(t, board.SubmitMany(ctx, scores))
		want, err := board.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, "m99", want[0].Member)

		// The first read found no mirror and built it; the next ones read
		// it from Redis into the cache, once the invalidations of the
		// writes before have arrived.
		// An invalidation that arrives late drops a copy filled after it:
		// warm up twice, a moment apart.
		for round := 0; caching && round < 2; round++ {
			time.Sleep(100 * time.Millisecond)
			for tries := 0; ; tries++ {
				hits := c.CacheHits()
				_, err = board.Top(ctx, 10)
				require.NoError(t, err)
				if c.CacheHits() > hits {
					break
				}
				require.Less(t, tries, 1000, "Top(10) never came from the cache")
				time.Sleep(time.Millisecond)
			}
		}
		served := func(what string, read func() error) {
			t.Helper()
			before, hits := c.Calls(), c.CacheHits()
			require.NoError(t, read(), what)
			if caching {
				require.Equal(t, before, c.Calls(), "%s reached Redis", what)
				require.Greater(t, c.CacheHits(), hits, what)
			}
		}
		served("Top(10)", func() error { _, err := board.Top(ctx, 10); return err })
		served("Top(3)", func() error { _, err := board.Top(ctx, 3); return err })
		served("Range(2, 9)", func() error {
			got, err := board.Range(ctx, 2, 9)
			require.Equal(t, want[1:9], got)
			return err
		})

		// A write below the top does not touch the mirror: the cached
		// copy stays, and stays right.
		before := c.Calls()
		_, err = board.Submit(ctx, "low", 5)
		require.NoError(t, err)
		require.Equal(t, before+1, c.Calls(), "a Submit below the top: one round trip")
		time.Sleep(50 * time.Millisecond) // an invalidation would have arrived
		served("Top(10) after a write below the top", func() error {
			got, err := board.Top(ctx, 10)
			require.Equal(t, want, got)
			return err
		})

		// Writes into the top, from this process and from another, show.
		eventually := func(member string, rank int64) {
			t.Helper()
			deadline := time.Now().Add(2 * time.Second)
			for {
				got, err := board.Top(ctx, 10)
				require.NoError(t, err)
				if got[rank-1].Member == member {
					return
				}
				require.True(t, time.Now().Before(deadline), "%s not at %d in %v", member, rank, got)
				time.Sleep(time.Millisecond)
			}
		}
		before = c.Calls()
		_, err = board.Submit(ctx, "star", 1000)
		require.NoError(t, err)
		require.Equal(t, before+1, c.Calls(), "a Submit into the top that this process expects: one round trip")
		eventually("star", 1)
		_, err = other.Submit(ctx, "rival", 500)
		require.NoError(t, err)
		eventually("rival", 2)
		_, err = other.Submit(ctx, "star", 1) // leaves the top
		require.NoError(t, err)
		eventually("rival", 1)
		require.NoError(t, other.Remove(ctx, "rival"))
		eventually("m99", 1)
	})
}

// TestHotTopAfterRebuild: a Rebuild replaces a period with the store's
// truth and drops its top mirror, which the next read builds from the
// rebuilt period: no member the store does not know stays on the cached top.
func TestHotTopAfterRebuild(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		board, name := newBoard(t, b, lb.WithStore(newMemStore()), lb.WithHotTop(3))
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"ana": 30, "ben": 20, "cai": 10}))
		// A member written around the SDK (and its store), then the mirror
		// built again with it.
		c := b.Client.Client
		key := "lb:{" + name + "}:alltime"
		require.NoError(t, c.Do(ctx, c.B().Zadd().Key(key).ScoreMember().ScoreMember(99, "rogue").Build()).Error())
		require.NoError(t, c.Do(ctx, c.B().Del().Key("lb:{"+name+"}::top:alltime").Build()).Error())
		top, err := board.Top(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, "rogue", top[0].Member)

		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		top, err = board.Top(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, []string{"ana", "ben", "cai"}, []string{top[0].Member, top[1].Member, top[2].Member})
	})
}

// TestHotTopOptions: k is 1..MaxN, and a sharded board has none yet.
func TestHotTopOptions(t *testing.T) {
	c := testredis.Mini(t).Client
	for _, k := range []int{0, -1, lb.MaxN + 1} {
		_, err := lb.New(c, "b", lb.WithHotTop(k))
		require.ErrorIs(t, err, lb.ErrInvalidArgument, "k=%d", k)
	}
	_, err := lb.New(c, "b", lb.WithHotTop(10), lb.WithShards(0))
	require.ErrorIs(t, err, lb.ErrInvalidArgument)
	for _, k := range []int{1, lb.MaxN} {
		_, err := lb.New(c, "b", lb.WithHotTop(k))
		require.NoError(t, err, "k=%d", k)
	}
}
