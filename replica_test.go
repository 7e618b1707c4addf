package leaderboard_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// routeRecorder records, by name, the commands sent through it that a
// client with SendToReplicas(IsReadOnly) sends to a replica, and those it
// sends to the primary.
type routeRecorder struct {
	rueidis.Client
	mu               sync.Mutex
	replica, primary map[string]int
}

func (c *routeRecorder) record(cmds ...rueidis.Completed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cmd := range cmds {
		name := strings.ToLower(cmd.Commands()[0])
		if cmd.IsReadOnly() {
			c.replica[name]++
		} else {
			c.primary[name]++
		}
	}
}

func (c *routeRecorder) reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.replica, c.primary = map[string]int{}, map[string]int{}
}

func (c *routeRecorder) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.record(cmd)
	return c.Client.Do(ctx, cmd)
}

func (c *routeRecorder) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.record(cmds...)
	return c.Client.DoMulti(ctx, cmds...)
}

// TestReplicaReads: with WithReplicaReads, every read sends read-only
// commands alone (read scripts as EVALSHA_RO, no MULTI), so a client that
// sends those to replicas reads the board from replicas only (INFO
// commandstats there shows them), with the answers the primary gives; a
// write through the same client reaches the primary (a replica would
// refuse it). Unsharded and sharded, Ordinal and Competition, on a
// standalone primary with its replica and on a Cluster with a replica per
// master.
func TestReplicaReads(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		for _, c := range []struct {
			name string
			opts []lb.Option
		}{
			{"plain", nil},
			{"plain/competition", []lb.Option{lb.WithRanking(lb.Competition)}},
			// Around's two steps would send a MULTI: it keeps its script.
			{"plain/twostep", []lb.Option{lb.WithTwoStepAround()}},
			{"sharded", []lb.Option{lb.WithShards(300, 600)}},
			{"sharded/competition", []lb.Option{lb.WithShards(300, 600), lb.WithRanking(lb.Competition)}},
			{"plain/lowest/replace", []lb.Option{lb.WithOrder(lb.LowestFirst), lb.WithPolicy(lb.Replace)}},
			{"plain/tiebreak", []lb.Option{replicaTieBreak(t)}},
			{"sharded/lowest/competition", []lb.Option{lb.WithShards(300, 600), lb.WithOrder(lb.LowestFirst), lb.WithRanking(lb.Competition)}},
			{"sharded/tiebreak", []lb.Option{lb.WithShards(300, 600), replicaTieBreak(t)}},
			// The mirror, built by the primary's reads first, is read by GET.
			{"plain/hot", []lb.Option{lb.WithHotTop(20)}},
			{"sharded/hot/competition", []lb.Option{lb.WithShards(300, 600), lb.WithHotTop(20), lb.WithRanking(lb.Competition)}},
		} {
			t.Run(c.name, func(t *testing.T) { replicaReads(t, r, c.opts) })
		}
	})
}

func replicaReads(t *testing.T, r *testredis.Replicated, opts []lb.Option) {
	ctx := context.Background()
	rec := &routeRecorder{Client: r.Reader}
	rec.reset()
	name := fmt.Sprintf("replica-%d", time.Now().UnixNano())
	opts = append(opts, lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithReplicaReads())
	board, err := lb.New(rec, name, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { board.Delete(context.Background()) })
	primary := testredis.Real(t).Client
	if r.Name == "cluster" {
		primary = testredis.Cluster(t).Client
	}
	viaPrimary, err := lb.New(primary, name, opts...)
	require.NoError(t, err)

	// Writes through the replica-reading client reach the primary.
	scores := map[string]float64{}
	for i := range 300 {
		scores[fmt.Sprintf("m%03d", i)] = float64(i * 3 % 900)
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	for i := range 20 {
		_, err := board.Submit(ctx, fmt.Sprintf("m%03d", i), float64(950+i), lb.WithData(fmt.Sprintf("d%d", i)))
		require.NoError(t, err)
	}
	require.Zero(t, rec.replica["evalsha_ro"], "a write ran a read-only script")
	require.Eventually(t, func() bool {
		n, err := board.Count(ctx)
		return err == nil && n == 300
	}, 10*time.Second, 5*time.Millisecond, "the replicas caught up")

	reads := replicaReadSet(board)
	want := map[string]any{}
	for name, read := range reads {
		want[name] = read(ctx, viaPrimary)
	}
	r.CaughtUp(t) // nothing written since: every replica holds it all, the 20 Submits after the count too
	rs0 := testredis.CommandCalls(t, r.Replicas)
	rec.reset()
	got := map[string]any{}
	for _, name := range slices.Sorted(maps.Keys(reads)) {
		got[name] = reads[name](ctx, board)
	}
	rs1 := testredis.CommandCalls(t, r.Replicas)
	require.Empty(t, rec.primary, "reads sent commands that reach the primary")
	for name, n := range rec.replica {
		top := rs1[name] - rs0[name]
		if name == "evalsha_ro" {
			top += rs1["eval_ro"] - rs0["eval_ro"] // a replica that had to load the script
		}
		require.GreaterOrEqual(t, top, int64(n), "%s: %d sent, %d run on the replicas", name, n, top)
	}
	require.Positive(t, rec.replica["evalsha_ro"], "no read ran a script")
	require.Equal(t, want, got, "replica answers against the primary's")
}

// replicaReadSet is every read of a board, each answer with its error.
func replicaReadSet(board *lb.Leaderboard) map[string]func(context.Context, *lb.Leaderboard) any {
	type pair struct {
		V   any
		Err string
	}
	mk := func(v any, err error) any {
		if err != nil {
			return pair{v, err.Error()}
		}
		return pair{V: v}
	}
	data, daily := lb.IncludeData(), lb.In(lb.Daily())
	return map[string]func(context.Context, *lb.Leaderboard) any{
		"top":       func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Top(ctx, 10)) },
		"top-data":  func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Top(ctx, 10, data)) },
		"rank":      func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Rank(ctx, "m007")) },
		"rank-data": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Rank(ctx, "m007", data, daily)) },
		"ranks": func(ctx context.Context, b *lb.Leaderboard) any {
			return mk(b.Ranks(ctx, []string{"m001", "m150", "nobody"}))
		},
		"around":      func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Around(ctx, "m150", 5)) },
		"around-data": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Around(ctx, "m150", 5, data)) },
		"page":        func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Page(ctx, 3, 20)) },
		"page-data":   func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Page(ctx, 1, 20, data)) },
		"range":       func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Range(ctx, 95, 130)) },
		"among": func(ctx context.Context, b *lb.Leaderboard) any {
			return mk(b.Among(ctx, []string{"m001", "m200", "x"}))
		},
		"among-data": func(ctx context.Context, b *lb.Leaderboard) any {
			return mk(b.Among(ctx, []string{"m001", "m200", "x"}, data))
		},
		"count":      func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Count(ctx, daily)) },
		"between":    func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Between(ctx, 250, 700, 50)) },
		"count-betw": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.CountBetween(ctx, 250, math.Inf(1))) },
		"around-score": func(ctx context.Context, b *lb.Leaderboard) any {
			place, es, err := b.AroundScore(ctx, 451, 4)
			return mk([]any{place, es}, err)
		},
		"cutoff":       func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Cutoff(ctx, 10)) },
		"range-data":   func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Range(ctx, 1, 30, data)) },
		"range-daily":  func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Range(ctx, 2, 40, daily)) },
		"between-data": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Between(ctx, 250, 990, 50, data)) },
		"around-score-data": func(ctx context.Context, b *lb.Leaderboard) any {
			place, es, err := b.AroundScore(ctx, 951, 4, data)
			return mk([]any{place, es}, err)
		},
		"cutoff-data": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Cutoff(ctx, 2, data)) },
		"ranks-data": func(ctx context.Context, b *lb.Leaderboard) any {
			return mk(b.Ranks(ctx, []string{"m001", "m150", "nobody"}, data, daily))
		},
		"page-last": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Page(ctx, 15, 20, daily)) },
		"all-data": func(ctx context.Context, b *lb.Leaderboard) any {
			var es []lb.Entry
			for e, err := range b.All(ctx, data) {
				if err != nil {
					return mk(es, err)
				}
				es = append(es, e)
			}
			return mk(es, nil)
		},
		"periods": func(ctx context.Context, b *lb.Leaderboard) any { return mk(b.Periods(ctx, daily)) },
		"all": func(ctx context.Context, b *lb.Leaderboard) any {
			var es []lb.Entry
			for e, err := range b.All(ctx) {
				if err != nil {
					return mk(es, err)
				}
				es = append(es, e)
			}
			return mk(es, nil)
		},
	}
}

// replicaTieBreak is an EarlierFirst tie-break for the scores
// replicaReads submits.
func replicaTieBreak(t *testing.T) lb.Option {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: time.Now().AddDate(0, 0, -1), Resolution: time.Millisecond, MaxScore: 1000})
	require.NoError(t, err)
	return lb.WithTieBreak(tb)
}

// replicaReadingCluster is a Cluster client as the README's "Read replicas"
// section builds it: it tracks keys (rueidis's default, so the hot top is
// cached) and sends every read-only command to a replica.
func replicaReadingCluster(t *testing.T) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:    testredis.ClusterAddrs(),
		SendToReplicas: func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() },
	})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// TestHotTopReplicaClientMirrorsPrimaries: on a sharded board on a Cluster
// whose client sends read-only commands to replicas (WithReplicaReads), a
// mirror's rewrite reads the shards from the primaries: a rewrite after a
// Submit into the top, and one a Top makes when it finds no mirror (after
// a Remove of the best), each read a replica held behind by a large write
// in the best shard's slot, and put the stale top in the mirror, cached
// until it expired (10 s) where the replica caught up in milliseconds.
func TestHotTopReplicaClientMirrorsPrimaries(t *testing.T) {
	b := testredis.Cluster(t)
	r := testredis.ClusterReplicated(t)
	bounds := []float64{0, 100}
	opts := []lb.Option{lb.WithShards(bounds...), lb.WithPolicy(lb.Replace)}
	setup := func(t *testing.T) (hot, truth *lb.Leaderboard, lag func()) {
		ctx := context.Background()
		name := shardName(t, b)
		var err error
		hot, err = lb.New(replicaReadingCluster(t), name, append([]lb.Option{lb.WithHotTop(3), lb.WithReplicaReads()}, opts...)...)
		require.NoError(t, err)
		truth, err = lb.New(b.Client, name, opts...) // no hot top, reads the primaries
		require.NoError(t, err)
		// The best shard (values >= 100) holds the top.
		shard := shardKey(name, bounds, 2, "alltime", "alltime")
		pad := "lagpad" + shard[strings.IndexByte(shard, '{'):strings.IndexByte(shard, '}')+1]
		c := b.Client.Client
		t.Cleanup(func() { _ = c.Do(context.Background(), c.B().Unlink().Key(pad).Build()).Error() })
		lag = func() {
			require.NoError(t, c.Do(ctx, c.B().Set().Key(pad).Value(strings.Repeat("x", 16<<20)).Build()).Error())
		}
		return hot, truth, lag
	}
	names := func(t *testing.T, board *lb.Leaderboard) []string {
		t.Helper()
		top, err := board.Top(context.Background(), 3)
		require.NoError(t, err)
		var out []string
		for _, e := range top {
			out = append(out, e.Member)
		}
		return out
	}
	// sameTop requires the hot top to show the primaries' once the
	// replicas hold all that was written (CaughtUp, not a sleep's guess).
	// Its cached copy goes when the replica's invalidation arrives,
	// moments after (never with the write): within 2 s, where a mirror
	// put from a trailing replica's shards stays 10 s (hotTTL).
	sameTop := func(t *testing.T, hot, truth *lb.Leaderboard, want []string, what string) {
		t.Helper()
		r.CaughtUp(t)
		require.Equal(t, want, names(t, truth))
		deadline := time.Now().Add(2 * time.Second)
		for got := names(t, hot); !slices.Equal(got, want); got = names(t, hot) {
			require.True(t, time.Now().Before(deadline), "%s: %v, the primaries %v", what, got, want)
			time.Sleep(5 * time.Millisecond)
		}
	}

	t.Run("Submit", func(t *testing.T) {
		ctx := context.Background()
		hot, truth, lag := setup(t)
		require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 110, "b": 120, "c": 130}))
		r.CaughtUp(t)
		require.Equal(t, []string{"c", "b", "a"}, names(t, hot))
		lag()
		_, err := hot.Submit(ctx, "star", 500)
		require.NoError(t, err)
		sameTop(t, hot, truth, []string{"star", "c", "b"}, "the hot top once the replicas caught up with a Submit into it")
	})

	t.Run("Remove", func(t *testing.T) {
		ctx := context.Background()
		hot, truth, lag := setup(t)
		require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 110, "b": 120, "c": 130, "star": 500}))
		r.CaughtUp(t)
		require.Equal(t, []string{"star", "c", "b"}, names(t, hot))
		lag()
		require.NoError(t, hot.Remove(ctx, "star"))
		_, err := hot.Top(ctx, 3) // finds no mirror, and builds it
		require.NoError(t, err)
		sameTop(t, hot, truth, []string{"c", "b", "a"}, "the hot top once the replicas caught up with a Remove of its best")
	})
}
