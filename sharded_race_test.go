package leaderboard_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// afterFirstCall is a client that runs hook once, after the first call
// (Do or DoMulti) made once it is armed, before answering it: on a sharded
// Cluster board a Submit's first step (its partition).
type afterFirstCall struct {
	rueidis.Client
	hook  func()
	armed atomic.Bool
}

func (c *afterFirstCall) fire() {
	if c.armed.CompareAndSwap(true, false) {
		c.hook()
	}
}

func (c *afterFirstCall) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	defer c.fire()
	return c.Client.Do(ctx, cmd)
}

func (c *afterFirstCall) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	defer c.fire()
	return c.Client.DoMulti(ctx, multi...)
}

// TestShardedUnchangedWriteRacedBetweenSteps: a Submit that changes
// nothing (Replace with the stored score, Accumulate of 0) while another
// process's write moves the member to another shard between its two
// steps. Its second step found the member gone from the shard its
// partition named and a copy in another, took both for what a crashed
// write leaves, repaired the member and answered the other write's score
// as its own standing: "Previous 5, Changed false, Standing 20". The
// newer write's copy is its own now (its version is past the clock the
// first step saw): the Result describes this write, in its round trips,
// and the board holds the newer write alone.
func TestShardedUnchangedWriteRacedBetweenSteps(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, policy := range []lb.Policy{lb.Replace, lb.Accumulate} {
			t.Run(policy.String(), func(t *testing.T) {
				ctx := context.Background()
				name := shardName(t, b)
				opts := []lb.Option{lb.WithShards(10), lb.WithPolicy(policy)}
				other, err := lb.New(b.Client, name, opts...)
				require.NoError(t, err)
				hc := &afterFirstCall{Client: b.Client}
				cc := &testredis.CountingClient{Client: hc}
				board, err := lb.New(cc, name, opts...)
				require.NoError(t, err)
				require.NoError(t, other.SubmitMany(ctx, map[string]float64{"m": 5, "a": 1, "z": 30}))
				_, err = board.Submit(ctx, "warm", 2) // loads the scripts
				require.NoError(t, err)

				// A write that changes nothing, and one that takes the
				// member from 5 to 20, into the other shard.
				nothing, move := 5.0, 20.0
				if policy == lb.Accumulate {
					nothing, move = 0, 15
				}
				hc.hook = func() {
					_, err := other.Submit(context.Background(), "m", move)
					require.NoError(t, err)
				}
				hc.armed.Store(true)
				before := cc.Calls()
				res, err := board.Submit(ctx, "m", nothing)
				require.NoError(t, err)
				require.False(t, hc.armed.Load(), "the other write ran between the steps")
				require.False(t, res.Changed)
				require.Equal(t, 5.0, res.Previous.Score)
				require.Equal(t, 5.0, res.Standing.Score, "the standing this write left: %+v", res)
				require.LessOrEqual(t, cc.Calls()-before, int64(3), "no repair: the newer write's copy is not a leftover")

				st, err := board.Rank(ctx, "m")
				require.NoError(t, err)
				require.Equal(t, 20.0, st.Score, "the newer write stays")
				reps, err := board.Check(ctx, false)
				require.NoError(t, err)
				for _, r := range reps {
					require.True(t, r.Clean(), "%+v", r)
				}
			})
		}
	})
}

// TestShardedUnchangedWriteDropsLeftover: a Submit that changes nothing
// finds the copy a crashed move left in the member's old shard, older
// than any version its first step saw, and drops it in one round trip
// more, where it repaired the member in three.
func TestShardedUnchangedWriteDropsLeftover(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	_, name := crashedMove(t, b, -5)
	cc := &testredis.CountingClient{Client: b.Client}
	board, err := lb.New(cc, name, lb.WithPolicy(lb.Replace), lb.WithShards(0, 50))
	require.NoError(t, err)
	before := cc.Calls()
	res, err := board.Submit(ctx, "m10", 20) // the partition holds 20
	require.NoError(t, err)
	require.False(t, res.Changed)
	require.Equal(t, 20.0, res.Standing.Score)
	require.Equal(t, 20.0, res.Previous.Score)
	require.LessOrEqual(t, cc.Calls()-before, int64(3), "the leftover dropped beside the write")
	require.NotContains(t, zscores(t, b, shardKey(name, []float64{0, 50}, 0, "alltime", "alltime")), "m10", "the leftover copy")
	reps, err := board.Check(ctx, false)
	require.NoError(t, err)
	for _, r := range reps {
		require.True(t, r.Clean(), "%+v", r)
	}
}
