package leaderboard_test

import (
	"context"
	"errors"
	"strconv"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// lossPoint is the keys matching patterns as they are now, to put back
// later: what a replica that takes over after a primary's last writes
// holds (Redis replicates asynchronously), without failing a node over.
// It copies each key by its type, as miniredis's DUMP takes strings alone.
type lossPoint map[string]lossKey

type lossKey struct {
	kind     string
	items    []string // zset: member, score; hash: field, value; set, string: values
	expireAt int64    // PEXPIRETIME: -1 for none
}

func takeLossPoint(t *testing.T, b *testredis.Backend, patterns ...string) lossPoint {
	t.Helper()
	ctx, c := context.Background(), b.Client.Client
	lp := lossPoint{}
	for _, p := range patterns {
		for _, k := range b.Keys(t, p) {
			kind, err := c.Do(ctx, c.B().Type().Key(k).Build()).ToString()
			require.NoError(t, err)
			var read rueidis.Completed
			switch kind {
			case "zset":
				read = c.B().Zrange().Key(k).Min("0").Max("-1").Withscores().Build()
			case "hash":
				read = c.B().Hgetall().Key(k).Build()
			case "set":
				read = c.B().Smembers().Key(k).Build()
			case "string":
				read = c.B().Get().Key(k).Build()
			default:
				t.Fatalf("loss point %s: type %q", k, kind)
			}
			res := c.DoMulti(ctx, read, c.B().Pexpiretime().Key(k).Build())
			lk := lossKey{kind: kind}
			switch kind {
			case "string":
				v, err := res[0].ToString()
				require.NoError(t, err)
				lk.items = []string{v}
			case "zset":
				zs, err := res[0].AsZScores()
				require.NoError(t, err)
				for _, z := range zs {
					lk.items = append(lk.items, z.Member, strconv.FormatFloat(z.Score, 'g', -1, 64))
				}
			case "hash":
				m, err := res[0].AsStrMap()
				require.NoError(t, err)
				for f, v := range m {
					lk.items = append(lk.items, f, v)
				}
			default:
				lk.items, err = res[0].AsStrSlice()
				require.NoError(t, err, "loss point %s", k)
			}
			lk.expireAt, err = res[1].AsInt64()
			require.NoError(t, err)
			lp[k] = lk
		}
	}
	return lp
}

// failBack puts the keys matching patterns back as lp holds them, and
// deletes those lp lacks: the writes since lp are lost.
func (lp lossPoint) failBack(t *testing.T, b *testredis.Backend, patterns ...string) {
	t.Helper()
	ctx, c := context.Background(), b.Client.Client
	for _, p := range patterns {
		for _, k := range b.Keys(t, p) {
			require.NoError(t, c.Do(ctx, c.B().Del().Key(k).Build()).Error())
		}
	}
	for k, v := range lp {
		var args []string
		switch v.kind {
		case "zset":
			args = []string{"ZADD", k}
			for i := 0; i < len(v.items); i += 2 {
				args = append(args, v.items[i+1], v.items[i])
			}
		case "hash":
			args = append([]string{"HSET", k}, v.items...)
		case "set":
			args = append([]string{"SADD", k}, v.items...)
		default:
			args = []string{"SET", k, v.items[0]}
		}
		require.NoError(t, c.Do(ctx, c.B().Arbitrary(args...).Build()).Error(), "restore %s", k)
		if v.expireAt > 0 {
			require.NoError(t, c.Do(ctx, c.B().Pexpireat().Key(k).MillisecondsTimestamp(v.expireAt).Build()).Error())
		}
	}
}

// TestFailoverLossFound: the last writes a failover loses (a replica that
// had not received them takes over) are found, and put back, by what the
// README tells a service to run after a failover. A lost Remove leaves a
// member Redis has and the store lacks, which Verify counts (Extra) but
// does not name; a sharded board whose shards' node failed over lacks in
// its shards what its partitions (on other nodes) hold, which Verify,
// comparing the partitions with the store, finds clean: only Check does.
// The README said "run Verify, and Rebuild when it names members", which
// left both on the board.
func TestFailoverLossFound(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		t.Run("lost remove", func(t *testing.T) {
			name := b.BoardName(t)
			board, err := lb.New(b.Client, name, lb.WithStore(newMemStore()))
			require.NoError(t, err)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2}))
			pattern := "*{" + name + "}*"
			lp := takeLossPoint(t, b, pattern)
			require.NoError(t, board.Remove(ctx, "a"))
			lp.failBack(t, b, pattern)
			ok, err := board.Present(ctx)
			require.NoError(t, err)
			require.True(t, ok, "the marker is older than the lost writes")
			recoverAfterFailover(t, board)
			_, err = board.Rank(ctx, "a")
			require.ErrorIs(t, err, lb.ErrNotRanked, "the acknowledged Remove is back")
		})
		t.Run("lost shard write", func(t *testing.T) {
			name := shardName(t, b)
			board, err := lb.New(b.Client, name, lb.WithShards(0), lb.WithStore(newMemStore()))
			require.NoError(t, err)
			_, err = board.Rebuild(ctx)
			require.NoError(t, err)
			_, err = board.Submit(ctx, "a", 5)
			require.NoError(t, err)
			shards := "*{" + name + "#s*"
			lp := takeLossPoint(t, b, shards)
			_, err = board.Submit(ctx, "b", 7)
			require.NoError(t, err)
			_, err = board.Submit(ctx, "a", 9)
			require.NoError(t, err)
			lp.failBack(t, b, shards)
			recoverAfterFailover(t, board)
			es, err := board.Top(ctx, 10)
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b"}, names(es))
			require.Equal(t, 9.0, es[0].Score)
		})
	})
}

// recoverAfterFailover is what the README tells a service to run after a
// failover: Verify, Rebuild when a report is not clean, and on a sharded
// board Check with repair.
func recoverAfterFailover(t *testing.T, board *lb.Leaderboard) {
	t.Helper()
	ctx := context.Background()
	reps, err := board.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reps {
		if !r.Clean() {
			_, err := board.Rebuild(ctx)
			require.NoError(t, err)
			break
		}
	}
	if _, err := board.Check(ctx, true); err != nil && !errors.Is(err, lb.ErrInvalidArgument) {
		require.NoError(t, err)
	}
}
