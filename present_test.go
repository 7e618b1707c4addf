package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/redisnode"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// presentScores are members whose scores fall into every shard of the
// tests' bounds.
func presentScores(n int) map[string]float64 {
	out := map[string]float64{}
	for i := range n {
		out[fmt.Sprintf("m%03d", i)] = float64(i % 40)
	}
	return out
}

// tagOf is the hash tag of key, braces included.
func tagOf(key string) string {
	return key[strings.IndexByte(key, '{') : strings.IndexByte(key, '}')+1]
}

// wipeTag deletes every key under a hash tag: what a node that restarted
// empty does to each tag it holds.
func wipeTag(t *testing.T, b *testredis.Backend, tag string) {
	t.Helper()
	n, err := redisnode.Unlink(context.Background(), b.Client.Client, "*"+redisnode.GlobEscape(tag)+"*")
	require.NoError(t, err)
	require.Positive(t, n, "keys under %s", tag)
}

// requirePresent requires Present to report want, in one round trip.
func requirePresent(t *testing.T, b *testredis.Backend, board *lb.Leaderboard, want bool, msg string) {
	t.Helper()
	calls := b.Client.Calls()
	present, err := board.Present(context.Background())
	require.NoError(t, err)
	require.Equal(t, want, present, msg)
	require.Equal(t, int64(1), b.Client.Calls()-calls, "Present: one round trip")
}

// TestPresentSeesALostTag: Present reports false once the keys of any one
// hash tag the board's keys use are gone, whichever it is (the board's
// own, a shard's, a partition group's, even one with no member in it),
// where a sharded board on a Cluster spreads those tags over every node,
// and a Rebuild makes it true again. The shadow layout's tags
// (WithShadowShards) are not Present's: Check reports their loss. Delete
// deletes every marker, the shadow's too.
func TestPresentSeesALostTag(t *testing.T) {
	bounds, shadow := []float64{10, 20, 30}, []float64{15, 25}
	variants := map[string][]lb.Option{
		"plain":          nil,
		"sharded":        {lb.WithShards(bounds...)},
		"sharded-shadow": {lb.WithShards(bounds...), lb.WithShadowShards(shadow...)},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for kind, opts := range variants {
			t.Run(kind, func(t *testing.T) {
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithStore(newMemStore()), lb.WithClock(fixed(future)))...)
				require.NoError(t, err)
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				require.NoError(t, board.SubmitMany(ctx, presentScores(40)))
				requirePresent(t, b, board, true, "rebuilt")

				kb := keys.NewBoard("lb", name)
				tags := []string{kb.Tag()}
				if kind != "plain" {
					parts := kb.Partitions()
					tags = append(tags, kb.Shards(bounds)[1].Tag(),
						tagOf(parts.GroupMarker(keys.GroupOf(keys.PartitionOf("m007")))))
					empty := presentEmptyGroup(parts, presentScores(40))
					tags = append(tags, tagOf(parts.GroupMarker(empty)))
				}
				for _, tag := range tags {
					wipeTag(t, b, tag)
					requirePresent(t, b, board, false, "after "+tag+" was lost")
					_, err = board.Rebuild(ctx)
					require.NoError(t, err)
					requirePresent(t, b, board, true, "rebuilt after "+tag+" was lost")
				}

				if kind == "sharded-shadow" {
					wipeTag(t, b, kb.Shards(shadow)[0].Tag())
					requirePresent(t, b, board, true, "the shadow's shards are not Present's")
					reps, err := board.Check(ctx, false)
					require.NoError(t, err)
					require.Len(t, reps, 2)
					require.False(t, reps[1].Clean(), "Check sees the shadow's loss: %+v", reps[1])
				}

				require.NoError(t, board.Delete(ctx))
				require.Empty(t, boardKeys(t, b, name), "Delete leaves no marker")
				requirePresent(t, b, board, false, "deleted")
			})
		}
	})
}

// presentEmptyGroup is a partition group none of scores' members is in.
func presentEmptyGroup(parts keys.PartitionSet, scores map[string]float64) int {
	used := map[int]bool{}
	for m := range scores {
		used[keys.GroupOf(keys.PartitionOf(m))] = true
	}
	for g := range keys.PartitionGroups {
		if !used[g] {
			return g
		}
	}
	panic("every group holds a member")
}

// TestPresentAfterUpgrade: a sharded board rebuilt by a version that wrote
// only the board's own marker reads absent until it is rebuilt once.
func TestPresentAfterUpgrade(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := shardName(t, b)
		board, err := lb.New(b.Client, name, lb.WithShards(10, 20), lb.WithStore(newMemStore()), lb.WithClock(fixed(future)))
		require.NoError(t, err)
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		n, err := redisnode.Unlink(ctx, b.Client.Client, "*{"+redisnode.GlobEscape(name)+"#*:marker")
		require.NoError(t, err)
		require.Equal(t, int64(3+keys.PartitionGroups), n, "a marker a shard and a partition group")
		require.Len(t, b.Keys(t, "*{"+redisnode.GlobEscape(name)+"}:marker"), 1, "the board's own stays")
		requirePresent(t, b, board, false, "the board's own marker alone")
		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		requirePresent(t, b, board, true, "rebuilt")
	})
}

// loseNodes deletes the keys of board on every Cluster primary but the one
// holding its own marker (keys.Board.Marker): what a restart without
// persistence, or a failover to an empty replica, of those nodes does. It
// returns how many keys it deleted.
func loseNodes(t *testing.T, b *testredis.Backend, board string) int {
	t.Helper()
	ctx := context.Background()
	c := b.Client.Client
	marker := keys.NewBoard("lb", board).Marker()
	perNode := map[string][]string{}
	kept := ""
	for _, addr := range redisnode.Primaries(ctx, c) {
		for _, pattern := range []string{"*{" + redisnode.GlobEscape(board) + "}*", "*{" + redisnode.GlobEscape(board) + "#*"} {
			require.NoError(t, redisnode.Scan(ctx, c.Nodes()[addr], pattern, func(ks []string) error {
				for _, k := range ks {
					if k == marker {
						kept = addr
					}
				}
				perNode[addr] = append(perNode[addr], ks...)
				return nil
			}))
		}
	}
	require.NotEmpty(t, kept, "the board has its own marker")
	n := 0
	for addr, ks := range perNode {
		if addr == kept {
			continue
		}
		for _, k := range ks {
			require.NoError(t, c.Do(ctx, c.B().Del().Key(k).Build()).Error())
			n++
		}
	}
	return n
}

// TestPresentAfterNodeLoss: on a Cluster a sharded board's keys lie on
// every node; when all but the node of the board's own marker restart
// empty, Present reports false and Seal seals nothing (it would seal the
// standings the one node kept, for good) until a Rebuild.
func TestPresentAfterNodeLoss(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	name := shardName(t, b)
	clock := future.Add(-24 * time.Hour)
	board, err := lb.New(b.Client, name, lb.WithStore(newMemStore()), lb.WithShards(5, 10, 15, 20, 25, 30, 35),
		lb.WithWindows(lb.Daily(), lb.AllTime()), lb.WithRetention(72*time.Hour),
		lb.WithClock(func() time.Time { return clock }))
	require.NoError(t, err)
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	scores := presentScores(200)
	require.NoError(t, board.SubmitMany(ctx, scores))
	day := lb.Daily().Period(clock)
	clock = day.End.Add(time.Minute) // the day is over

	require.Positive(t, loseNodes(t, b, name), "keys on the other nodes")
	n, err := board.Count(ctx, lb.In(lb.Daily()), lb.At(day.Start))
	require.NoError(t, err)
	require.Less(t, n, int64(len(scores)), "Redis lost part of the day")
	requirePresent(t, b, board, false, "after the nodes holding most of the board restarted empty")
	sealed, err := board.Seal(ctx, nil)
	require.ErrorIs(t, err, lb.ErrNotPresent)
	require.Empty(t, sealed)

	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	requirePresent(t, b, board, true, "rebuilt")
	sealed, err = board.Seal(ctx, nil)
	require.NoError(t, err)
	require.Len(t, sealed, 1)
	require.Equal(t, day.ID, sealed[0].Period)
	require.Len(t, sealed[0].Entries, len(scores), "the whole day sealed")
}

// TestPresentAcrossShadowMove: a move to new bounds (WithShadowShards)
// keeps the board present at every step: the shadow is not Present's until
// reads use it, and FillShadow marks it by then; DropShadow deletes the old
// layout's markers with its shards.
func TestPresentAcrossShadowMove(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		name := shardName(t, b)
		old, next := []float64{10, 20}, []float64{5, 15, 25}
		store := newMemStore()
		at := func(opts ...lb.Option) *lb.Leaderboard {
			board, err := lb.New(b.Client, name, append(opts, lb.WithStore(store), lb.WithClock(fixed(future)))...)
			require.NoError(t, err)
			return board
		}
		step0 := at(lb.WithShards(old...))
		_, err := step0.Rebuild(ctx)
		require.NoError(t, err)
		require.NoError(t, step0.SubmitMany(ctx, presentScores(40)))

		step1 := at(lb.WithShards(old...), lb.WithShadowShards(next...))
		requirePresent(t, b, step1, true, "step 1, before the fill")
		_, err = step1.FillShadow(ctx)
		require.NoError(t, err)
		step2 := at(lb.WithShards(next...), lb.WithShadowShards(old...))
		requirePresent(t, b, step2, true, "step 2: reads use the filled layout")
		step3 := at(lb.WithShards(next...))
		requirePresent(t, b, step3, true, "step 3")
		require.NoError(t, step2.DropShadow(ctx))
		for _, k := range boardKeys(t, b, name) {
			require.NotContains(t, k, "."+keys.Layout(old)+"~", "DropShadow left a key of the old layout")
		}
		requirePresent(t, b, step3, true, "after DropShadow")
	})
}
