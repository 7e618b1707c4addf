package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestDocRoundTripsOfTheRest counts the round trips of the calls the other
// round-trip tests leave out against their doc comments, on plain and
// sharded boards, on every backend: SetData one (an HSET or HDEL); Between
// and AroundScore with IncludeData one on an unsharded board (the data in
// the same round trip), two on a sharded one; ProposeBounds two, three on
// a sharded board; Among, SubmitMany and Remove of no members none;
// DropShadow one a live period.
func TestDocRoundTripsOfTheRest(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{
			"plain":          nil,
			"plain-compete":  {lb.WithRanking(lb.Competition)},
			"sharded":        {lb.WithShards(0, 50)},
			"sharded-shadow": {lb.WithShards(0, 50), lb.WithShadowShards(25), lb.WithRanking(lb.Competition)},
		} {
			t.Run(kind, func(t *testing.T) {
				runDocRoundTrips(t, b, opts, strings.HasPrefix(kind, "sharded"), strings.HasSuffix(kind, "shadow"))
			})
		}
	})
}

func runDocRoundTrips(t *testing.T, b *testredis.Backend, opts []lb.Option, sharded, shadow bool) {
	ctx := context.Background()
	opts = append(opts, lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))
	board, err := lb.New(b.Client, shardName(t, b), opts...)
	require.NoError(t, err)
	for i := range 40 {
		_, err := board.Submit(ctx, fmt.Sprint("p", i), float64(i*7%150-20), lb.WithData(fmt.Sprint("Player ", i)))
		require.NoError(t, err)
	}
	// by picks the count an unsharded board's doc states, or a sharded one's.
	by := func(plain, shardedTrips int64) int64 {
		if sharded {
			return shardedTrips
		}
		return plain
	}
	periods, err := board.Periods(ctx, lb.In(lb.Daily()))
	require.NoError(t, err)
	live := int64(1 + len(periods)) // alltime's one, daily's readable ones
	d := lb.IncludeData()
	type op struct {
		name string
		want int64
		fn   func() error
	}
	ops := []op{
		{"SetData", 1, func() error { return board.SetData(ctx, "p3", "renamed") }},
		{"SetData new member", 1, func() error { return board.SetData(ctx, "nobody-yet", "hello") }},
		{"SetData clear", 1, func() error { return board.SetData(ctx, "p4", "") }},
		{"Between with data", by(1, 2), func() error { _, err := board.Between(ctx, -5, 60, 10, d); return err }},
		{"AroundScore with data", by(1, 2), func() error { _, _, err := board.AroundScore(ctx, 30, 2, d); return err }},
		{"Among of none", 0, func() error { _, err := board.Among(ctx, nil, d); return err }},
		{"SubmitMany of none", 0, func() error { return board.SubmitMany(ctx, nil) }},
		{"Remove of none", 0, func() error { return board.Remove(ctx) }},
		{"ProposeBounds", by(2, 3), func() error { _, err := board.ProposeBounds(ctx, 4); return err }},
	}
	if shadow {
		ops = append(ops, op{"DropShadow", live, func() error { return board.DropShadow(ctx) }})
	}
	for _, o := range ops {
		require.NoError(t, o.fn(), "%s warm-up", o.name)
		before := b.Client.Calls()
		require.NoError(t, o.fn(), o.name)
		require.Equal(t, o.want, b.Client.Calls()-before, "[%s] %s round trips", b.Name, o.name)
	}
}

// TestSealedReadsTheStoreAlone: Sealed makes no call to Redis, on plain and
// sharded boards: the standings are the store's.
func TestSealedReadsTheStoreAlone(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, opts := range [][]lb.Option{nil, {lb.WithShards(0)}} {
			board, err := lb.New(b.Client, shardName(t, b), append(opts, lb.WithStore(newMemStore()))...)
			require.NoError(t, err)
			before := b.Client.Calls()
			_, ok, err := board.Sealed(context.Background())
			require.NoError(t, err)
			require.False(t, ok)
			require.Equal(t, before, b.Client.Calls(), "Sealed: calls to Redis")
		}
	})
}

// TestDocRoundTripsOfOptions counts, against the doc's figures, the calls
// of what the other round-trip tests count without these options: every
// read with WithReplicaReads (scripts in place of MULTIs: one round trip
// on an unsharded board; on a sharded one as the doc's table in WithShards
// says, Between one script a shard, one call on a Cluster too), and every
// write with a store that records them (memStore: the store first, then
// the same round trips to Redis as without it), on plain and sharded
// boards under both rankings, on every backend. Between without them on a
// sharded Cluster board is two calls at once, exactly (its MULTI's
// pipeline beside the other shards').
func TestDocRoundTripsOfOptions(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range []string{"plain", "sharded"} {
			for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
				for _, with := range []string{"replica", "store", "none"} {
					t.Run(fmt.Sprintf("%s/%v/%s", kind, rank, with), func(t *testing.T) {
						runOptionRoundTrips(t, b, kind == "sharded", rank, with)
					})
				}
			}
		}
	})
}

func runOptionRoundTrips(t *testing.T, b *testredis.Backend, sharded bool, rank lb.RankMode, with string) {
	ctx := context.Background()
	opts := []lb.Option{lb.WithRanking(rank), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future))}
	if sharded {
		opts = append(opts, lb.WithShards(0, 50))
	}
	switch with {
	case "replica":
		opts = append(opts, lb.WithReplicaReads())
	case "store":
		opts = append(opts, lb.WithStore(newMemStore()))
	}
	board, err := lb.New(b.Client, shardName(t, b), opts...)
	require.NoError(t, err)
	scores := map[string]float64{}
	for i := range 40 {
		scores[fmt.Sprint("p", i)] = float64(i*7%150 - 20) // 15 of them in the best shard, 50 and up
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	cluster := b.Name == "cluster"
	// by picks the doc's count: on an unsharded board, on a sharded one on
	// one node, on a sharded one on a Cluster.
	by := func(plain, oneNode, onCluster int64) int64 {
		switch {
		case !sharded:
			return plain
		case cluster:
			return onCluster
		}
		return oneNode
	}
	rankTrips := by(1, 1, 1)
	if rank == lb.Competition {
		rankTrips = by(1, 1, 2) // the member's partition beside the counts, then its shard
	}
	betweenTrips := by(1, 1, 1)
	if with != "replica" {
		betweenTrips = by(1, 1, 2) // its MULTI in a pipeline of its own
	}
	daily := lb.In(lb.Daily())
	type op struct {
		name string
		want int64
		fn   func() error
	}
	reads := []op{
		{"Top", 1, func() error { _, err := board.Top(ctx, 5); return err }},
		{"Rank", rankTrips, func() error { _, err := board.Rank(ctx, "p3"); return err }},
		{"Ranks", by(1, 2, 2), func() error { _, err := board.Ranks(ctx, []string{"p3", "ghost", "p9"}); return err }},
		{"Around", by(1, 1, 2), func() error { _, err := board.Around(ctx, "p3", 2); return err }},
		{"Page in the best shard", 1, func() error { _, err := board.Page(ctx, 1, 5); return err }},
		{"Range in the best shard", 1, func() error { _, err := board.Range(ctx, 1, 5); return err }},
		{"Among", 1, func() error { _, err := board.Among(ctx, []string{"p3", "ghost", "p9"}); return err }},
		{"Count", 1, func() error { _, err := board.Count(ctx); return err }},
		{"Periods", 1, func() error { _, err := board.Periods(ctx, daily); return err }},
		{"Between", betweenTrips, func() error { _, err := board.Between(ctx, 10, 60, 10); return err }},
		{"CountBetween", 1, func() error { _, err := board.CountBetween(ctx, 10, 60); return err }},
		{"AroundScore inside its shard", 1, func() error { _, _, err := board.AroundScore(ctx, 25, 1); return err }},
		{"All of one chunk", 1, func() error { return walkErr(board.All(ctx)) }},
		{"All of one chunk with data", by(1, 2, 2), func() error { return walkErr(board.All(ctx, lb.IncludeData())) }},
	}
	writeTrips, resultTrips, setTrips := by(1, 1, 2), by(1, 1, 2), by(1, 1, 2)
	if with == "replica" && sharded && cluster {
		// The other shards' counts and scores its Result is ranked by,
		// read from the primaries in MULTIs of their own, one a slot's
		// run of reads, sent at once beside the second step: here one a
		// window it writes (Submit 2, Set 1) and shard the member is not
		// in (2).
		resultTrips += 2 * 2
		setTrips += 2
	}
	i := 0
	writes := []op{
		{"Submit", resultTrips, func() error { i++; _, err := board.Submit(ctx, "p5", float64(60+i)); return err }},
		{"Set", setTrips, func() error { i++; return board.Set(ctx, "p6", float64(60+i)) }},
		{"SubmitMany", writeTrips, func() error { i++; return board.SubmitMany(ctx, map[string]float64{"p7": float64(100 + i), "n1": 70}) }},
		{"Remove", writeTrips, func() error { return board.Remove(ctx, "n1", "ghost") }},
		// Last: they empty the board.
		{"Reset", 1, func() error { return board.Reset(ctx, daily) }},
		{"Delete", 1, func() error { return board.Delete(ctx) }},
	}
	for _, o := range append(reads, writes...) {
		require.NoError(t, o.fn(), "%s warm-up", o.name)
		before := b.Client.Calls()
		require.NoError(t, o.fn(), o.name)
		require.Equal(t, o.want, b.Client.Calls()-before, "[%s] %s round trips", b.Name, o.name)
	}
}

// TestFirstRunLoadsScripts counts, on a Redis that has loaded no script (a
// new miniredis, a new redis-server), the one round trip more the package
// doc gives a call the first time it runs a script there (EVALSHA, then
// EVAL on NOSCRIPT), and that it is once per script and node: the same
// call again, or on another board of the same node, costs its usual count.
// Plain and sharded boards; not on the Cluster, whose shared nodes have
// the scripts loaded and are not the test's to flush.
func TestFirstRunLoadsScripts(t *testing.T) {
	fresh := map[string]func(t *testing.T) *testredis.CountingClient{
		"miniredis": func(t *testing.T) *testredis.CountingClient { return testredis.Mini(t).Client },
		"redis": func(t *testing.T) *testredis.CountingClient {
			return &testredis.CountingClient{Client: faultStartServer(t).client()}
		},
	}
	for name, client := range fresh {
		t.Run(name, func(t *testing.T) {
			c := client(t)
			ctx := context.Background()
			for _, kind := range []struct {
				name string
				opts []lb.Option
			}{
				{"plain", []lb.Option{lb.WithRanking(lb.Competition)}},
				{"sharded", []lb.Option{lb.WithShards(0, 50), lb.WithRanking(lb.Competition)}},
			} {
				for _, board := range []string{"first", "second"} {
					b, err := lb.New(c, kind.name+"-"+board, kind.opts...)
					require.NoError(t, err)
					ops := []struct {
						name string
						fn   func() error
					}{
						{"Submit", func() error { _, err := b.Submit(ctx, "m", 5); return err }},
						{"Rank", func() error { _, err := b.Rank(ctx, "m"); return err }},
						{"Cutoff", func() error { _, err := b.Cutoff(ctx, 50); return err }},
					}
					// Each op runs a script of its own, in one round trip
					// once loaded: the first board's first call loads it.
					load := int64(0)
					if board == "first" {
						load = 1
					}
					for _, o := range ops {
						for i, want := range []int64{1 + load, 1} {
							before := c.Calls()
							require.NoError(t, o.fn(), o.name)
							require.Equal(t, want, c.Calls()-before, "%s board %s: %s call %d", kind.name, board, o.name, i+1)
						}
					}
				}
			}
		})
	}
}
