package leaderboard_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// tornClient runs a DoMulti that reads a member's place in a shard (a
// ZREVRANK among its commands) one command at a time, and runs between
// right after each ZCARD: writes that Redis runs between two commands of
// one pipeline, as it may when a read of the socket splits the pipeline.
// A read may send two pipelines at once (doApart): between runs one call
// at a time.
type tornClient struct {
	rueidis.Client
	between func()
	mu      sync.Mutex
}

func (c *tornClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	names := make([]string, len(cmds))
	for i, cmd := range cmds {
		names[i] = cmd.Commands()[0] // read before Do recycles the command
	}
	if !slices.Contains(names, "ZREVRANK") {
		return c.Client.DoMulti(ctx, cmds...)
	}
	out := make([]rueidis.RedisResult, len(cmds))
	for i, cmd := range cmds {
		out[i] = c.Client.Do(ctx, cmd)
		if names[i] == "ZCARD" {
			c.mu.Lock()
			c.between()
			c.mu.Unlock()
		}
	}
	return out
}

// TestShardedPlaceTornByWrite: under Ordinal ranks a member's place in its
// shard is three commands of one pipeline (its shard's count, position and
// score), not a transaction. Members written above it between the count
// and the position leave the count short of the place: the standing's
// rank must still not pass its total.
func TestShardedPlaceTornByWrite(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := shardName(t, b)
		opts := []lb.Option{lb.WithShards(50), lb.WithPolicy(lb.Replace)}
		writer, err := lb.New(b.Client, name, opts...)
		require.NoError(t, err)
		require.NoError(t, writer.SubmitMany(ctx, map[string]float64{"a": 60, "m": 55, "c": 10}))
		added := 0
		c := &tornClient{Client: b.Client, between: func() {
			// Two members above m, in its shard, after each count read.
			for range 2 {
				added++
				if _, err := writer.Submit(ctx, fmt.Sprintf("x%d", added), float64(100+added)); err != nil {
					t.Errorf("a write between a pipeline's commands: %v", err) // not require: maybe not the test's goroutine
				}
			}
		}}
		board, err := lb.New(c, name, opts...)
		require.NoError(t, err)
		got, err := board.Ranks(ctx, []string{"m"})
		require.NoError(t, err)
		require.Equal(t, int64(4), got[0].Rank, "m's place read after two members landed above it")
		require.LessOrEqual(t, got[0].Rank, got[0].Total, "Ranks: %+v", got[0])

		// Rank reads the same three commands on a Cluster, a shard's after
		// another's (one script on one node, where nothing runs between).
		st, err := board.Rank(ctx, "m")
		require.NoError(t, err)
		require.LessOrEqual(t, st.Rank, st.Total, "Rank: %+v", st)
		require.GreaterOrEqual(t, st.Percentile, 0.0, "Rank: %+v", st)
	})
}
