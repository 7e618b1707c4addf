package leaderboard

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard/internal/scripts"
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
		delAtEnd(t, c, k1, k2, k3)
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

// TestPrimaryOnlyFollows: a DoMulti's followers (scripts.Call.Follows)
// keep their order through primaryOnly (WithReplicaReads's client for the
// reads a write is built on): a write Redis refuses once before running
// it, sent again by the board's client, is followed again by the call that
// copies what it wrote, though primaryOnly takes the reads between them
// aside. No call of the board sends a follower through primaryOnly today
// (a Cluster's second step carries none; primaryView's boards only read):
// the mechanism alone, as a write's round trip would use it.
func TestPrimaryOnlyFollows(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		c := b.Client.Client
		name := b.BoardName(t)
		src, mirror, other := "{"+name+"}:src", "{"+name+"}:mirror", "{"+name+"#x}:other"
		delAtEnd(t, c, src, mirror, other)
		require.NoError(t, c.Do(ctx, c.B().Zadd().Key(other).ScoreMember().ScoreMember(3, "o").Build()).Error())
		r := &refuseOnce{Client: b.Client, name: "ZADD"}
		cmd := func(build func(rueidis.Builder) rueidis.Completed) scripts.Call {
			return scripts.Call{Cmd: func() rueidis.Completed { return build(r.B()) }}
		}
		copyOf := cmd(func(b rueidis.Builder) rueidis.Completed {
			return b.Zunionstore().Destination(mirror).Numkeys(1).Key(src).Build()
		})
		copyOf.Follows = true
		r.armed.Store(true)
		got := scripts.ExecMulti(ctx, primaryOnly{resending{r}}, []scripts.Call{
			cmd(func(b rueidis.Builder) rueidis.Completed { return b.Zscore().Key(other).Member("o").Build() }),
			cmd(func(b rueidis.Builder) rueidis.Completed {
				return b.Zadd().Key(src).ScoreMember().ScoreMember(1, "w").Build()
			}),
			cmd(func(b rueidis.Builder) rueidis.Completed { return b.Zcard().Key(other).Build() }),
			copyOf,
		})
		require.Equal(t, int64(1), r.refused.Load(), "the write was refused once")
		copied, err := c.Do(ctx, c.B().Zrange().Key(mirror).Min("0").Max("-1").Build()).AsStrSlice()
		require.NoError(t, err)
		require.Equal(t, []string{"w"}, copied, "the follower ran after the write sent again")
		require.Len(t, got, 4)
		s, err := got[0].AsFloat64()
		require.NoError(t, err)
		require.Equal(t, 3.0, s)
		for i, want := range []int64{1, 1, 1} { // ZADD, ZCARD, ZUNIONSTORE
			n, err := got[i+1].AsInt64()
			require.NoError(t, err, "reply %d", i+1)
			require.Equal(t, want, n, "reply %d", i+1)
		}
	})
}

// refuseOnce is a client that, once armed, answers the first command
// named name of its next DoMulti TRYAGAIN without running it (in its
// place it sends a script that answers so, by the same key, which reaches
// the same node), and sends the others: a write whose keys a migrating
// slot splits, beside calls whose keys it does not split.
type refuseOnce struct {
	rueidis.Client
	name    string
	armed   atomic.Bool
	refused atomic.Int64
}

func (c *refuseOnce) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	i := slices.IndexFunc(cmds, func(cmd rueidis.Completed) bool { return cmd.Commands()[0] == c.name })
	if i < 0 || !c.armed.CompareAndSwap(true, false) {
		return c.Client.DoMulti(ctx, cmds...)
	}
	cmds = slices.Clone(cmds)
	cmds[i] = c.B().Eval().Script("return redis.error_reply('TRYAGAIN Multiple keys request during rehashing of slot')").
		Numkeys(1).Key(cmds[i].Commands()[1]).Build()
	c.refused.Add(1)
	return c.Client.DoMulti(ctx, cmds...)
}

// TestClientWrappersTakeFollowers: every type of the package that wraps a
// client (embeds rueidis.Client) has DoMultiFollows (scripts.Resender):
// one that wraps the board's client and lacks it would send a DoMulti's
// followers once, before a write of theirs that the board's client sends
// again (TestPrimaryOnlyFollows).
func TestClientWrappersTakeFollowers(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	wrappers := map[string]bool{} // type name: has DoMultiFollows
	var methods []*ast.FuncDecl
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, 0)
		require.NoError(t, err)
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				if st, ok := n.Type.(*ast.StructType); ok && embedsClient(st) {
					wrappers[n.Name.Name] = false
				}
			case *ast.FuncDecl:
				if n.Recv != nil && n.Name.Name == "DoMultiFollows" {
					methods = append(methods, n)
				}
			}
			return true
		})
	}
	for _, m := range methods {
		typ := m.Recv.List[0].Type
		if star, ok := typ.(*ast.StarExpr); ok {
			typ = star.X
		}
		if id, ok := typ.(*ast.Ident); ok {
			if _, ok := wrappers[id.Name]; ok {
				wrappers[id.Name] = true
			}
		}
	}
	require.Contains(t, wrappers, "primaryOnly")
	for name, ok := range wrappers {
		require.True(t, ok, "%s embeds rueidis.Client without DoMultiFollows", name)
	}
}

// embedsClient reports whether st embeds rueidis.Client.
func embedsClient(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if sel, ok := f.Type.(*ast.SelectorExpr); ok && len(f.Names) == 0 && sel.Sel.Name == "Client" {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == "rueidis" {
				return true
			}
		}
	}
	return false
}

// delAtEnd deletes keys when the test ends (one DEL each: on a Cluster
// they may lie in different slots).
func delAtEnd(t *testing.T, c rueidis.Client, keys ...string) {
	t.Cleanup(func() {
		for _, k := range keys {
			_ = c.Do(context.Background(), c.B().Del().Key(k).Build()).Error()
		}
	})
}
