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
	eachBackendHot(t, runCheckRoundTrips)
}

func runCheckRoundTrips(t *testing.T, b *testredis.Backend, hot bool) {
	ctx := context.Background()
	bounds := []float64{0, 50}
	opts := []lb.Option{lb.WithShards(bounds...), lb.WithWindows(lb.AllTime()), lb.WithClock(fixed(future))}
	name, board, scores := checkPinBoard(t, b, hot, opts)
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
	warmCheckPin(t, board, hot, missing, stray)
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

// checkWant is one report a counted Check must return: its window, its
// layout, and the findings it must hold alone.
type checkWant struct {
	window         string
	shadow         bool
	missing, stray []string
}

// checkStep is one Check counted: the defect planted before it, whether
// it repairs, its reports in order, and its round trips.
type checkStep struct {
	name   string
	plant  func()
	repair bool
	want   []checkWant
	trips  int64
}

// runCheckSteps runs steps in order on board, each Check's reports
// compared with its wants and its round trips with its count.
func runCheckSteps(t *testing.T, b *testredis.Backend, board *lb.Leaderboard, steps []checkStep) {
	t.Helper()
	ctx := context.Background()
	for _, s := range steps {
		if s.plant != nil {
			s.plant()
		}
		before := b.Client.Calls()
		reps, err := board.Check(ctx, s.repair)
		trips := b.Client.Calls() - before
		require.NoError(t, err, s.name)
		require.Len(t, reps, len(s.want), "%s: reports %+v", s.name, reps)
		for i, w := range s.want {
			r := reps[i]
			want := lb.CheckReport{Window: w.window, Period: r.Period, Members: r.Members, Shadow: w.shadow,
				Missing: w.missing, Stray: w.stray, Repaired: s.repair && len(w.missing)+len(w.stray) > 0}
			require.Equal(t, fmt.Sprint(want), fmt.Sprint(r), "%s: report %d", s.name, i)
		}
		require.Equal(t, s.trips, trips, "[%s] Check %s: round trips", b.Name, s.name)
	}
}

// checkTrips are the figures of Check's doc comment (and WithHotTop's)
// on one backend, for a period whose shards are each one ZSCAN page.
type checkTrips struct {
	cluster bool
	hot     bool
}

// by picks the doc's figure on one node or on a Cluster.
func (c checkTrips) by(oneNode, onCluster int64) int64 {
	if c.cluster {
		return onCluster
	}
	return oneNode
}

// scan is a layout's scan of one period: the partitions 256 a round
// trip, then each of its shards.
func (c checkTrips) scan(bounds []float64) int64 { return int64(keys.Partitions/256 + len(bounds) + 1) }

// confirm is the confirming reads of a layout's suspects: on one node
// one MULTI for the board's own layout; two reads in a row for a shadow
// (one MULTI each) and on a Cluster (five round trips).
func (c checkTrips) confirm(shadow bool) int64 {
	if shadow {
		return c.by(2, 5)
	}
	return c.by(1, 5)
}

// repair is a layout's repair of one period: one script on one node, a
// write's two steps on a Cluster; with the hot top's mirror deleted in
// one more when the repair is the board's own layout's, which the top is
// read from (a shadow's changes nothing a read sees).
func (c checkTrips) repair(shadow bool) int64 {
	if c.hot && !shadow {
		return c.by(1, 2) + 1
	}
	return c.by(1, 2)
}

// legacy is the round trip a repair of a Stray takes first: whether an
// older version's partitions are there.
const checkLegacyTrip = int64(1)

// TestCheckRoundTripsShadow counts Check's round trips on a board with a
// shadow layout (WithShadowShards) against Check's doc comment, on every
// backend, with and without a hot top: each layout's scan (the shadow's
// reads the partitions again, then its own shards), the confirming reads
// of each layout's suspects (on one node one MULTI for the board's own
// layout and two reads in a row for the shadow's; on a Cluster five
// round trips either way), and a repair in that layout alone.
func TestCheckRoundTripsShadow(t *testing.T) {
	eachBackendHot(t, runCheckRoundTripsShadow)
}

func runCheckRoundTripsShadow(t *testing.T, b *testredis.Backend, hot bool) {
	ctx := context.Background()
	bounds, shadow := []float64{0, 50}, []float64{25}
	opts := []lb.Option{lb.WithShards(bounds...), lb.WithShadowShards(shadow...), lb.WithWindows(lb.AllTime()), lb.WithClock(fixed(future))}
	name, board, scores := checkPinBoard(t, b, hot, opts)
	period := lb.AllTime().Period(future).ID
	shard := func(layout []float64, m string) string {
		return shardKey(name, layout, shardOf(layout, scores[m]), "alltime", period)
	}
	do := func(cmd func() error) { require.NoError(t, cmd()) }
	zrem := func(layout []float64, m string) func() {
		return func() { do(b.Client.Client.Do(ctx, b.Client.B().Zrem().Key(shard(layout, m)).Member(m).Build()).Error) }
	}
	ghost := func() {
		do(b.Client.Client.Do(ctx, b.Client.B().Zadd().Key(shard(shadow, "p5")).ScoreMember().ScoreMember(scores["p5"], "ghost").Build()).Error)
	}
	warmCheckPin(t, board, hot, zrem(bounds, "p3"), zrem(shadow, "p4"), ghost)
	c := checkTrips{cluster: b.Name == "cluster", hot: hot}
	scan := c.scan(bounds) + c.scan(shadow)
	clean := []checkWant{{window: "alltime"}, {window: "alltime", shadow: true}}
	inMain := func(missing ...string) []checkWant {
		return []checkWant{{window: "alltime", missing: missing}, {window: "alltime", shadow: true}}
	}
	inShadow := func(missing, stray []string) []checkWant {
		return []checkWant{{window: "alltime"}, {window: "alltime", shadow: true, missing: missing, stray: stray}}
	}
	runCheckSteps(t, b, board, []checkStep{
		{"clean", nil, false, clean, scan},
		{"clean with repair", nil, true, clean, scan},
		{"missing", zrem(bounds, "p3"), false, inMain("p3"), scan + c.confirm(false)},
		{"missing repaired", nil, true, inMain("p3"), scan + c.confirm(false) + c.repair(false)},
		{"missing from the shadow", zrem(shadow, "p4"), false, inShadow([]string{"p4"}, nil), scan + c.confirm(true)},
		{"missing from the shadow repaired", nil, true, inShadow([]string{"p4"}, nil), scan + c.confirm(true) + c.repair(true)},
		{"clean after the repairs", nil, true, clean, scan},
		{"stray in the shadow", ghost, false, inShadow(nil, []string{"ghost"}), scan + c.confirm(true)},
		{"stray in the shadow repaired", nil, true, inShadow(nil, []string{"ghost"}), scan + c.confirm(true) + checkLegacyTrip + c.repair(true)},
		{"clean at last", nil, false, clean, scan},
	})
}

// TestCheckRoundTripsWindows counts Check's round trips on a board of two
// windows (all-time and daily) against Check's doc comment, on every
// backend, with and without a hot top: Check walks each window's current
// period, each at a one-period Check's cost, so a clean board costs two
// scans, and a defect's confirming reads and repair (with the hot top,
// the mirror's delete) are paid in the window holding it alone.
func TestCheckRoundTripsWindows(t *testing.T) {
	eachBackendHot(t, runCheckRoundTripsWindows)
}

func runCheckRoundTripsWindows(t *testing.T, b *testredis.Backend, hot bool) {
	ctx := context.Background()
	bounds := []float64{0, 50}
	windows := []lb.Window{lb.AllTime(), lb.Daily()}
	opts := []lb.Option{lb.WithShards(bounds...), lb.WithWindows(windows...), lb.WithClock(fixed(future))}
	name, board, scores := checkPinBoard(t, b, hot, opts)
	shard := func(w lb.Window, m string) string {
		return shardKey(name, bounds, shardOf(bounds, scores[m]), w.Name(), w.Period(future).ID)
	}
	do := func(cmd func() error) { require.NoError(t, cmd()) }
	zrem := func(w lb.Window, m string) func() {
		return func() { do(b.Client.Client.Do(ctx, b.Client.B().Zrem().Key(shard(w, m)).Member(m).Build()).Error) }
	}
	zremBoth := func() { zrem(windows[0], "p3")(); zrem(windows[1], "p3")() }
	ghost := func() {
		do(b.Client.Client.Do(ctx, b.Client.B().Zadd().Key(shard(windows[1], "p5")).ScoreMember().ScoreMember(scores["p5"], "ghost").Build()).Error)
	}
	warmCheckPin(t, board, hot, zremBoth, ghost)
	if hot { // the daily window's mirror too
		_, err := board.Top(ctx, 10, lb.In(windows[1]))
		require.NoError(t, err)
	}
	c := checkTrips{cluster: b.Name == "cluster", hot: hot}
	scan := 2 * c.scan(bounds)
	want := func(all, daily checkWant) []checkWant {
		all.window, daily.window = windows[0].Name(), windows[1].Name()
		return []checkWant{all, daily}
	}
	clean := want(checkWant{}, checkWant{})
	p3 := checkWant{missing: []string{"p3"}}
	runCheckSteps(t, b, board, []checkStep{
		{"clean", nil, false, clean, scan},
		{"clean with repair", nil, true, clean, scan},
		{"missing in all-time", zrem(windows[0], "p3"), false, want(p3, checkWant{}), scan + c.confirm(false)},
		{"missing in all-time repaired", nil, true, want(p3, checkWant{}), scan + c.confirm(false) + c.repair(false)},
		{"missing in both", zremBoth, false, want(p3, p3), scan + 2*c.confirm(false)},
		{"missing in both repaired", nil, true, want(p3, p3), scan + 2*(c.confirm(false)+c.repair(false))},
		{"clean after the repairs", nil, true, clean, scan},
		{"stray in daily", ghost, false, want(checkWant{}, checkWant{stray: []string{"ghost"}}), scan + c.confirm(false)},
		{"stray in daily repaired", nil, true, want(checkWant{}, checkWant{stray: []string{"ghost"}}), scan + c.confirm(false) + checkLegacyTrip + c.repair(false)},
		{"clean at last", nil, false, clean, scan},
	})
}

// eachBackendHot runs a Check pin on every backend, without and with a hot
// top.
func eachBackendHot(t *testing.T, run func(*testing.T, *testredis.Backend, bool)) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, hot := range []bool{false, true} {
			t.Run(fmt.Sprintf("hot=%v", hot), func(t *testing.T) { run(t, b, hot) })
		}
	})
}

// checkPinBoard makes a Check pin's board of opts (WithHotTop(10) too
// when hot) and loads its 40 members, whose scores fall in every shard of
// bounds {0, 50} and of the shadow bounds {25}.
func checkPinBoard(t *testing.T, b *testredis.Backend, hot bool, opts []lb.Option) (string, *lb.Leaderboard, map[string]float64) {
	if hot {
		opts = append(opts, lb.WithHotTop(10))
	}
	name := shardName(t, b)
	board, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	scores := map[string]float64{}
	for i := range 40 {
		scores[fmt.Sprint("p", i)] = float64(i*7%150 - 20)
	}
	require.NoError(t, board.SubmitMany(context.Background(), scores))
	return name, board, scores
}

// warmCheckPin plants each defect and has Check repair it, so that every
// script of the repairs is loaded on every node before anything is
// counted, and, when hot, builds the hot top's mirror (the default
// window's).
func warmCheckPin(t *testing.T, board *lb.Leaderboard, hot bool, plants ...func()) {
	ctx := context.Background()
	for _, plant := range plants {
		plant()
		_, err := board.Check(ctx, true)
		require.NoError(t, err)
	}
	if hot {
		_, err := board.Top(ctx, 10)
		require.NoError(t, err)
	}
}
