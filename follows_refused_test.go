package leaderboard_test

import (
	"context"
	"maps"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// A write whose round trip carries calls that must come after it (a top
// mirror's rewrite or delete, a shadow layout's repair: scripts.Call's
// Follows) may be refused by Redis before it runs (TRYAGAIN while a slot
// migrates and the write's keys straddle the two nodes, LOADING) while
// those calls, whose keys are not split, run. The board's client sends the
// write again after a pause; the calls that follow it had already copied
// what the period held before it, and were not sent again: the mirror
// missed the write (Top, even this process's, read it without the write
// until the mirror's next rewrite or its expiry), the shadow layout missed
// the member (Check reported it Missing; reads after the move to the new
// bounds would not find it). They are now sent again after the write.

// TestHotTopFollowsARefusedWrite: a write into the top whose round trip
// rewrites the mirror, refused once and sent again, leaves the mirror
// showing it; on every backend and kind of board (but a sharded Cluster
// board, whose mirror the client puts after the write, in round trips of
// their own), with WithReplicaReads too.
func TestHotTopFollowsARefusedWrite(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		if len(kind) > 0 && b.Name == "cluster" {
			t.Skip("no rewrite in a write's round trip")
		}
		eachReplicaReads(t, func(t *testing.T, more []lb.Option) {
			ctx := context.Background()
			c := &refuseLeader{Client: b.Client}
			name := shardName(t, b)
			board, err := lb.New(c, name, slices.Concat([]lb.Option{lb.WithHotTop(3)}, kind, more)...)
			require.NoError(t, err)
			for i, m := range []string{"a", "b", "c", "d"} {
				_, err := board.Submit(ctx, m, float64(10*(i+1)))
				require.NoError(t, err)
			}
			// The write's script loaded: a server lacking it answers the write
			// sent again NOSCRIPT, after which the rewrite runs again anyway.
			_, err = board.Submit(ctx, "z", 1, lb.WithID("warm"))
			require.NoError(t, err)
			top, err := board.Top(ctx, 1) // this process's snapshot: a write of 1000 reaches the top
			require.NoError(t, err)
			require.Equal(t, "d", top[0].Member)
			c.arm()
			_, err = board.Submit(ctx, "best", 1000, lb.WithID("first")) // a script
			require.NoError(t, err)
			require.Equal(t, int64(1), c.refused.Load(), "the write was refused once")
			top, err = board.Top(ctx, 2)
			require.NoError(t, err)
			require.Equal(t, []string{"best", "d"}, members(top), "the mirror after the write refused once")
		})
	})
}

// eachReplicaReads runs body without WithReplicaReads and with it, whose
// reads for writes go through another client (primaryOnly), which must
// keep a write's followers (TestPrimaryOnlyFollows).
func eachReplicaReads(t *testing.T, body func(t *testing.T, more []lb.Option)) {
	t.Run("primary", func(t *testing.T) { body(t, nil) })
	t.Run("replicaReads", func(t *testing.T) { body(t, []lb.Option{lb.WithReplicaReads()}) })
}

// TestHotTopDropFollowsARefusedWrite: a write whose round trip deletes the
// mirror after it (RemoveBetween on an unsharded board; SubmitMany and
// Reset on a sharded board on one node), refused once and sent again while
// a read rebuilt the mirror from the period before the write, leaves no
// mirror behind the write: the delete runs again after it. (A sharded
// Cluster board deletes its mirrors in a round trip of their own.)
func TestHotTopDropFollowsARefusedWrite(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		sharded := len(kind) > 0
		if sharded && b.Name == "cluster" {
			t.Skip("no delete in a write's round trip")
		}
		ctx := context.Background()
		c := &refuseLeader{Client: b.Client}
		name := shardName(t, b)
		opts := append([]lb.Option{lb.WithHotTop(3)}, kind...)
		board, err := lb.New(c, name, opts...)
		require.NoError(t, err)
		reader, err := lb.New(b.Client, name, opts...)
		require.NoError(t, err)
		c.between = func() { _, _ = reader.Top(ctx, 3) } // rebuilds the mirror the delete left
		writes := []struct {
			name  string
			write func() error
			want  []string
		}{
			{"SubmitMany", func() error { return board.SubmitMany(ctx, map[string]float64{"best": 1000}) }, []string{"best", "d", "c"}},
			{"RemoveBetween", func() error { _, err := board.RemoveBetween(ctx, 500, 2000); return err }, []string{"d", "c", "b"}},
			{"Reset", func() error { return board.Reset(ctx) }, []string{}},
		}
		for _, w := range writes {
			if !sharded && w.name != "RemoveBetween" {
				continue // a MULTI holds the delete
			}
			t.Run(w.name, func(t *testing.T) {
				require.NoError(t, w.write()) // loads its script (see TestHotTopFollowsARefusedWrite)
				require.NoError(t, board.Reset(ctx))
				seed := map[string]float64{"a": 10, "b": 20, "c": 30, "d": 40}
				if w.name != "SubmitMany" {
					seed["best"] = 1000
				}
				require.NoError(t, board.SubmitMany(ctx, seed))
				_, err := reader.Top(ctx, 3) // the mirror
				require.NoError(t, err)
				c.arm()
				require.NoError(t, w.write())
				require.Equal(t, int64(1), c.refused.Swap(0), "the write was refused once")
				top, err := reader.Top(ctx, 3)
				require.NoError(t, err)
				require.Equal(t, w.want, members(top), "the mirror after the write refused once")
			})
		}
	})
}

// TestShadowFollowsARefusedWrite: on one node a write's shadow share (a
// repair copying into the shadow what the write put in the partitions)
// rides in its round trip after it; a write refused once and sent again
// leaves the member in the shadow layout, and Check reports both layouts
// clean; with WithReplicaReads too.
func TestShadowFollowsARefusedWrite(t *testing.T) {
	for _, b := range []*testredis.Backend{testredis.Mini(t), testredis.Real(t)} {
		t.Run(b.Name, func(t *testing.T) {
			eachReplicaReads(t, func(t *testing.T, more []lb.Option) {
				ctx := context.Background()
				c := &refuseLeader{Client: b.Client}
				board, moved := shadowFilled(t, b, c, more...)
				writes := writesOf7(t, board)
				for _, kind := range slices.Sorted(maps.Keys(writes)) {
					t.Run(kind, func(t *testing.T) {
						// Loads the write's script (see TestHotTopFollowsARefusedWrite).
						require.NoError(t, writes[kind]("warm-"+kind))
						m := "new-" + kind
						c.arm()
						require.NoError(t, writes[kind](m))
						require.Equal(t, int64(1), c.refused.Swap(0), "the write was refused once")
						st, err := moved.Rank(ctx, m)
						require.NoError(t, err, "the member is in the shadow layout")
						require.Equal(t, 7.0, st.Score)
						reps, err := board.Check(ctx, false)
						require.NoError(t, err)
						for _, r := range reps {
							require.Empty(t, r.Missing, "Check of %s, shadow=%v", r.Window, r.Shadow)
							require.Empty(t, r.Stale, "Check of %s, shadow=%v", r.Window, r.Shadow)
						}
					})
				}
			})
		})
	}
}

func members(es []lb.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Member
	}
	return out
}

// refuseLeader is a client that, once armed, answers the first command
// of its next DoMulti of several commands, a script with keys or an
// UNLINK, TRYAGAIN without running it (in its place it sends a script
// that answers so, by the same key, which reaches the same node), and
// sends the others: a write whose keys a migrating slot splits, beside
// calls whose keys it does not split. between, if set, runs once that
// DoMulti is answered, before the write is sent again.
type refuseLeader struct {
	rueidis.Client
	armed   atomic.Bool
	refused atomic.Int64
	between func()
}

func (c *refuseLeader) arm() { c.armed.Store(true) }

func (c *refuseLeader) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	if len(cmds) < 2 || !c.armed.Load() {
		return c.Client.DoMulti(ctx, cmds...)
	}
	args := cmds[0].Commands()
	key := ""
	switch {
	case args[0] == "EVALSHA" && args[2] != "0":
		key = args[3]
	case args[0] == "UNLINK":
		key = args[1]
	}
	if key == "" || !c.armed.CompareAndSwap(true, false) {
		return c.Client.DoMulti(ctx, cmds...)
	}
	cmds = slices.Clone(cmds)
	cmds[0] = c.B().Eval().Script("return redis.error_reply('TRYAGAIN Multiple keys request during rehashing of slot')").
		Numkeys(1).Key(key).Build()
	c.refused.Add(1)
	res := c.Client.DoMulti(ctx, cmds...)
	if c.between != nil {
		c.between()
	}
	return res
}
