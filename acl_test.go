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

// aclRules are the ACL categories the README's "Keys and Redis version"
// says the SDK's own commands need, for its key prefix: without
// @connection (PING, CLIENT) and without @dangerous.
var aclRules = []string{"+@read", "+@write", "+@sortedset", "+@hash", "+@string", "+@keyspace", "+@scripting", "+@transaction", "-@dangerous"}

// TestACL runs every operation on every kind of board as a Redis user
// given only aclRules on the keys under its prefix (a client without
// client-side caching, which needs CLIENT TRACKING: @connection). An
// unsharded Submit on a board without expiring windows padded its MULTI
// with a PING, which such a user may not send: every one failed NOPERM.
func TestACL(t *testing.T) {
	b := testredis.Real(t)
	ctx := context.Background()
	user := "lbtest-" + strings.ReplaceAll(b.BoardName(t), ":", "-")
	prefix := "acl" + fmt.Sprint(time.Now().UnixNano())
	admin := b.Client.Client
	args := append([]string{"ACL", "SETUSER", user, "reset", "on", ">pw", "~" + prefix + ":*", "resetchannels"}, aclRules...)
	require.NoError(t, admin.Do(ctx, admin.B().Arbitrary(args...).Build()).Error())
	t.Cleanup(func() {
		_ = admin.Do(context.Background(), admin.B().Arbitrary("ACL", "DELUSER", user).Build()).Error()
	})
	opt, err := redisurl.Parse(testredis.URL())
	require.NoError(t, err)
	opt.Username, opt.Password, opt.DisableCache = user, "pw", true
	c, err := rueidis.NewClient(opt)
	require.NoError(t, err)
	t.Cleanup(c.Close)

	kinds := map[string][]lb.Option{
		"plain":       {lb.WithStore(newMemStore())},
		"competition": {lb.WithRanking(lb.Competition), lb.WithPolicy(lb.Accumulate)},
		"sharded":     {lb.WithShards(10)},
		"hot":         {lb.WithHotTop(3)},
		"replica":     {lb.WithReplicaReads()},
	}
	for kind, opts := range kinds {
		t.Run(kind, func(t *testing.T) {
			board, err := lb.New(c, "acl-"+kind, append(opts, lb.WithKeyPrefix(prefix), lb.WithWindows(lb.AllTime(), lb.Daily()))...)
			require.NoError(t, err)
			for _, op := range aclOps(ctx, board, kind == "sharded", kind == "plain") {
				require.NoError(t, op.err, "%s: %s", kind, op.name)
			}
		})
	}
}

type aclOp struct {
	name string
	err  error
}

// aclOps runs every operation of board once (Check on a sharded board,
// Rebuild and Verify on one with a store) and returns their errors.
func aclOps(ctx context.Context, board *lb.Leaderboard, sharded, stored bool) []aclOp {
	var ops []aclOp
	do := func(name string, err error) { ops = append(ops, aclOp{name, err}) }
	first := func(_ any, err error) error { return err }
	allTime := lb.In(lb.AllTime())
	_, err := board.Submit(ctx, "a", 10)
	do("Submit", err)
	_, err = board.Submit(ctx, "b", 20, lb.WithID("acl-1"), lb.WithData("B"))
	do("Submit WithID WithData", err)
	do("SubmitMany", board.SubmitMany(ctx, map[string]float64{"c": 30, "d": 5}))
	do("Top", first(board.Top(ctx, 3)))
	do("Top all-time", first(board.Top(ctx, 3, allTime)))
	do("Top IncludeData", first(board.Top(ctx, 3, lb.IncludeData())))
	do("Rank", first(board.Rank(ctx, "a")))
	do("Ranks", first(board.Ranks(ctx, []string{"a", "b"})))
	do("Around", first(board.Around(ctx, "a", 1)))
	do("Page", first(board.Page(ctx, 2, 2)))
	do("Range", first(board.Range(ctx, 2, 3)))
	do("Between", first(board.Between(ctx, 0, 100, 10)))
	do("CountBetween", first(board.CountBetween(ctx, 0, 100)))
	_, _, err = board.AroundScore(ctx, 15, 1)
	do("AroundScore", err)
	do("Cutoff", first(board.Cutoff(ctx, 50)))
	do("Among", first(board.Among(ctx, []string{"a", "b"})))
	do("Count", first(board.Count(ctx)))
	do("Periods", first(board.Periods(ctx)))
	for _, err := range board.All(ctx) {
		do("All", err)
	}
	do("SetData", board.SetData(ctx, "a", "A"))
	do("Set", board.Set(ctx, "a", 15))
	do("Set all-time", board.Set(ctx, "a", 15, allTime))
	do("RemoveBetween", first(board.RemoveBetween(ctx, 1, 6)))
	do("Remove", board.Remove(ctx, "c"))
	if bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond)); err == nil {
		_, err = bt.Submit(ctx, "e", 7)
		do("Batcher", err)
		do("Batcher Close", bt.Close(ctx))
	} else {
		do("NewBatcher", err)
	}
	if sharded {
		do("Check", first(board.Check(ctx, true)))
	}
	if stored {
		do("Rebuild", first(board.Rebuild(ctx)))
		do("Verify", first(board.Verify(ctx)))
	}
	do("Present", first(board.Present(ctx)))
	do("Reset", board.Reset(ctx, lb.In(lb.Daily())))
	do("Delete", board.Delete(ctx))
	return ops
}

// aclClusterRules are what the README adds to aclRules on a Cluster: TIME,
// which a sharded board's scripts read the node's clock by (@fast alone),
// and CLUSTER SLOTS, by which rueidis learns the slots (Redis 7; CLUSTER
// SHARDS from Redis 8).
var aclClusterRules = []string{"+time", "+cluster|slots", "+cluster|shards"}

// TestACLCluster runs every operation on a sharded and an unsharded board
// on the Cluster as a user given aclRules and aclClusterRules on every
// node; and shows why +time is there: without it a sharded board's Submit
// is refused, as the README says.
func TestACLCluster(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	user := "lbtest-" + strings.ReplaceAll(b.BoardName(t), ":", "-")
	prefix := "acl" + fmt.Sprint(time.Now().UnixNano())
	setUser := func(extra ...string) {
		for _, node := range b.Client.Client.Nodes() {
			args := append([]string{"ACL", "SETUSER", user, "reset", "on", ">pw", "~" + prefix + ":*", "resetchannels"}, aclRules...)
			require.NoError(t, node.Do(ctx, node.B().Arbitrary(append(args, extra...)...).Build()).Error())
		}
	}
	t.Cleanup(func() {
		for _, node := range b.Client.Client.Nodes() {
			_ = node.Do(context.Background(), node.B().Arbitrary("ACL", "DELUSER", user).Build()).Error()
		}
	})
	setUser(aclClusterRules...)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: testredis.ClusterAddrs(), Username: user, Password: "pw", DisableCache: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	for _, kind := range []string{"plain", "sharded"} {
		var opts []lb.Option
		if kind == "sharded" {
			opts = append(opts, lb.WithShards(10))
		}
		board, err := lb.New(c, "acl-"+kind, append(opts, lb.WithKeyPrefix(prefix), lb.WithWindows(lb.AllTime(), lb.Daily()))...)
		require.NoError(t, err)
		for _, op := range aclOps(ctx, board, kind == "sharded", false) {
			require.NoError(t, op.err, "%s: %s", kind, op.name)
		}
	}

	setUser("+cluster|slots", "+cluster|shards") // no +time
	board, err := lb.New(c, "acl-notime", lb.WithShards(10), lb.WithKeyPrefix(prefix))
	require.NoError(t, err)
	_, err = board.Submit(ctx, "a", 1)
	// Redis 7.0 words a command refused inside a script so; later ones
	// open with NOPERM.
	require.Error(t, err)
	require.Regexp(t, `NOPERM|can't run this command`, err.Error(), "a sharded board's Submit on a Cluster without +time")
	require.NoError(t, board.Delete(ctx))
}
