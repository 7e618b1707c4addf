package leaderboard_test

// Reads of a sharded board on a Cluster where a member sits in two shards:
// the state a Submit that died between its two shard writes leaves.

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// copyKind is a named set of board options.
type copyKind struct {
	name string
	opts []lb.Option
}

// crashedMove builds, on the Redis Cluster, a sharded board (bounds 0,
// 50) of m00..m29 at 3i-10 on which m10's Submit from `from` (shard 0 for
// -5, shard 2 for 60) to 20 (shard 1) lost its delete from the old shard:
// the state of a Submit between its two shard writes, or of a process that
// died there ("Duplicated" in Check). Its partition, and its copy in shard
// 1, hold 20.
func crashedMove(t *testing.T, b *testredis.Backend, from float64, opts ...lb.Option) (*lb.Leaderboard, string) {
	t.Helper()
	ctx := context.Background()
	bounds := []float64{0, 50}
	name := shardName(t, b)
	crash := &crashClient{Client: b.Client}
	board, err := lb.New(crash, name, append([]lb.Option{lb.WithPolicy(lb.Replace), lb.WithShards(bounds...)}, opts...)...)
	require.NoError(t, err)
	scores := map[string]float64{}
	for i := range 30 {
		scores[fmt.Sprintf("m%02d", i)] = float64(i*3) - 10
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	// Load every script the move uses on every node first.
	old := shardOf(bounds, from)
	for _, s := range []float64{from, 20, from} {
		_, err = board.Submit(ctx, "m10", s)
		require.NoError(t, err)
	}
	crash.arm(2, fmt.Sprintf("#s%d.", old))
	_, err = board.Submit(ctx, "m10", 20)
	require.Error(t, err, "the crashed move")
	require.True(t, crash.disarm(), "the move made fewer than two calls")
	require.Equal(t, from, zscores(t, b, shardKey(name, bounds, old, "alltime", "alltime"))["m10"], "the copy left in the old shard")
	require.Equal(t, 20.0, zscores(t, b, shardKey(name, bounds, 1, "alltime", "alltime"))["m10"], "the copy in shard 1")
	among, err := board.Among(ctx, []string{"m10"})
	require.NoError(t, err)
	require.Equal(t, 20.0, among[0].Score, "the partition holds 20")
	return board, name
}

// TestShardedAllKeepsOneCopy: All, on a sharded board on a Cluster, yields
// once a member a crashed move left in two shards when one chunk reads
// both copies (here the walk's second chunk, which reads shards 1 and 0
// after the best shard alone), as Top does. (A walk whose chunks read the
// two copies apart yields it twice, as All's doc says.)
func TestShardedAllKeepsOneCopy(t *testing.T) {
	b := testredis.Cluster(t)
	for _, kind := range []copyKind{
		{"ordinal", nil},
		{"competition", []lb.Option{lb.WithRanking(lb.Competition)}},
		{"replica", []lb.Option{lb.WithReplicaReads()}},
	} {
		t.Run(kind.name, func(t *testing.T) {
			board, _ := crashedMove(t, b, -5, kind.opts...)
			ctx := context.Background()
			top, err := board.Top(ctx, 100)
			require.NoError(t, err)
			require.Len(t, top, 30, "Top keeps one copy")
			for _, q := range [][]lb.Query{nil, {lb.IncludeData()}} {
				var got []string
				for e, err := range board.All(ctx, q...) {
					require.NoError(t, err)
					got = append(got, fmt.Sprintf("%s@%v", e.Member, e.Score))
				}
				n := 0
				for _, g := range got {
					if strings.HasPrefix(g, "m10@") {
						n++
					}
				}
				require.Equal(t, 1, n, "All(IncludeData=%v) yields m10 %d times: %v", len(q) > 0, n, got)
			}
		})
	}
}

// TestShardedScoreReadsKeepCurrentCopy: Between and AroundScore, on a
// sharded board on a Cluster, that read both copies of a member a crashed
// move left in two shards keep the one in the shard its partition's value
// belongs to, as Top does (they kept the better-placed one, the stale copy
// when it moved down).
func TestShardedScoreReadsKeepCurrentCopy(t *testing.T) {
	b := testredis.Cluster(t)
	for _, kind := range []copyKind{
		{"ordinal", nil},
		{"competition", []lb.Option{lb.WithRanking(lb.Competition)}},
		{"lowest", []lb.Option{lb.WithOrder(lb.LowestFirst)}},
		{"replica", []lb.Option{lb.WithReplicaReads()}},
	} {
		for _, from := range []float64{-5, 60} {
			t.Run(fmt.Sprint(kind.name, "/from=", from), func(t *testing.T) {
				board, _ := crashedMove(t, b, from, kind.opts...)
				ctx := context.Background()
				score := func(es []lb.Entry) string {
					var out []string
					for _, e := range es {
						if e.Member == "m10" {
							out = append(out, fmt.Sprint(e.Score))
						}
					}
					return strings.Join(out, ",")
				}
				top, err := board.Top(ctx, 100)
				require.NoError(t, err)
				require.Equal(t, "20", score(top), "Top keeps the copy its partition holds")
				for _, q := range [][]lb.Query{nil, {lb.IncludeData()}} {
					es, err := board.Between(ctx, math.Inf(-1), math.Inf(1), 100, q...)
					require.NoError(t, err)
					if got := score(es); got != "20" {
						t.Errorf("Between(-Inf, +Inf) data=%v: m10 at %s, want 20 (its partition's): %v", len(q) > 0, got, es)
					}
					_, es, err = board.AroundScore(ctx, 20, 40, q...)
					require.NoError(t, err)
					if got := score(es); got != "20" {
						t.Errorf("AroundScore(20, 40) data=%v: m10 at %s, want 20 (its partition's): %v", len(q) > 0, got, es)
					}
				}
			})
		}
	}
}
