package leaderboard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestCheckRoundTrips counts Check's round trips against its doc comment,
// WithHotTop's and the package doc's, on every backend, with and without
// a hot top, on a sharded board of one period (three shards of a few
// dozen members, each one ZSCAN page): the scan reads the partitions 256
// a round trip, then each shard; a clean board has no suspect, so nothing
// is confirmed, repaired or dropped, with repair asked too. One planted
// defect (a member taken out of its shard: Missing; a member in a shard
// and no partition: Stray) is confirmed on one node by one MULTI, on a
// Cluster by two reads in a row (its partitions, then its shards, then
// its partitions, which the second read starts from: five round trips);
// the repair is one script on one node, two steps on a Cluster (the
// partitions, then the shards), a Stray's after one read of whether an
// older version's partitions are there; and a repair with a hot top
// deletes the mirror in one more (on a Cluster with a turn, in the same
// MULTI). Without repair the defect costs its confirming reads alone.
func TestCheckRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("hot=%v", hot), func(t *testing.T) { runCheckRoundTrips(t, b, hot) })
		}
	})
}

func runCheckRoundTrips(t *testing.T, b *testredis.Backend, hot bool) {
	ctx := context.Background()
	bounds := []float64{0, 50}
	opts := []lb.Option{lb.WithShards(bounds...), lb.WithWindows(lb.AllTime()), lb.WithClock(fixed(future))}
	if hot {
		opts = append(opts, lb.WithHotTop(10))
	}
	name := shardName(t, b)
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	scores := map[string]float64{}
	for i := range 40 {
		scores[fmt.Sprint("p", i)] = float64(i*7%150 - 20) // in all three shards
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	period := lb.AllTime().Period(future).ID
	shard := func(m string) string {
		return shardKey(name, bounds, shardOf(bounds, scores[m]), "alltime", period)
	}
	do := func(cmd func() error) { require.NoError(t, cmd()) }
	// The defects Check is to find, each planted on a sound board.
	missing := func() {
		do(b.Client.Client.Do(ctx, b.Client.B().Zrem().Key(shard("p3")).Member("p3").Build()).Error)
	}
	stray := func() {
		do(b.Client.Client.Do(ctx, b.Client.B().Zadd().Key(shard("p5")).ScoreMember().ScoreMember(scores["p5"], "ghost").Build()).Error)
	}
	cluster := b.Name == "cluster"
	// by picks the doc's figure on one node or on a Cluster.
	by := func(oneNode, onCluster int64) int64 {
		if cluster {
			return onCluster
		}
		return oneNode
	}
	scan := int64(keys.Partitions/256 + len(bounds) + 1)
	confirm := by(1, 5)
	repair := by(1, 2)
	legacy := int64(1) // a repair of a Stray asks first whether an older version's partitions are there
	mirror := int64(0)
	if hot {
		mirror = 1
	}
	// check is a Check that must find missing and stray alone (and with
	// repair, repair them), so that the path counted is the one named.
	check := func(repair bool, missing, stray []string) func() error {
		return func() error {
			reps, err := board.Check(ctx, repair)
			switch {
			case err != nil:
				return err
			case len(reps) != 1:
				return fmt.Errorf("%d reports, want 1", len(reps))
			}
			got := lb.CheckReport{Window: reps[0].Window, Period: reps[0].Period, Members: reps[0].Members,
				Missing: missing, Stray: stray, Repaired: repair && len(missing)+len(stray) > 0}
			if fmt.Sprint(got) != fmt.Sprint(reps[0]) {
				return fmt.Errorf("report %+v, want %+v", reps[0], got)
			}
			return nil
		}
	}
	// Every script of the repair loaded on every node before anything is
	// counted, and the hot top's mirror built.
	for _, plant := range []func(){missing, stray} {
		plant()
		_, err := board.Check(ctx, true)
		require.NoError(t, err)
	}
	if hot {
		_, err := board.Top(ctx, 10)
		require.NoError(t, err)
	}
	for _, o := range []struct {
		name  string
		plant func()
		want  int64
		fn    func() error
	}{
		{"clean", nil, scan, check(false, nil, nil)},
		{"clean with repair", nil, scan, check(true, nil, nil)},
		{"missing", missing, scan + confirm, check(false, []string{"p3"}, nil)},
		{"missing repaired", nil, scan + confirm + repair + mirror, check(true, []string{"p3"}, nil)},
		{"clean after the repair", nil, scan, check(true, nil, nil)},
		{"stray", stray, scan + confirm, check(false, nil, []string{"ghost"})},
		{"stray repaired", nil, scan + confirm + legacy + repair + mirror, check(true, nil, []string{"ghost"})},
		{"clean at last", nil, scan, check(false, nil, nil)},
	} {
		if o.plant != nil {
			o.plant()
		}
		before := b.Client.Calls()
		require.NoError(t, o.fn(), o.name)
		require.Equal(t, o.want, b.Client.Calls()-before, "[%s] hot %v: Check %s: round trips", b.Name, hot, o.name)
	}
	reps, err := board.Check(ctx, false)
	require.NoError(t, err)
	requireCleanReport(t, reps[0], int64(len(scores)), "after the repairs")
}

// TestRebuildDropsMirrorsInOneMore: with WithHotTop, Rebuild deletes each
// period's mirror in one round trip more than the same Rebuild without it
// (WithHotTop: "in one more"; on a sharded Cluster board with a turn), on
// every kind of board and backend: here one, one period being live. The
// docs give no count for Rebuild itself (as many as its data needs), so
// the test compares two boards of one name and store, one with a hot top.
func TestRebuildDropsMirrorsInOneMore(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		name := shardName(t, b)
		store := newMemStore()
		opts := append([]lb.Option{lb.WithStore(store), lb.WithWindows(lb.AllTime()), lb.WithClock(fixed(future))}, kind...)
		cold, err := lb.New(b.Client, name, opts...)
		require.NoError(t, err)
		hot, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(10))...)
		require.NoError(t, err)
		scores := map[string]float64{}
		for i := range 40 {
			scores[fmt.Sprint("p", i)] = float64(i*7%150 - 20)
		}
		require.NoError(t, cold.SubmitMany(ctx, scores))
		rebuild := func(board *lb.Leaderboard) int64 {
			before := b.Client.Calls()
			rep, err := board.Rebuild(ctx)
			require.NoError(t, err)
			require.Equal(t, lb.RebuildReport{Periods: 1, Members: int64(len(scores))}, rep)
			return b.Client.Calls() - before
		}
		// Warm: every script loaded on every node, and the hot top's
		// mirror built before its Rebuild is counted.
		rebuild(cold)
		rebuild(hot)
		without := rebuild(cold)
		_, err = hot.Top(ctx, 10)
		require.NoError(t, err)
		require.Equal(t, without+1, rebuild(hot), "[%s] Rebuild with a hot top: round trips", b.Name)
		require.Equal(t, without, rebuild(cold), "[%s] Rebuild again without: round trips", b.Name)
	})
}
