package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestLifecycleNeighbours: Reset and Delete of a board, plain or sharded
// (with a shadow layout and a hot top), leave no key of what they clear
// behind (a SCAN of the board's hash tags) and touch no key of a board
// whose name or prefix is close to its own: a name it is a prefix of, one
// with a colon after it, the same name under another prefix.
func TestLifecycleNeighbours(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{
			"plain-hot": {lb.WithHotTop(5)},
			"sharded-shadow-hot": {lb.WithShards(0, 40), lb.WithShadowShards(20), lb.WithHotTop(5),
				lb.WithClockSkew(time.Minute)},
		} {
			t.Run(kind, func(t *testing.T) { runLifecycleNeighbours(t, b, opts) })
		}
	})
}

func runLifecycleNeighbours(t *testing.T, b *testredis.Backend, opts []lb.Option) {
	ctx := context.Background()
	name := shardName(t, b)
	yday := future.Add(-24 * time.Hour)
	base := append(opts, lb.WithWindows(lb.Daily(), lb.AllTime()), lb.WithRetention(48*time.Hour), lb.WithClock(fixed(future)))
	type nb struct {
		name, prefix string
	}
	boards := []nb{{name, "lb"}, {name + ":x", "lb"}, {name + "x", "lb"}, {name + "-", "lb"}, {name, "lb2"}, {name, "lb:" + name}}
	made := make([]*lb.Leaderboard, len(boards))
	for i, n := range boards {
		t.Cleanup(func() { b.Wipe(t, n.name) })
		board, err := lb.New(b.Client, n.name, append(base, lb.WithKeyPrefix(n.prefix))...)
		require.NoError(t, err)
		made[i] = board
		for j := range 12 {
			m := fmt.Sprint("m", j)
			_, err := board.Submit(ctx, m, float64(j*7-10), lb.WithData("d-"+m), lb.WithID(fmt.Sprint("id-", j)))
			require.NoError(t, err)
			_, err = board.Submit(ctx, m, float64(j*5-3), lb.WithTime(yday))
			require.NoError(t, err)
		}
		_, err = board.Top(ctx, 5) // fills a hot mirror
		require.NoError(t, err)
		_, err = board.Top(ctx, 5, lb.In(lb.AllTime()))
		require.NoError(t, err)
	}
	snap := func() map[string]string {
		out := map[string]string{}
		for _, k := range allKeys(t, b, name) {
			out[k] = ""
		}
		return out
	}
	before := snap()
	own := func(k string) bool {
		return strings.Contains(k, "lb:{"+name+"}") || strings.Contains(k, "lb:{"+name+"#")
	}
	today := lb.Daily().Period(future).ID
	require.NoError(t, made[0].Reset(ctx))
	after := snap()
	for k := range before {
		if own(k) && strings.Contains(k, today) && !strings.Contains(k, "::turn") {
			require.NotContains(t, after, k, "Reset left a key of today's period")
		} else if !own(k) {
			require.Contains(t, after, k, "Reset of %s took a neighbour's key", name)
		}
	}
	for k := range after {
		require.Contains(t, before, k, "Reset made a key")
	}
	n, err := made[0].Count(ctx, lb.In(lb.AllTime()))
	require.NoError(t, err)
	require.Equal(t, int64(12), n)
	require.NoError(t, made[0].Delete(ctx))
	after = snap()
	for k := range after {
		if own(k) && strings.Contains(k, "::turn") {
			// A Cluster's mirrors' turn counters expire on their own
			// (documented on Delete).
			c := b.Client.Client
			ttl, err := c.Do(ctx, c.B().Pttl().Key(k).Build()).AsInt64()
			require.NoError(t, err)
			require.Greater(t, ttl, int64(0), k)
			require.LessOrEqual(t, ttl, int64(10_000), k)
			continue
		}
		require.False(t, own(k), "Delete left %s", k)
	}
	for k := range before {
		if !own(k) {
			require.Contains(t, after, k, "Delete of %s took a neighbour's key", name)
		}
	}
	for _, board := range made[1:] {
		sts, err := board.Ranks(ctx, []string{"m3"}, lb.IncludeData())
		require.NoError(t, err)
		require.Equal(t, "d-m3", sts[0].Data)
		require.Equal(t, int64(12), sts[0].Total)
	}
}

// allKeys lists every key whose name holds name: the board's and its
// neighbours'.
func allKeys(t *testing.T, b *testredis.Backend, name string) []string {
	return b.Keys(t, "*"+name+"*")
}
