package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// droppingClient is a client of the test's own, named, so that the test
// can have Redis close its connections (CLIENT KILL) as a restart, Redis's
// timeout or a proxy closes idle ones, without touching other clients of
// the shared servers. It never pings (Dialer.KeepAlive < 0): a default
// client's ping finds an idle connection dead within a second or two,
// and the test must not depend on running before it.
type droppingClient struct {
	testredis.OneConn
	name  string
	admin rueidis.Client
}

func newDroppingClient(t *testing.T, b *testredis.Backend) *droppingClient {
	t.Helper()
	var opt rueidis.ClientOption
	if b.Name == "cluster" {
		opt.InitAddress = testredis.ClusterAddrs()
	} else {
		var err error
		opt, err = redisurl.Parse(testredis.URL())
		require.NoError(t, err)
	}
	name := fmt.Sprintf("lbdrop%d", time.Now().UnixNano())
	opt.ClientName, opt.DisableCache = name, true
	opt.Dialer.KeepAlive = -1
	return &droppingClient{OneConn: testredis.NewOneConn(t, opt), name: name, admin: b.Client.Client}
}

// drop has every node close the client's connections, its dedicated
// pool's idle ones too.
func (d *droppingClient) drop(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	killed := 0
	for _, n := range d.admin.Nodes() {
		list, err := n.Do(ctx, n.B().ClientList().Build()).ToString()
		require.NoError(t, err)
		for _, line := range strings.Split(list, "\n") {
			if !strings.Contains(line, " name="+d.name+" ") {
				continue
			}
			// RESP3 gives CLIENT LIST as a verbatim string ("txt:id=...").
			id := strings.TrimPrefix(strings.TrimPrefix(strings.Fields(line)[0], "txt:"), "id=")
			require.NoError(t, n.Do(ctx, n.B().Arbitrary("CLIENT", "KILL", "ID", id).Build()).Error())
			killed++
		}
	}
	require.Positive(t, killed, "no connection of %s", d.name)
}

// longOp is a call that sends more commands in one DoMulti than rueidis's
// BlockingPipeline (2,000), or would without the board's care.
type longOp struct {
	name    string
	cluster bool // long on a Cluster only
	opts    []lb.Option
	// setup runs once; run runs before and after the drop, and check
	// after (runs is how many times run ran).
	setup func(t *testing.T, board *lb.Leaderboard)
	run   func(board *lb.Leaderboard) error
	check func(t *testing.T, board *lb.Leaderboard, runs int)
}

func longMembers(n int) []string {
	ms := make([]string, n)
	for i := range ms {
		ms[i] = fmt.Sprintf("m%04d", i)
	}
	return ms
}

func longScores(n int, score float64) map[string]float64 {
	scores := map[string]float64{}
	for _, m := range longMembers(n) {
		scores[m] = score
	}
	return scores
}

// manyBounds is n shard bounds, 0 to n-1.
func manyBounds(n int) []float64 {
	bs := make([]float64, n)
	for i := range bs {
		bs[i] = float64(i)
	}
	return bs
}

// submitThenRemove is a longOp's run: a Submit of member "a" at score,
// then its Remove.
func submitThenRemove(score float64) func(*lb.Leaderboard) error {
	return func(board *lb.Leaderboard) error {
		ctx := context.Background()
		if _, err := board.Submit(ctx, "a", score); err != nil {
			return err
		}
		return board.Remove(ctx, "a")
	}
}

// checkEmpty is a longOp's check: the board counts no member.
func checkEmpty(t *testing.T, board *lb.Leaderboard, _ int) {
	n, err := board.Count(context.Background())
	require.NoError(t, err)
	require.Zero(t, n)
}

var longOps = []longOp{{
	// A MULTI of a ZREM a readable period: 2,005 commands.
	name:  "Remove 2001 periods",
	opts:  []lb.Option{lb.WithWindows(lb.Daily()), lb.WithRetention(2000 * 24 * time.Hour)},
	run:   submitThenRemove(1),
	check: checkEmpty,
}, {
	// On a Cluster a Remove sweeps every shard of every window, a script
	// call each: 7,203 of them, 2,400 a node.
	name:    "Remove sharded 2400x3",
	cluster: true,
	opts:    []lb.Option{lb.WithShards(manyBounds(2400)...), lb.WithWindows(lb.AllTime(), lb.Daily(), lb.Weekly())},
	run:     submitThenRemove(1200),
	check:   checkEmpty,
}, {
	// A MULTI of a ZINCRBY a member and window: 3,006 commands.
	name: "SubmitMany Accumulate 1000x3",
	opts: []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily(), lb.Weekly())},
	run: func(board *lb.Leaderboard) error {
		return board.SubmitMany(context.Background(), longScores(1000, 1))
	},
	check: func(t *testing.T, board *lb.Leaderboard, runs int) {
		for _, w := range []lb.Window{lb.AllTime(), lb.Daily(), lb.Weekly()} {
			st, err := board.Rank(context.Background(), "m0999", lb.In(w))
			require.NoError(t, err)
			require.Equal(t, float64(runs), st.Score)
			require.Equal(t, int64(1000), st.Total)
		}
	},
}, {
	// A MULTI of a ZSCORE and a ZREVRANK a member: 2,003 commands.
	name: "Ranks 1000",
	setup: func(t *testing.T, board *lb.Leaderboard) {
		scores := map[string]float64{}
		for i, m := range longMembers(1000) {
			scores[m] = float64(i)
		}
		require.NoError(t, board.SubmitMany(context.Background(), scores))
	},
	run: func(board *lb.Leaderboard) error {
		sts, err := board.Ranks(context.Background(), longMembers(1000))
		if err == nil && (len(sts) != 1000 || sts[999].Rank != 1 || sts[0].Rank != 1000) {
			err = fmt.Errorf("ranks: %d standings, first %+v, last %+v", len(sts), sts[0], sts[999])
		}
		return err
	},
}, {
	// The id sets' copies: 8,192 commands.
	name: "Rebuild sharded",
	opts: []lb.Option{lb.WithShards(1000, 3000), lb.WithStore(newMemStore())},
	run: func(board *lb.Leaderboard) error {
		_, err := board.Rebuild(context.Background())
		return err
	},
	check: func(t *testing.T, board *lb.Leaderboard, _ int) {
		present, err := board.Present(context.Background())
		require.NoError(t, err)
		require.True(t, present)
	},
}}

// TestLongPipelineAfterDrop: a call that sends more commands than rueidis's
// BlockingPipeline (2,000) in one DoMulti, which rueidis sends on a
// connection of its dedicated pool, succeeds on its first try after Redis
// closed the client's idle connections: the board's client sends such a
// pipeline in DoMultis of at most 1,000 commands, on the auto-pipelined
// connection, and keeps its transactions under the limit.
func TestLongPipelineAfterDrop(t *testing.T) {
	testredis.EachReal(t, func(t *testing.T, b *testredis.Backend) {
		for _, op := range longOps {
			if op.cluster && b.Name != "cluster" {
				continue // one node: its calls are one script, not long pipelines
			}
			t.Run(op.name, func(t *testing.T) {
				dc := newDroppingClient(t, b)
				board, err := lb.New(dc, b.BoardName(t), op.opts...)
				require.NoError(t, err)
				if op.setup != nil {
					op.setup(t, board)
				}
				// The first run leaves rueidis's dedicated connection
				// idle in its pool, where it took one.
				require.NoError(t, op.run(board))
				dc.drop(t)
				dc.Redial(t)
				require.NoError(t, op.run(board), "the first call after the drop")
				if op.check != nil {
					op.check(t, board, 2)
				}
			})
		}
	})
}

// TestLongPipelineMechanism pins what the board's client works around, on
// the caller's client itself (rueidis v1.0.79): after Redis closed the
// client's idle connections, a pipeline of 2,000 writes (rueidis's
// BlockingPipeline), sent on the dedicated connection that a first one
// left in the pool, fails on the network; a pipeline of 2,000 reads
// succeeds, as rueidis sends reads again after a network error (so the
// board's client lets such a pipeline go whole).
func TestLongPipelineMechanism(t *testing.T) {
	testredis.EachReal(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		key := "{" + b.BoardName(t) + "}:k"
		for _, write := range []bool{true, false} {
			dc := newDroppingClient(t, b)
			cmds := func() rueidis.Commands {
				cmds := make(rueidis.Commands, 2000)
				for i := range cmds {
					if write {
						cmds[i] = dc.B().Incr().Key(key).Build()
					} else {
						cmds[i] = dc.B().Get().Key(key).Build()
					}
				}
				return cmds
			}
			require.NoError(t, firstResultErr(dc.DoMulti(ctx, cmds()...)))
			dc.drop(t)
			dc.Redial(t) // the auto-pipelined connection, not the pooled one
			err := firstResultErr(dc.DoMulti(ctx, cmds()...))
			if write {
				require.Error(t, err, "a long pipeline of writes on the closed connection")
				_, isRedis := rueidis.IsRedisErr(err)
				require.False(t, isRedis, "%v", err)
			} else {
				require.NoError(t, err, "a long pipeline of reads, sent again")
			}
		}
	})
}

func firstResultErr(res []rueidis.RedisResult) error {
	for _, r := range res {
		if err := r.Error(); err != nil && !rueidis.IsRedisNil(err) {
			return err
		}
	}
	return nil
}

// TestRemoveManyPeriods: Remove on an unsharded board keeping more
// readable periods than its MULTI may hold (a ZREM each, past 1,500
// commands) runs as one script of the same commands: the members go from
// every period, with their data, and the top mirror goes (WithHotTop).
func TestRemoveManyPeriods(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprint("hot=", hot), func(t *testing.T) {
				opts := []lb.Option{lb.WithWindows(lb.Daily()), lb.WithRetention(1600 * 24 * time.Hour), lb.WithClock(fixed(future))}
				if hot {
					opts = append(opts, lb.WithHotTop(10))
				}
				board, _ := newBoard(t, b, opts...)
				old := future.Add(-1500 * 24 * time.Hour)
				for _, at := range []time.Time{future, old} {
					for _, m := range []string{"a", "b"} {
						_, err := board.Submit(ctx, m, 5, lb.WithTime(at))
						require.NoError(t, err)
					}
				}
				require.NoError(t, board.SetData(ctx, "a", "x"))
				top, err := board.Top(ctx, 10) // builds the mirror (WithHotTop)
				require.NoError(t, err)
				require.Len(t, top, 2)
				periods, err := board.Periods(ctx)
				require.NoError(t, err)
				require.Greater(t, len(periods), 1496)
				require.NoError(t, board.Remove(ctx, "a"))
				for _, at := range []time.Time{future, old} {
					_, err := board.Rank(ctx, "a", lb.At(at))
					require.ErrorIs(t, err, lb.ErrNotRanked)
					st, err := board.Rank(ctx, "b", lb.At(at))
					require.NoError(t, err)
					require.Equal(t, int64(1), st.Total)
				}
				top, err = board.Top(ctx, 10, lb.IncludeData())
				require.NoError(t, err)
				require.Equal(t, []string{"b"}, entryMembers(top), "the mirror went with a")
				_, err = board.Submit(ctx, "a", 1)
				require.NoError(t, err)
				st, err := board.Rank(ctx, "a", lb.IncludeData())
				require.NoError(t, err)
				require.Empty(t, st.Data, "a's data went")
			})
		}
	})
}

func entryMembers(es []lb.Entry) []string {
	ms := make([]string, len(es))
	for i, e := range es {
		ms[i] = e.Member
	}
	return ms
}
