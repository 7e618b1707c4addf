package leaderboard

import (
	"context"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestPrimaryOnlyRuns: primaryOnly sends a run of reads of one slot in one
// MULTI, and every other command as it is, and gives each command's reply
// in the commands' order, the caller's own transactions and writes among
// them, and the error of a read that fails in its place.
func TestPrimaryOnlyRuns(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		c := b.Client.Client
		name := b.BoardName(t)
		k1, k2, k3 := "{"+name+"}:a", "{"+name+"#x}:b", "{"+name+"#y}:c"
		t.Cleanup(func() {
			for _, k := range []string{k1, k2, k3} {
				_ = c.Do(context.Background(), c.B().Del().Key(k).Build()).Error()
			}
		})
		require.NoError(t, c.Do(ctx, c.B().Zadd().Key(k1).ScoreMember().ScoreMember(1, "m").ScoreMember(2, "n").Build()).Error())
		require.NoError(t, c.Do(ctx, c.B().Set().Key(k3).Value("v").Build()).Error())
		// rueidis refuses a DoMulti that mixes a transaction with
		// commands of other slots: the writes go in a call of their own.
		require.NoError(t, primaryOnly{c}.DoMulti(ctx, c.B().Zadd().Key(k2).ScoreMember().ScoreMember(5, "w").Build())[0].Error())
		before := b.Client.Calls()
		got := primaryOnly{b.Client}.DoMulti(ctx,
			c.B().Zcard().Key(k1).Build(),
			c.B().Zscore().Key(k1).Member("n").Build(),
			c.B().Multi().Build(),
			c.B().Zcard().Key(k1).Build(),
			c.B().Exec().Build(),
			c.B().Zscore().Key(k2).Member("nobody").Build(),
			c.B().Zcard().Key(k3).Build(), // WRONGTYPE
			c.B().Get().Key(k3).Build(),
		)
		require.Len(t, got, 8)
		// k1's two reads in one MULTI, k3's two in one, k2's read in one,
		// the caller's transaction as it is (one MULTI a read: seven).
		require.LessOrEqual(t, b.Client.Calls()-before, int64(4))
		n, err := got[0].AsInt64()
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		s, err := got[1].AsFloat64()
		require.NoError(t, err)
		require.Equal(t, 2.0, s)
		tx, err := got[4].ToArray()
		require.NoError(t, err)
		require.Len(t, tx, 1)
		require.True(t, rueidis.IsRedisNil(got[5].Error()), "a missing member: %v", got[5].Error())
		require.ErrorContains(t, got[6].Error(), "WRONGTYPE")
		v, err := got[7].ToString()
		require.NoError(t, err)
		require.Equal(t, "v", v)
	})
}
