package leaderboard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// scriptKeys records, for each DoMulti, the number of keys of each script
// call in it (EVALSHA or EVAL).
type scriptKeys struct {
	rueidis.Client
	mu    sync.Mutex
	calls [][]int
}

func (c *scriptKeys) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	var keys []int
	for _, cmd := range multi {
		args := cmd.Commands()
		if len(args) > 2 && (strings.EqualFold(args[0], "EVALSHA") || strings.EqualFold(args[0], "EVAL")) {
			n, _ := strconv.Atoi(args[2])
			keys = append(keys, n)
		}
	}
	c.mu.Lock()
	c.calls = append(c.calls, keys)
	c.mu.Unlock()
	return c.Client.DoMulti(ctx, multi...)
}

// TestShardedRemoveAtSize: a Remove of MaxN members from a board of 101
// shards and two windows (three readable periods) sweeps every other shard for each member (a
// copy a crashed write left behind): 303,000 ops. On a Cluster they went
// in one round trip, 1,000 ops a script: with more members or shards
// (40,000 members, 65 shards) no node answered within rueidis's read
// timeout, and the sweeps that came after versions.lua's bound were
// redone as repairs of every member, refused again: Remove failed after
// its first step had emptied the partitions, leaving every member in the
// shards. Now the puts and deletes go first, a script holds at most
// MaxShardOps ops and a round trip MaxRoundOps, and a sweep that finds no
// copy is never late. The board ends empty, and Check finds it clean.
func TestShardedRemoveAtSize(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		n := lb.MaxN
		if b.Mini != nil {
			n = 100 // miniredis's Lua is slow
		}
		ctx := context.Background()
		bounds := make([]float64, 100)
		for i := range bounds {
			bounds[i] = float64(10 * (i + 1))
		}
		rec := &scriptKeys{Client: b.Client}
		board, err := lb.New(rec, shardName(t, b), lb.WithShards(bounds...),
			lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
		require.NoError(t, err)
		scores := map[string]float64{}
		members := make([]string, 0, n)
		for i := range n {
			m := fmt.Sprintf("m%04d", i)
			scores[m], members = float64(i)+0.5, append(members, m)
		}
		require.NoError(t, board.SubmitMany(ctx, scores))
		rec.mu.Lock()
		rec.calls = nil
		rec.mu.Unlock()

		require.NoError(t, board.Remove(ctx, members...))
		rec.mu.Lock()
		calls := rec.calls
		rec.mu.Unlock()
		for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
			n, err := board.Count(ctx, lb.In(w))
			require.NoError(t, err)
			require.Zero(t, n, w.Name())
		}
		reps, err := board.Check(ctx, false)
		require.NoError(t, err)
		for _, r := range reps {
			require.Zero(t, r.Members, "%+v", r)
			require.Empty(t, r.Stray, "%+v", r)
		}
		if b.Name != "cluster" {
			return // one script on one node
		}
		// The first DoMulti is the partitions'; then the shards'.
		total := 0
		for _, keys := range calls[1:] {
			round := 0
			for _, k := range keys {
				ops := (k - 1) / 2 // the shard key, then two keys an op
				require.LessOrEqual(t, ops, lb.MaxShardOps, "ops of one script")
				round += ops
			}
			require.LessOrEqual(t, round, lb.MaxRoundOps, "ops of one round trip")
			total += round
		}
		// Three periods: all-time, today and yesterday (a daily period stays
		// readable for one period by default), each a delete and 100
		// sweeps a member.
		require.Equal(t, lb.MaxN*101*3, total, "ops")
		// A round trip closes before the script that would pass
		// MaxRoundOps: it holds more than MaxRoundOps-MaxShardOps ops.
		least, most := (total+lb.MaxRoundOps-1)/lb.MaxRoundOps, (total+lb.MaxRoundOps-lb.MaxShardOps)/(lb.MaxRoundOps-lb.MaxShardOps+1)
		require.GreaterOrEqual(t, len(calls)-1, least, "the shards' round trips")
		require.LessOrEqual(t, len(calls)-1, most, "the shards' round trips")
	})
}
