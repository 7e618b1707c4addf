package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// splitClient sends every pipeline one command at a time (a MULTI..EXEC
// span, and a script, whole: Redis runs those atomically), calling between
// before each: writes that Redis runs between two commands of a pipeline,
// as it may when a read of the socket splits it. A read may send two
// pipelines at once (doApart): between runs one call at a time.
type splitClient struct {
	rueidis.Client
	between func()
	mu      sync.Mutex
}

func (c *splitClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	out := make([]rueidis.RedisResult, 0, len(cmds))
	for i := 0; i < len(cmds); {
		j := i + 1
		if cmds[i].Commands()[0] == "MULTI" {
			for j < len(cmds) && cmds[j-1].Commands()[0] != "EXEC" {
				j++
			}
		}
		c.mu.Lock()
		c.between()
		c.mu.Unlock()
		out = append(out, c.Client.DoMulti(ctx, cmds[i:j]...)...)
		i = j
	}
	return out
}

// TestShardedReadsTornByWrites: every read of a sharded board whose
// pipelines are split by writes of members across the shards' bounds keeps
// what WithShards promises of a read that is not one snapshot: a rank
// within 1..Total, a percentile within 0..100, entries in the board's
// order, each member once, and an Around that holds its member.
func TestShardedReadsTornByWrites(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			t.Run(fmt.Sprint(rank), func(t *testing.T) { runShardedTornReads(t, b, rank) })
		}
	})
}

func runShardedTornReads(t *testing.T, b *testredis.Backend, rank lb.RankMode) {
	ctx := context.Background()
	name := shardName(t, b)
	opts := []lb.Option{lb.WithShards(25, 50, 75), lb.WithPolicy(lb.Replace), lb.WithRanking(rank)}
	writer, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(uint64(rank), 5+modelSeedShift(t)))
	members := make([]string, 60)
	for i := range members {
		members[i] = fmt.Sprintf("m%02d", i)
		_, err := writer.Submit(ctx, members[i], float64(rng.IntN(100)))
		require.NoError(t, err)
	}
	board, err := lb.New(&splitClient{Client: b.Client, between: func() {
		// Not require: a read's second pipeline runs on a goroutine of
		// its own.
		if _, err := writer.Submit(ctx, members[rng.IntN(len(members))], float64(rng.IntN(100))); err != nil {
			t.Errorf("a write between a pipeline's commands: %v", err)
		}
	}}, name, opts...)
	require.NoError(t, err)
	for step := range 25 {
		m := members[rng.IntN(len(members))]
		where := fmt.Sprintf("step %d", step)
		st, err := board.Rank(ctx, m)
		requireTornStanding(t, st, err, where+" Rank")
		sts, err := board.Ranks(ctx, members[:10])
		require.NoError(t, err, where)
		for _, st := range sts {
			requireTornStanding(t, st, nil, where+" Ranks")
		}
		es, err := board.Around(ctx, m, 3)
		requireTornEntries(t, es, err, where+" Around")
		require.Condition(t, func() bool { return holdsMember(es, m) }, "%s Around(%s): %v", where, m, es)
		page, err := board.Page(ctx, 1+rng.IntN(3), 10)
		requireTornEntries(t, page.Entries, err, where+" Page")
		for _, e := range page.Entries {
			require.LessOrEqual(t, e.Rank, page.Total, "%s Page: %+v", where, page)
		}
		es, err = board.Top(ctx, 15)
		requireTornEntries(t, es, err, where+" Top")
		es, err = board.Range(ctx, 5, 25)
		requireTornEntries(t, es, err, where+" Range")
		es, err = board.Between(ctx, 20, 80, 20)
		requireTornEntries(t, es, err, where+" Between")
		_, es, err = board.AroundScore(ctx, float64(rng.IntN(100)), 3)
		requireTornEntries(t, es, err, where+" AroundScore")
		cut, err := board.Cutoff(ctx, float64(1+rng.IntN(100)))
		requireTornEntries(t, []lb.Entry{cut}, err, where+" Cutoff")
		es, err = board.Among(ctx, members[:20])
		requireTornEntries(t, es, err, where+" Among")
	}
}

// requireTornStanding checks a standing of a ranked member.
func requireTornStanding(t *testing.T, st lb.Standing, err error, where string) {
	t.Helper()
	if errors.Is(err, lb.ErrNotRanked) || (err == nil && st.Rank == 0) {
		return
	}
	require.NoError(t, err, where)
	require.True(t, st.Rank >= 1 && st.Rank <= st.Total, "%s: %+v", where, st)
	require.True(t, st.Percentile >= 0 && st.Percentile <= 100, "%s: %+v", where, st)
}

// requireTornEntries checks a read's entries: best first, ranks rising, each
// member once.
func requireTornEntries(t *testing.T, es []lb.Entry, err error, where string) {
	t.Helper()
	require.NoError(t, err, where)
	seen := map[string]bool{}
	for i, e := range es {
		require.False(t, seen[e.Member], "%s: %s twice in %v", where, e.Member, es)
		seen[e.Member] = true
		require.GreaterOrEqual(t, e.Rank, int64(1), "%s: %v", where, es)
		if i > 0 {
			require.GreaterOrEqual(t, es[i-1].Score, e.Score, "%s: %v", where, es)
			require.GreaterOrEqual(t, e.Rank, es[i-1].Rank, "%s: %v", where, es)
		}
	}
}

// holdsMember reports whether es holds member.
func holdsMember(es []lb.Entry, member string) bool {
	for _, e := range es {
		if e.Member == member {
			return true
		}
	}
	return false
}
