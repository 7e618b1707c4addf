package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// storeOnly hides a store's optional interfaces (IDKeeper among them), so
// that a Rebuild's commands are its periods' and its markers' alone.
type storeOnly struct{ lb.Store }

// TestShardedRebuildCostFollowsData: a sharded board's Rebuild of one
// period of a few dozen members swaps in, one transaction each, the keys
// that got a fresh copy (the shards and the partitions holding members),
// and deletes the rest of the period's key space (4,096 partitions) in
// one more round trip, an UNLINK a hash slot: at most eight commands a
// key with data (its write and the copy's life; the swap's MULTI, UNLINK,
// RENAME, expiry and EXEC), two a hash slot (its UNLINK, its marker):
// some 430 here, 560 on a Cluster, where a transaction a key of the key
// space sent some 20,600. Keys no member of the store
// holds (a stray shard, a stray partition) are deleted all the same; a
// period none of whose members the store holds loses every key, with no
// transaction at all, and counts as rebuilt with no member.
func TestShardedRebuildCostFollowsData(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		bounds := []float64{0, 50, 2000} // the last shard holds no member
		period := lb.AllTime().Period(future).ID
		opts := []lb.Option{lb.WithShards(bounds...), lb.WithWindows(lb.AllTime()), lb.WithClock(fixed(future))}
		scores := map[string]float64{}
		shards, parts := map[int]bool{}, map[int]bool{}
		for i := range 40 {
			m := fmt.Sprint("p", i)
			scores[m] = float64(i*7%150 - 20)
			shards[shardOf(bounds, scores[m])] = true
			parts[keys.PartitionOf(m)] = true
		}
		withData := int64(len(shards) + len(parts))
		c := b.Client.Client
		do := func(cmd rueidis.Completed) { require.NoError(t, c.Do(ctx, cmd).Error()) }
		periodKeys := func(name string) []string {
			var out []string
			for _, k := range b.Keys(t, "*{"+name+"#*") {
				if strings.HasSuffix(k, shardSuffix("alltime", period)) {
					out = append(out, k)
				}
			}
			return out
		}

		t.Run("members", func(t *testing.T) {
			name := shardName(t, b)
			board, err := lb.New(b.Client, name, append(opts, lb.WithStore(storeOnly{newMemStore()}))...)
			require.NoError(t, err)
			require.NoError(t, board.SubmitMany(ctx, scores))
			_, err = board.Rebuild(ctx) // warm: the connections to every node
			require.NoError(t, err)
			// A shard and a partition no member of the store is in.
			emptyShard := shardKey(name, bounds, len(bounds), "alltime", period)
			do(c.B().Zadd().Key(emptyShard).ScoreMember().ScoreMember(5000, "ghost").Build())
			ghost := "ghost"
			for i := 0; parts[keys.PartitionOf(ghost)]; i++ {
				ghost = fmt.Sprint("ghost", i)
			}
			strayPart := partKey(name, ghost, "alltime", period)
			do(c.B().Hset().Key(strayPart).FieldValue().FieldValue(ghost, "1").Build())

			cmds, multis := b.Client.Commands(), b.Client.Multis()
			rep, err := board.Rebuild(ctx)
			require.NoError(t, err)
			require.Equal(t, lb.RebuildReport{Periods: 1, Members: int64(len(scores))}, rep)
			slots := int64(keys.PartitionGroups + len(bounds) + 2) // partition groups, shards, the board's own
			sent := b.Client.Commands() - cmds
			t.Logf("[%s] Rebuild of %d members, %d keys with data: %d commands", b.Name, len(scores), withData, sent)
			require.Equal(t, withData, b.Client.Multis()-multis, "[%s] one transaction a key with data", b.Name)
			require.LessOrEqual(t, sent, 8*withData+2*slots, "[%s] Rebuild's commands", b.Name)
			require.Len(t, periodKeys(name), int(withData), "the period's keys: those with data")
			for _, k := range []string{emptyShard, strayPart} {
				n, err := c.Do(ctx, c.B().Exists().Key(k).Build()).AsInt64()
				require.NoError(t, err)
				require.Zero(t, n, "stray key %s left", k)
			}
			reps, err := board.Check(ctx, false)
			require.NoError(t, err)
			requireCleanReport(t, reps[0], int64(len(scores)), "after the rebuild")
		})

		t.Run("no member", func(t *testing.T) {
			name := shardName(t, b)
			writer, err := lb.New(b.Client, name, opts...) // no store: Redis alone holds them
			require.NoError(t, err)
			require.NoError(t, writer.SubmitMany(ctx, scores))
			require.Len(t, periodKeys(name), int(withData))
			board, err := lb.New(b.Client, name, append(opts, lb.WithStore(storeOnly{newMemStore()}))...)
			require.NoError(t, err)
			multis := b.Client.Multis()
			rep, err := board.Rebuild(ctx)
			require.NoError(t, err)
			require.Equal(t, lb.RebuildReport{Periods: 1}, rep)
			require.Zero(t, b.Client.Multis()-multis, "[%s] no key to swap in", b.Name)
			require.Empty(t, periodKeys(name), "the period's keys are gone")
		})
	})
}
