package leaderboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// afterDryRun is a client that runs hook once, just before the first
// pipeline of partition writes that follows a SubmitMany's dry run: what
// another server's write does between the two.
type afterDryRun struct {
	rueidis.Client
	dry  atomic.Bool
	hook atomic.Pointer[func()]
}

func (c *afterDryRun) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	for _, cmd := range multi {
		switch args := cmd.Commands(); {
		case slices.Contains(args, "check"):
			c.dry.Store(true)
		case slices.Contains(args, "submit") && c.dry.Load():
			if f := c.hook.Swap(nil); f != nil {
				(*f)()
			}
		}
	}
	return c.Client.DoMulti(ctx, multi...)
}

// refusingShardedOpts is a sharded Accumulate board whose totals stop at
// MaxScore 100 (a tie-break), with a store: one whose partition groups may
// refuse a SubmitMany's total after its dry run passed.
func refusingShardedOpts(t *testing.T) []lb.Option {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: future.Add(-time.Hour), Resolution: time.Second, MaxScore: 100})
	require.NoError(t, err)
	return []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithTieBreak(tb), lb.WithShards(50), lb.WithStore(newMemStore()), lb.WithClock(fixed(future))}
}

// partGroup is the partition group of member m.
func partGroup(m string) int { return keys.GroupOf(keys.PartitionOf(m)) }

// inOtherGroup is a member named from prefix whose partition group is none
// of the others': prefix itself, or prefix and a number.
func inOtherGroup(prefix string, others ...string) string {
	taken := func(m string) bool {
		return slices.ContainsFunc(others, func(o string) bool { return partGroup(o) == partGroup(m) })
	}
	m := prefix
	for i := 0; taken(m); i++ {
		m = fmt.Sprintf("%s%d", prefix, i)
	}
	return m
}

// TestShardedManyRefusedGroupRetractsItsOwn: a SubmitMany on a sharded
// Cluster board whose dry run passed can still have one partition group
// refuse its total (a concurrent write pushed it past MaxScore between the
// two), while the other groups applied theirs. The store then takes back
// the refused group's submissions alone: it took back the whole batch, and
// the applied members' scores, in Redis, were lost to the store (Verify
// named them, a Rebuild dropped them).
func TestShardedManyRefusedGroupRetractsItsOwn(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	name := b.BoardName(t)
	opts := refusingShardedOpts(t)
	c := &afterDryRun{Client: b.Client}
	board, err := lb.New(c, name, opts...)
	require.NoError(t, err)
	other, err := lb.New(b.Client, name, opts...) // another server
	require.NoError(t, err)
	applied := "a"
	refused := inOtherGroup("b", applied)
	_, err = board.Submit(ctx, refused, 90)
	require.NoError(t, err)
	hook := func() {
		_, err := other.Submit(ctx, refused, 10) // 100: the batch's 5 now passes MaxScore
		require.NoError(t, err)
	}
	c.hook.Store(&hook)
	err = board.SubmitMany(ctx, map[string]float64{applied: 5, refused: 5})
	require.ErrorIs(t, err, lb.ErrInvalidScore)
	st, err := board.Rank(ctx, applied)
	require.NoError(t, err)
	require.Equal(t, 5.0, st.Score, "the other group applied")
	reports, err := board.Verify(ctx)
	require.NoError(t, err)
	for _, r := range reports {
		require.True(t, r.Clean(), "%+v", r)
	}
	b.Wipe(t, name)
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	for m, want := range map[string]float64{applied: 5, refused: 100} {
		st, err := board.Rank(ctx, m)
		require.NoError(t, err)
		require.Equal(t, want, st.Score, m)
	}
}

// TestShardedManyRefusedAndFailedGroups: a SubmitMany on a sharded Cluster
// board where, after the dry run passed, one partition group refuses its
// total (a concurrent write), another group's call fails (a timeout, the
// network) and a third applies. The answer is the refusal and ErrPending
// both: the store takes back the refused group's submissions alone and
// keeps the failed group's for the next Rebuild. It was the error of
// whichever group came first: the refusal alone (the failed group's
// submissions pending in the store, unsaid), or ErrPending alone with the
// refused submission kept in the store (a Rebuild then counted it).
func TestShardedManyRefusedAndFailedGroups(t *testing.T) {
	b := testredis.Cluster(t)
	ctx := context.Background()
	name := b.BoardName(t)
	opts := refusingShardedOpts(t)
	fc := &faultClient{Client: b.Client}
	c := &afterDryRun{Client: fc}
	board, err := lb.New(c, name, opts...)
	require.NoError(t, err)
	other, err := lb.New(b.Client, name, opts...) // another server
	require.NoError(t, err)
	applied := "a"
	refused := inOtherGroup("b", applied)
	lost := inOtherGroup("c", applied, refused)
	_, err = board.Submit(ctx, refused, 90)
	require.NoError(t, err)
	tag := strings.TrimSuffix(keys.NewBoard("lb", name).Partitions().GroupClock(partGroup(lost)), ":clock")
	hook := func() {
		_, err := other.Submit(ctx, refused, 10) // 100: the batch's 5 now passes MaxScore
		require.NoError(t, err)
		fc.failing.Store(&tag) // and the lost member's group call fails
	}
	c.hook.Store(&hook)
	err = board.SubmitMany(ctx, map[string]float64{applied: 5, refused: 5, lost: 5})
	fc.failing.Store(nil)
	require.ErrorIs(t, err, lb.ErrInvalidScore)
	require.ErrorIs(t, err, lb.ErrPending)
	require.ErrorIs(t, err, errFault)
	st, err := board.Rank(ctx, applied)
	require.NoError(t, err)
	require.Equal(t, 5.0, st.Score, "the third group applied")
	_, err = board.Rank(ctx, lost)
	require.ErrorIs(t, err, lb.ErrNotRanked, "the failed group wrote nothing")
	b.Wipe(t, name)
	_, err = board.Rebuild(ctx)
	require.NoError(t, err)
	for m, want := range map[string]float64{applied: 5, refused: 100, lost: 5} {
		st, err := board.Rank(ctx, m)
		require.NoError(t, err)
		require.Equal(t, want, st.Score, m)
	}
}
