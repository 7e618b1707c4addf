package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// batchCall is one submission of the model test's batch step.
type batchCall struct {
	member string
	score  float64
	data   string
	res    lb.Result
	err    error
	done   chan struct{}
}

// batchSubmit is the model test's Batcher step: up to eight submissions
// from as many goroutines, joining one after another (BatchJoined), into
// batches of a random size; the model folds them as the Batcher promises
// (per member and batch, by the policy, the writes in the order their
// first submission joined) and every caller's Result must be its write's.
func (r *modelRun) batchSubmit() {
	t, ctx := r.t, r.ctx
	size := pick(r.modelHarness, []int{1, 2, 3, 100})
	b, err := r.board.NewBatcher(lb.WithBatchWindow(time.Minute), lb.WithBatchSize(size))
	require.NoError(t, err)
	calls := make([]*batchCall, 1+r.rng.IntN(8))
	for i := range calls {
		c := &batchCall{member: r.member(), score: r.score(), done: make(chan struct{})}
		if r.rng.IntN(3) == 0 {
			c.data = pick(r.modelHarness, append([]string{""}, modelData...))
		}
		calls[i] = c
	}
	r.logf("Batcher(size %d): %s", size, batchCallsString(calls))
	var seqs []int
	lb.TraceBatch(b, func(seq int) { seqs = append(seqs, seq) })
	// Callers wait on their batch alone (a ctx that cannot end), with a
	// select of their own, or woken with the others sharing their ctx.
	shared, cancel := context.WithCancel(ctx)
	defer cancel()
	for _, c := range calls {
		before := lb.BatchJoined(b)
		cctx := pick(r.modelHarness, []context.Context{ctx, shared, shared})
		if r.rng.IntN(4) == 0 {
			own, cancelOwn := context.WithCancel(ctx)
			defer cancelOwn()
			cctx = own
		}
		go func() {
			defer close(c.done)
			c.res, c.err = b.Submit(cctx, c.member, c.score, lb.WithData(c.data))
		}()
		waitJoined(b, before, c.done)
	}
	if r.rng.IntN(4) == 0 { // bad input joins no batch and writes nothing
		_, err := b.Submit(ctx, "bad", math.NaN())
		require.ErrorIs(t, err, lb.ErrInvalidScore, r.where())
	}
	require.NoError(t, b.Close(ctx), r.where())
	for _, c := range calls {
		<-c.done
		require.NoError(t, c.err, "%s batch submit %q %v", r.where(), c.member, c.score)
	}
	_, err = b.Submit(ctx, "late", 1)
	require.ErrorIs(t, err, lb.ErrClosed, r.where())
	require.Len(t, seqs, len(calls), r.where())
	r.logf("  joined writes %v", seqs)
	r.foldBatch(calls, seqs)
}

// foldBatch applies calls to the model as the Batcher folded them (calls[i]
// into the write numbered seqs[i]; writes apply in their numbers' order),
// and checks each caller's Result against its write's. A write holds one
// member's submissions, and a member's later submission never joins an
// earlier write than its last one.
func (r *modelRun) foldBatch(calls []*batchCall, seqs []int) {
	type write struct {
		member, data string
		score        float64
		calls        []*batchCall
	}
	bySeq := map[int]*write{}
	last := map[string]int{}
	for i, c := range calls {
		w := bySeq[seqs[i]]
		if prev, ok := last[c.member]; ok {
			require.GreaterOrEqual(r.t, seqs[i], prev, "%s %q joined an earlier write than its last", r.where(), c.member)
		}
		last[c.member] = seqs[i]
		switch {
		case w == nil:
			w = &write{member: c.member, score: c.score}
			bySeq[seqs[i]] = w
		case w.member != c.member:
			r.t.Fatalf("%s write %d holds %q and %q", r.where(), seqs[i], w.member, c.member)
		case r.m.policy == lb.Replace:
			w.score = c.score
		case r.m.policy == lb.Accumulate:
			w.score += c.score
		case r.m.better(c.score, w.score):
			w.score = c.score
		}
		if c.data != "" {
			w.data = c.data
		}
		w.calls = append(w.calls, c)
	}
	now := r.clock.Now()
	for _, seq := range slices.Sorted(maps.Keys(bySeq)) {
		w := bySeq[seq]
		want := r.m.apply(now, w.member, w.score)
		if w.data != "" {
			r.m.data[w.member] = w.data
		}
		for _, c := range w.calls {
			msg := fmt.Sprintf("%s batch submit %q %v", r.where(), c.member, c.score)
			require.Len(r.t, c.res.Windows, len(want), msg)
			for i, ww := range want {
				g := c.res.Windows[i]
				require.Equal(r.t, ww.Previous, g.Previous, "%s window %d Previous", msg, i)
				requireStanding(r.t, ww.Standing, g.Standing, fmt.Sprintf("%s window %d Standing", msg, i))
				require.Equal(r.t, ww.Changed, g.Changed, "%s window %d Changed", msg, i)
			}
			requireStanding(r.t, want[0].Standing, c.res.Standing, msg+" Result.Standing")
		}
	}
}

func batchCallsString(calls []*batchCall) string {
	s := ""
	for _, c := range calls {
		s += fmt.Sprintf("(%q, %v, data %.12q) ", c.member, c.score, c.data)
	}
	return s
}

// TestBatcherOptions: bad options are refused with ErrInvalidArgument.
func TestBatcherOptions(t *testing.T) {
	board, err := lb.New(testredis.Mini(t).Client, "b")
	require.NoError(t, err)
	for _, opt := range []lb.BatchOption{nil, lb.WithBatchWindow(0), lb.WithBatchWindow(-time.Second),
		lb.WithBatchWindow(2 * time.Minute), lb.WithBatchSize(0), lb.WithBatchSize(lb.MaxN + 1)} {
		_, err := board.NewBatcher(opt)
		require.True(t, errors.Is(err, lb.ErrInvalidArgument), "%v", err)
	}
	b, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond), lb.WithBatchSize(lb.MaxN))
	require.NoError(t, err)
	require.NoError(t, b.Close(context.Background()))
	require.NoError(t, b.Close(context.Background()), "closing twice")
}

// batcherPair is the sharded model's Batcher step: the same submissions
// through a Batcher on each board of the pair, joining in the same order
// (now, the day before, or with data); tie-broken boards and scores at the
// edge of the range included, so that folds that would leave the range
// and refusals meet. Each caller must get the same error on both boards
// and, on success, the same scores and Changed; ranks and totals are not
// compared, as a sharded board writes a batch's members at once, each at
// its own moment. The pair's checks compare the boards after.
func (p *shardPair) batcherPair() {
	// One batch holds them all: which submissions fold into a batch sent
	// and still waiting depends on timing, which would fold them
	// differently on the two boards (the model test traces it).
	const size = 100
	calls := make([]*batchCall, 1+p.rng.IntN(8))
	at := make([]time.Time, len(calls))
	for i := range calls {
		calls[i] = &batchCall{member: pick(p.modelHarness, shardPool[:8]), score: p.score()}
		switch p.rng.IntN(4) {
		case 0:
			at[i] = shardEpoch.Add(time.Duration(p.rng.Int64N(int64(24 * time.Hour))))
		case 1:
			calls[i].data = pick(p.modelHarness, modelData)
		}
	}
	p.logf("Batcher(size %d): %s (times %v)", size, batchCallsString(calls), at)
	want := runBatcher(p.t, p.plain, size, calls, at)
	got := runBatcher(p.t, p.sharded, size, calls, at)
	for i, c := range calls {
		what := fmt.Sprintf("%s batch submit %q %v", p.where(), c.member, c.score)
		requireSameErr(p.t, want[i].err, got[i].err, what)
		p.count(want[i].res, want[i].err)
		require.Len(p.t, got[i].res.Windows, len(want[i].res.Windows), what)
		for j, w := range want[i].res.Windows {
			g := got[i].res.Windows[j]
			msg := fmt.Sprintf("%s window %d", what, j)
			require.Equal(p.t, w.Previous.Score, g.Previous.Score, msg+" Previous.Score")
			require.Equal(p.t, w.Previous.Rank == 0, g.Previous.Rank == 0, msg+" was ranked")
			require.Equal(p.t, w.Standing.Score, g.Standing.Score, msg+" Standing.Score")
			require.Equal(p.t, w.Changed, g.Changed, msg+" Changed")
			require.Equal(p.t, w.Closed, g.Closed, msg+" Closed")
			if p.b.Name != "cluster" {
				// On one node both boards apply the batch's writes in
				// order in one script: the standings agree too. A
				// Cluster sends a sharded board's writes at once.
				require.Equal(p.t, w.Previous, g.Previous, msg+" Previous")
				require.Equal(p.t, w.Standing, g.Standing, msg+" Standing")
			}
		}
	}
}

// runBatcher submits calls (at[i] their WithTime, zero for none) through
// a new Batcher of board, joining in order, and returns each caller's
// answer once the Batcher is closed.
func runBatcher(t *testing.T, board *lb.Leaderboard, size int, calls []*batchCall, at []time.Time) []batchCall {
	b, err := board.NewBatcher(lb.WithBatchWindow(time.Minute), lb.WithBatchSize(size))
	require.NoError(t, err)
	return runBatcherAt(t, b, calls, at)
}

// waitJoined waits until a submission has joined a batch of b (which held
// before), or has returned without joining one (bad input).
func waitJoined(b *lb.Batcher, before int, fin <-chan struct{}) {
	for lb.BatchJoined(b) == before {
		select {
		case <-fin:
			return
		case <-time.After(50 * time.Microsecond):
		}
	}
}

// TestBatcherRefusals: on an Accumulate board with a store, a folded write
// whose sum Redis refuses is written again one submission at a time, so
// that each caller gets its own answer: the refused submission alone
// fails (and leaves the store), the others land. Bad input, and a
// submission after Close, write nothing: not in Redis, not in the store.
// On every backend, unsharded and sharded, with and without a tie-break.
func TestBatcherRefusals(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []struct {
			name  string
			big   float64 // one submission alone fits; two overflow
			limit error
			opts  []lb.Option
		}{
			{"plain", math.MaxFloat64, lb.ErrInvalidScore, nil},
			{"sharded", math.MaxFloat64, lb.ErrInvalidScore, []lb.Option{lb.WithShards(0, 10)}},
			{"tiebreak", 600, lb.ErrPrecision, []lb.Option{lb.WithTieBreak(batchTieBreak(t))}},
			{"tiebreak-sharded", 600, lb.ErrPrecision, []lb.Option{lb.WithTieBreak(batchTieBreak(t)), lb.WithShards(0, 10)}},
		} {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				store := newMemStore()
				name := b.BoardName(t)
				board, err := lb.New(b.Client, name, append(c.opts, lb.WithPolicy(lb.Accumulate), lb.WithStore(store))...)
				require.NoError(t, err)
				_, err = board.Submit(ctx, "a", c.big)
				require.NoError(t, err)
				before, stored := b.Snapshot(t, name), store.count()

				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				for _, bad := range []float64{math.NaN(), math.Inf(1)} {
					_, err := bt.Submit(ctx, "a", bad)
					require.ErrorIs(t, err, lb.ErrInvalidScore)
				}
				_, err = bt.Submit(ctx, "", 1)
				require.ErrorIs(t, err, lb.ErrInvalidMember)
				require.NoError(t, bt.Flush(ctx))
				require.Equal(t, before, b.Snapshot(t, name), "bad input wrote to Redis")
				require.Equal(t, stored, store.count(), "bad input reached the store")

				// "a" holds big: 1 more fits, big more does not. Both fold
				// into one write, which Redis refuses; written again alone,
				// 1 lands and big is refused (and retracted).
				// The mate shares a's partition group (not its partition):
				// on a sharded Cluster board one call takes both, and a's
				// refusal sends the mate alone too.
				mate := groupMate("a")
				calls := []*batchCall{{member: "a", score: 1}, {member: mate, score: 2}, {member: "a", score: c.big}}
				got := runBatcherOn(t, bt, calls)
				require.NoError(t, got[0].err)
				require.NoError(t, got[1].err)
				require.ErrorIs(t, got[2].err, c.limit)
				require.Equal(t, c.big+1, got[0].res.Score, "a after +1")
				require.Equal(t, c.big, got[0].res.Previous.Score)
				require.Equal(t, 2.0, got[1].res.Score)
				st, err := board.Rank(ctx, "a")
				require.NoError(t, err)
				require.Equal(t, c.big+1, st.Score)
				st, err = board.Rank(ctx, mate)
				require.NoError(t, err)
				require.Equal(t, 2.0, st.Score)
				require.Equal(t, stored+2, store.count(), "the refused submission stays in the store")

				_, err = bt.Submit(ctx, "a", 1)
				require.ErrorIs(t, err, lb.ErrClosed)
				require.Equal(t, stored+2, store.count())
			})
		}
	})
}

// groupMate is a member whose partition differs from m's and shares its
// partition group: one part_write.lua call on a Cluster takes both.
func groupMate(m string) string {
	p := keys.PartitionOf(m)
	for i := 0; ; i++ {
		c := "mate-" + strconv.Itoa(i)
		if q := keys.PartitionOf(c); q != p && keys.GroupOf(q) == keys.GroupOf(p) {
			return c
		}
	}
}

// TestBatcherFoldsPerPeriods: a member's submissions fold per set of
// periods, and only into the member's newest write: on a Replace board with
// an all-time and a daily window, a today 10, a yesterday 50 (WithTime) and
// a today 20, each with data, are three writes in that order (the third
// folding into the first would apply it before the second: all-time 50 and
// the second's data), and the board, the store and a Rebuild from it all
// hold what three Submits would. Then two today submissions fold.
func TestBatcherFoldsPerPeriods(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for name, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(30)}} {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				board, err := lb.New(b.Client, b.BoardName(t), append(opts, lb.WithPolicy(lb.Replace), lb.WithStore(newMemStore()),
					lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)))...)
				require.NoError(t, err)
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				var seqs []int
				lb.TraceBatch(bt, func(seq int) { seqs = append(seqs, seq) })
				yesterday := future.AddDate(0, 0, -1)
				calls := []*batchCall{{member: "a", score: 10, data: "x"}, {member: "a", score: 50, data: "y"}, {member: "a", score: 20, data: "z"}}
				got := runBatcherAt(t, bt, calls, []time.Time{{}, yesterday, {}})
				require.Equal(t, []int{0, 1, 2}, seqs, "the third after the second: three writes")
				for _, c := range got {
					require.NoError(t, c.err)
				}
				today, past := lb.Daily().Period(future).ID, lb.Daily().Period(yesterday).ID
				require.Equal(t, past, got[1].res.Windows[1].Period)
				require.Equal(t, 10.0, got[1].res.Windows[0].Previous.Score, "all-time: written after the first")
				require.Equal(t, today, got[2].res.Windows[1].Period)
				require.Equal(t, 50.0, got[2].res.Windows[0].Previous.Score, "all-time: written after the second")
				require.Equal(t, 10.0, got[2].res.Windows[1].Previous.Score, "today: written after the first")
				checkFolded := func(when string) {
					for at, want := range map[time.Time]float64{future: 20, yesterday: 50} {
						st, err := board.Rank(ctx, "a", lb.In(lb.Daily()), lb.At(at))
						require.NoError(t, err)
						require.Equal(t, want, st.Score, "%s: daily period of %v", when, at)
					}
					es, err := board.Among(ctx, []string{"a"}, lb.IncludeData())
					require.NoError(t, err)
					require.Equal(t, []lb.Entry{{Member: "a", Score: 20, Rank: 1, Data: "z"}}, es, "%s: all-time, the last submission's score and data", when)
				}
				checkFolded("after the batch")
				reps, err := board.Verify(ctx)
				require.NoError(t, err)
				for _, r := range reps {
					require.True(t, r.Clean(), "the store holds what Redis holds: %+v", r)
				}
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				checkFolded("after a Rebuild")

				bt, err = board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				seqs = nil
				lb.TraceBatch(bt, func(seq int) { seqs = append(seqs, seq) })
				got = runBatcherOn(t, bt, []*batchCall{{member: "a", score: 5}, {member: "a", score: 7}})
				require.Equal(t, []int{0, 0}, seqs, "the same periods: one write")
				require.Equal(t, got[0].res, got[1].res, "folded together: one answer")
				require.Equal(t, 7.0, got[1].res.Standing.Score)
			})
		}
	})
}

// TestBatcherShardedStandings: a sharded board's batch reports each
// caller's standings from its shards, on one node (in batch order) and on
// a Cluster (each shard's ranks when the write applied, the other shards'
// counts after the batch): a new member in the best shard, a member moving
// there from a worse one, and a new member in the shard between, in that
// order, get exactly the ranks the board shows after (and totals as each
// write applied, or on a Cluster after the batch), and the mover's
// previous rank counts the newcomers above it (on a Cluster also the one
// written after it).
func TestBatcherShardedStandings(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			t.Run(fmt.Sprint(rank), func(t *testing.T) {
				ctx := context.Background()
				board, err := lb.New(b.Client, shardName(t, b), lb.WithShards(0, 50, 2000), lb.WithRanking(rank))
				require.NoError(t, err)
				for m, v := range map[string]float64{"a": 10, "b": 100, "c": 3000, "y": 20} {
					_, err := board.Submit(ctx, m, v)
					require.NoError(t, err)
				}
				calls := []*batchCall{{member: "z", score: 5000}, {member: "y", score: 2500}, {member: "x", score: 60}}
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				got := runBatcherOn(t, bt, calls)
				totals := []int64{5, 5, 6} // when each write applied
				if b.Name == "cluster" {
					totals = []int64{6, 6, 6} // the shards' counts after the batch
				}
				for i, c := range calls {
					require.NoError(t, got[i].err)
					st, err := board.Rank(ctx, c.member)
					require.NoError(t, err)
					require.Equal(t, st.Entry, got[i].res.Entry, c.member)
					require.Equal(t, totals[i], got[i].res.Total, c.member)
				}
				prev := int64(4) // z above it
				if b.Name == "cluster" {
					prev = 5 // and x, which landed above it in the same batch
				}
				require.Equal(t, lb.Entry{Member: "y", Score: 20, Rank: prev}, got[1].res.Previous)
				require.True(t, got[1].res.Changed)
				require.Equal(t, lb.Entry{Member: "z"}, got[0].res.Previous)
			})
		}
	})
}

// batchTieBreak holds scores up to 1,000 with no decimals.
func batchTieBreak(t *testing.T) lb.TieBreak {
	tb, err := lb.EarlierFirst(lb.TimeOrder{Epoch: time.Now().Add(-time.Hour), Resolution: time.Second, MaxScore: 1000})
	require.NoError(t, err)
	return tb
}

// runBatcherOn is runBatcherAt without WithTime.
func runBatcherOn(t *testing.T, b *lb.Batcher, calls []*batchCall) []batchCall {
	return runBatcherAt(t, b, calls, make([]time.Time, len(calls)))
}

// runBatcherAt submits calls (at[i] their WithTime, zero for none) through
// b, joining in order, closes it, and returns each caller's answer.
func runBatcherAt(t *testing.T, b *lb.Batcher, calls []*batchCall, at []time.Time) []batchCall {
	out := make([]batchCall, len(calls))
	fins := make([]chan struct{}, len(calls))
	for i, c := range calls {
		opts := []lb.SubmitOption{lb.WithData(c.data)}
		if !at[i].IsZero() {
			opts = append(opts, lb.WithTime(at[i]))
		}
		fins[i] = make(chan struct{})
		before := lb.BatchJoined(b)
		go func() {
			defer close(fins[i])
			out[i].res, out[i].err = b.Submit(context.Background(), c.member, c.score, opts...)
		}()
		waitJoined(b, before, fins[i])
	}
	require.NoError(t, b.Close(context.Background()))
	for _, fin := range fins {
		<-fin
	}
	return out
}

// TestBatcherRoundTrips: on an unsharded board, and on a sharded one whose
// keys share one node (also while it keeps a shadow layout), a batch is
// one call to Redis (once its scripts are loaded), whatever it holds: 40
// submissions of 10 members, with data, under every policy and rank mode,
// with a hot top (the mirror's rewrite rides in the same call). On a
// Cluster a sharded board's batch is two (its partitions, then its
// shards), and three more for the hot top it reached (a turn, the shards'
// first k, the put).
func TestBatcherRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		kinds := append(slices.Clone(hotKinds), struct {
			name string
			opts []lb.Option
		}{"moving", []lb.Option{lb.WithShards(0, 50, 2000), lb.WithShadowShards(10, 100)}})
		for _, kind := range kinds {
			want := int64(1)
			if b.Name == "cluster" && kind.name != "plain" {
				want = 2 + 3
			}
			t.Run(kind.name, func(t *testing.T) { runBatcherRoundTrips(t, b, kind.opts, want) })
		}
	})
}

func runBatcherRoundTrips(t *testing.T, b *testredis.Backend, kind []lb.Option, want int64) {
	for _, policy := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
		for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			cc := &testredis.CountingClient{Client: b.Client}
			board, err := lb.New(cc, shardName(t, b), append([]lb.Option{lb.WithPolicy(policy), lb.WithRanking(rank),
				lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithHotTop(5)}, kind...)...)
			require.NoError(t, err)
			calls := func(base int) []*batchCall {
				out := make([]*batchCall, 40)
				for i := range out {
					out[i] = &batchCall{member: fmt.Sprintf("m%d", i%10), score: float64(base + i%7), data: fmt.Sprint(i)}
				}
				return out
			}
			bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
			require.NoError(t, err)
			runBatcherOn(t, bt, calls(0)) // loads the scripts on every node
			bt, err = board.NewBatcher(lb.WithBatchWindow(time.Minute))
			require.NoError(t, err)
			before := cc.Calls()
			for _, r := range runBatcherOn(t, bt, calls(10)) {
				require.NoError(t, r.err)
			}
			require.Equal(t, want, cc.Calls()-before, "%v %v", policy, rank)
		}
	}
}

// TestBatcherPartitionGroups: a batch of 600 members of a sharded board
// reaches their partitions with one call a partition group on a Cluster
// (at most keys.PartitionGroups, where a call a partition took about 560),
// then each shard with one; on one node it is one script. Every member
// gets its total, the board ranks it with that total, and its own
// partition holds it. A SubmitMany and a Remove of the 600 take as few.
func TestBatcherPartitionGroups(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		cc := &testredis.CountingClient{Client: b.Client}
		name := shardName(t, b)
		bounds := []float64{100, 200, 300}
		board, err := lb.New(cc, name, lb.WithShards(bounds...), lb.WithPolicy(lb.Accumulate))
		require.NoError(t, err)
		calls := func(add float64) []*batchCall {
			out := make([]*batchCall, 600)
			for i := range out {
				out[i] = &batchCall{member: fmt.Sprintf("g%03d", i), score: float64(i%200) + add}
			}
			return out
		}
		bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute), lb.WithBatchSize(1000))
		require.NoError(t, err)
		runBatcherOn(t, bt, calls(0)) // loads the scripts on every node
		bt, err = board.NewBatcher(lb.WithBatchWindow(time.Minute), lb.WithBatchSize(1000))
		require.NoError(t, err)
		before := cc.Commands()
		got := runBatcherOn(t, bt, calls(0.5))
		sent := cc.Commands() - before
		want := int64(1)
		if b.Name == "cluster" {
			want = keys.PartitionGroups + int64(len(bounds)+1)
		}
		require.LessOrEqual(t, sent, want, "commands a batch of 600 sent")
		require.Greater(t, sent, want/2, "commands a batch of 600 sent: most groups written")
		stored := partitionValues(t, b, name, "alltime", "alltime")
		require.Len(t, stored, 600)
		for i, c := range got {
			require.NoError(t, c.err)
			total := 2*float64(i%200) + 0.5
			require.Equal(t, total, c.res.Score, c.member)
			st, err := board.Rank(ctx, c.res.Member)
			require.NoError(t, err)
			require.Equal(t, total, st.Score, c.res.Member)
			require.Equal(t, strconv.FormatFloat(total, 'g', -1, 64), stored[c.res.Member], c.res.Member)
		}
		// SubmitMany and Remove of the 600 group their partitions alike.
		more, members := map[string]float64{}, make([]string, 0, len(got))
		for _, c := range got {
			more[c.res.Member] = 1
			members = append(members, c.res.Member)
		}
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"warm": 1})) // loads its script
		require.NoError(t, board.Remove(ctx, "warm"))
		before = cc.Commands()
		require.NoError(t, board.SubmitMany(ctx, more))
		require.LessOrEqual(t, cc.Commands()-before, want, "commands a SubmitMany of 600 sent")
		before = cc.Commands()
		require.NoError(t, board.Remove(ctx, members...))
		wantRemove := want
		if b.Name == "cluster" {
			// A shard's deletes, then its sweeps of the members out of it
			// (a copy a crashed write left), in calls of MaxShardOps.
			wantRemove = keys.PartitionGroups + int64(len(bounds)+1)*int64(1+(len(members)+lb.MaxShardOps-1)/lb.MaxShardOps)
		}
		require.LessOrEqual(t, cc.Commands()-before, wantRemove, "commands a Remove of 600 sent")
		require.Empty(t, partitionValues(t, b, name, "alltime", "alltime"))
		n, err := board.Count(ctx)
		require.NoError(t, err)
		require.Zero(t, n)
	})
}

// TestBatcherFoldKeepsEachRefusal: under Accumulate a Batcher folds only
// increments of one sign, so a submission Redis would refuse on its own is
// refused in a batch too, whatever follows it: at 995 of a tie-break's
// 1,000, +10 is refused and -8 applied (987), and at the largest double,
// +max is refused and -max applied (0); with a store the refused one is
// retracted (Verify clean). Plain and sharded boards, every backend.
func TestBatcherFoldKeepsEachRefusal(t *testing.T) {
	eachRefusalBoard(t, func(t *testing.T, board *lb.Leaderboard, tied bool) {
		start, up, down, want, refused := 995.0, 10.0, -8.0, 987.0, lb.ErrPrecision
		if !tied {
			start, up, down, want, refused = math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64, 0, lb.ErrInvalidScore
		}
		got := runRefusalBatch(t, board, start, up, down)
		require.ErrorIs(t, got[0].err, refused)
		require.NoError(t, got[1].err)
		st, err := board.Rank(context.Background(), "a")
		require.NoError(t, err)
		require.Equal(t, want, st.Score)
		requireVerified(t, board)
	})
}

// eachRefusalBoard runs fn on an Accumulate board with a store, plain and
// sharded (bounds 0, 500), with a tie-break of MaxScore 1,000 (tied) and
// without, on every backend.
func eachRefusalBoard(t *testing.T, fn func(t *testing.T, board *lb.Leaderboard, tied bool)) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for name, shards := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(0, 500)}} {
			for _, tied := range []bool{true, false} {
				t.Run(fmt.Sprintf("%s/tie-break=%v", name, tied), func(t *testing.T) {
					opts := append([]lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithStore(newMemStore())}, shards...)
					if tied {
						opts = append(opts, lb.WithTieBreak(batchTieBreak(t)))
					}
					board, _ := newBoard(t, b, opts...)
					fn(t, board, tied)
				})
			}
		}
	})
}

// runRefusalBatch submits start for "a", then scores for "a" through one
// batch of a new Batcher, and returns each caller's answer.
func runRefusalBatch(t *testing.T, board *lb.Leaderboard, start float64, scores ...float64) []batchCall {
	_, err := board.Submit(context.Background(), "a", start)
	require.NoError(t, err)
	bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
	require.NoError(t, err)
	calls := make([]*batchCall, len(scores))
	for i, s := range scores {
		calls[i] = &batchCall{member: "a", score: s}
	}
	return runBatcherOn(t, bt, calls)
}

// blockingStore holds every Append until release is closed, once started
// has been signalled.
type blockingStore struct {
	*memStore
	started, release chan struct{}
}

func (s *blockingStore) Append(ctx context.Context, sub lb.Submission) (bool, error) {
	s.started <- struct{}{}
	<-s.release
	return s.memStore.Append(ctx, sub)
}

// submitHeld submits member's score WithID id through bt in a goroutine,
// and returns once store holds it in its Append; the channel gets its
// error once it is written.
func submitHeld(ctx context.Context, bt *lb.Batcher, store *blockingStore, member string, score float64, id string) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := bt.Submit(ctx, member, score, lb.WithID(id))
		done <- err
	}()
	<-store.started
	return done
}

// requireWaiting fails when what (its answer on ch) returns within 100 ms
// while the submission on its own before it is held (in the store).
func requireWaiting(t *testing.T, ch chan error, what string) {
	t.Helper()
	select {
	case err := <-ch:
		t.Fatalf("%s returned (%v) before the submission on its own before it was written", what, err)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestBatcherCloseWaitsForWithID: a WithID submission, written on its own,
// that came before Close is waited for like a batch: Close returns only once
// it is written (here held in the store), and it is applied.
func TestBatcherCloseWaitsForWithID(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	store := &blockingStore{memStore: newMemStore(), started: make(chan struct{}, 1), release: make(chan struct{})}
	board, _ := newBoard(t, b, lb.WithStore(store))
	bt, err := board.NewBatcher()
	require.NoError(t, err)
	submitted := submitHeld(ctx, bt, store, "a", 5, "match-1")
	closed := make(chan error, 1)
	go func() { closed <- bt.Close(ctx) }()
	requireWaiting(t, closed, "Close")
	close(store.release)
	require.NoError(t, <-submitted)
	require.NoError(t, <-closed)
	st, err := board.Rank(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, 5.0, st.Score)
	_, err = bt.Submit(ctx, "b", 1, lb.WithID("match-2"))
	require.ErrorIs(t, err, lb.ErrClosed)
}

// TestBatcherRefusalKeepsOrder: a member's writes in a batch apply in the
// order submitted even when a folded write of theirs is refused and written
// again one submission at a time: at 990 of a tie-break's 1,000, +6 +6
// (folded, 1,002, refused) then -3 gives 996, refused, 993, as three
// Submits would; the -3 may not apply before the two +6 and let the second
// through. Likewise at 0.6 of the largest double with +0.3 +0.3 then -0.5.
// Plain and sharded boards, every backend.
func TestBatcherRefusalKeepsOrder(t *testing.T) {
	eachRefusalBoard(t, func(t *testing.T, board *lb.Leaderboard, tied bool) {
		start, up, down, refused := 990.0, 6.0, -3.0, lb.ErrPrecision
		if !tied {
			m := math.MaxFloat64
			start, up, down, refused = 0.6*m, 0.3*m, -0.5*m, lb.ErrInvalidScore
		}
		got := runRefusalBatch(t, board, start, up, up, down)
		require.NoError(t, got[0].err)
		require.Equal(t, start+up, got[0].res.Windows[0].Standing.Score)
		require.ErrorIs(t, got[1].err, refused)
		require.NoError(t, got[2].err)
		require.Equal(t, start+up+down, got[2].res.Windows[0].Standing.Score)
		st, err := board.Rank(context.Background(), "a")
		require.NoError(t, err)
		require.Equal(t, start+up+down, st.Score)
		requireVerified(t, board)
	})
}

// TestBatcherWithIDKeepsOrder: a WithID submission, written on its own,
// applies after its member's submissions before it and before those after
// it, under Replace (the last one stays): one before it still waiting in
// its batch is written first (10 then 20, Previous 10), and one after it,
// while the WithID one is held in the store, waits for it (10 then 20)
// instead of reaching Redis first through a batch. Every backend, plain
// and sharded.
func TestBatcherWithIDKeepsOrder(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for name, shards := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(0, 500)}} {
			t.Run(name+"/before", func(t *testing.T) {
				ctx := context.Background()
				board, _ := newBoard(t, b, append([]lb.Option{lb.WithPolicy(lb.Replace)}, shards...)...)
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				fin := make(chan struct{})
				var first error
				before := lb.BatchJoined(bt)
				go func() {
					defer close(fin)
					_, first = bt.Submit(ctx, "p", 10)
				}()
				waitJoined(bt, before, fin)
				closed := make(chan error, 1)
				go func() {
					// Close once the WithID one waits for the batch: a
					// Close before it (a sleep's guess of its time, under
					// load) refused it with ErrClosed. A bounded wait: a
					// Submit that never gets there fails below.
					for deadline := time.Now().Add(10 * time.Second); !lb.BatchAlone(bt, "p") && time.Now().Before(deadline); {
						time.Sleep(time.Millisecond)
					}
					closed <- bt.Close(ctx)
				}()
				res, err := bt.Submit(ctx, "p", 20, lb.WithID("match-2"))
				require.NoError(t, err)
				require.NoError(t, <-closed)
				<-fin
				require.NoError(t, first)
				require.Equal(t, 10.0, res.Previous.Score)
				st, err := board.Rank(ctx, "p")
				require.NoError(t, err)
				require.Equal(t, 20.0, st.Score, "Replace keeps the last submission")
			})
			t.Run(name+"/after", func(t *testing.T) {
				ctx := context.Background()
				store := &blockingStore{memStore: newMemStore(), started: make(chan struct{}, 1), release: make(chan struct{})}
				board, _ := newBoard(t, b, append([]lb.Option{lb.WithPolicy(lb.Replace), lb.WithStore(store)}, shards...)...)
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
				require.NoError(t, err)
				firstDone := submitHeld(ctx, bt, store, "p", 10, "match-1")
				later := make(chan error, 1)
				go func() {
					_, err := bt.Submit(ctx, "p", 20)
					later <- err
				}()
				requireWaiting(t, later, "the later submission")
				close(store.release)
				require.NoError(t, <-firstDone)
				require.NoError(t, <-later)
				require.NoError(t, bt.Close(ctx))
				st, err := board.Rank(ctx, "p")
				require.NoError(t, err)
				require.Equal(t, 20.0, st.Score, "Replace keeps the last submission")
				requireVerified(t, board)
			})
		}
	})
}

// TestBatcherSubmitAfterClose: after Close every Submit returns ErrClosed,
// also one whose every window period has closed (WithTime into a day
// long expired on a daily board), which reaches no batch, and bad input.
func TestBatcherSubmitAfterClose(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	board, _ := newBoard(t, b, lb.WithWindows(lb.Daily()), lb.WithClock(fixed(future)))
	bt, err := board.NewBatcher()
	require.NoError(t, err)
	res, err := bt.Submit(ctx, "p", 10, lb.WithTime(future.AddDate(0, 0, -5)))
	require.NoError(t, err, "before Close")
	require.True(t, res.Windows[0].Closed)
	require.NoError(t, bt.Close(ctx))
	_, err = bt.Submit(ctx, "p", 10)
	require.ErrorIs(t, err, lb.ErrClosed, "an open window")
	_, err = bt.Submit(ctx, "p", 10, lb.WithTime(future.AddDate(0, 0, -5)))
	require.ErrorIs(t, err, lb.ErrClosed, "every window closed")
	_, err = bt.Submit(ctx, "p", 10, lb.WithID("x"))
	require.ErrorIs(t, err, lb.ErrClosed, "WithID")
	_, err = bt.Submit(ctx, "p", math.NaN())
	require.ErrorIs(t, err, lb.ErrClosed, "a NaN score")
	_, err = bt.Submit(ctx, "", 10, lb.WithID("x"))
	require.ErrorIs(t, err, lb.ErrClosed, "an empty member WithID")
}

// TestBatcherZeroValue: a Batcher not made by NewBatcher is closed: Submit
// returns ErrClosed (it panicked on a nil board), Flush and Close return
// nil.
func TestBatcherZeroValue(t *testing.T) {
	ctx := context.Background()
	var bt lb.Batcher
	_, err := bt.Submit(ctx, "m", 1)
	require.ErrorIs(t, err, lb.ErrClosed)
	require.NoError(t, bt.Flush(ctx))
	require.NoError(t, bt.Close(ctx))
	require.NoError(t, bt.Close(ctx), "twice")
	_, err = bt.Submit(ctx, "m", 1)
	require.ErrorIs(t, err, lb.ErrClosed)
}

// TestBatcherClosedWindowsReachStore: a submission whose every window
// period has closed reaches the store through a Batcher as through Submit
// (the store keeps every submission), and Redis in neither.
func TestBatcherClosedWindowsReachStore(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	late := lb.WithTime(future.AddDate(0, 0, -5))
	for _, batched := range []bool{false, true} {
		store := newMemStore()
		board, name := newBoard(t, b, lb.WithWindows(lb.Daily()), lb.WithClock(fixed(future)), lb.WithStore(store))
		submit := board.Submit
		if batched {
			bt, err := board.NewBatcher()
			require.NoError(t, err)
			defer bt.Close(ctx)
			submit = bt.Submit
		}
		res, err := submit(ctx, "p", 10, late, lb.WithData("d"))
		require.NoError(t, err)
		require.True(t, res.Windows[0].Closed)
		require.Empty(t, b.Snapshot(t, name), "batched=%v", batched)
		require.Len(t, store.subs, 1, "batched=%v", batched)
		require.Equal(t, "p", store.subs[0].Member)
		require.Empty(t, store.subs[0].Periods)
	}
}

// TestBatcherCloseWaitsForClosedWindows: a submission whose every window
// period has closed, answered at once and recorded in the store alone,
// that came before Close is waited for as a WithID one is: Close returns
// only once the store holds it (here held in its Append), not while the
// Batcher still writes to a store its caller may close next.
func TestBatcherCloseWaitsForClosedWindows(t *testing.T) {
	b := testredis.Mini(t)
	ctx := context.Background()
	store := &blockingStore{memStore: newMemStore(), started: make(chan struct{}, 1), release: make(chan struct{})}
	board, _ := newBoard(t, b, lb.WithWindows(lb.Daily()), lb.WithClock(fixed(future)), lb.WithStore(store))
	bt, err := board.NewBatcher()
	require.NoError(t, err)
	submitted := make(chan error, 1)
	go func() {
		res, err := bt.Submit(ctx, "p", 10, lb.WithTime(future.AddDate(0, 0, -5)))
		if err == nil && !res.Windows[0].Closed {
			err = errors.New("window not reported closed")
		}
		submitted <- err
	}()
	<-store.started
	closed := make(chan error, 1)
	go func() { closed <- bt.Close(ctx) }()
	requireWaiting(t, closed, "Close")
	close(store.release)
	require.NoError(t, <-submitted)
	require.NoError(t, <-closed)
	require.Len(t, store.subs, 1)
	_, err = bt.Submit(ctx, "p", 10, lb.WithTime(future.AddDate(0, 0, -5)))
	require.ErrorIs(t, err, lb.ErrClosed)
}
