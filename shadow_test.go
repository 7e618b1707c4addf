package leaderboard_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestShadowOptions: New refuses a shadow it cannot keep, and FillShadow
// and DropShadow refuse a board without one; none of them writes.
func TestShadowOptions(t *testing.T) {
	b := testredis.Mini(t)
	c := b.Client
	for name, opts := range map[string][]lb.Option{
		"no WithShards":      {lb.WithShadowShards(0, 1)},
		"empty WithShards":   {lb.WithShards(), lb.WithShadowShards(0, 1)},
		"no bounds":          {lb.WithShards(0), lb.WithShadowShards()},
		"the board's bounds": {lb.WithShards(0, 1), lb.WithShadowShards(0, 1)},
		"-0 is 0":            {lb.WithShards(0), lb.WithShadowShards(negZero())},
		"NaN":                {lb.WithShards(0), lb.WithShadowShards(math.NaN())},
		"infinite":           {lb.WithShards(0), lb.WithShadowShards(1, math.Inf(1))},
		"unsorted":           {lb.WithShards(0), lb.WithShadowShards(2, 1)},
		"repeated":           {lb.WithShards(0), lb.WithShadowShards(1, 1)},
	} {
		_, err := lb.New(c, "race", opts...)
		require.ErrorIs(t, err, lb.ErrInvalidArgument, name)
		require.Contains(t, err.Error(), "WithShadowShards", name)
	}
	ctx := context.Background()
	name := shardName(t, b)
	for what, opts := range map[string][]lb.Option{
		"unsharded":          nil,
		"sharded, no shadow": {lb.WithShards(0)},
	} {
		board, err := lb.New(c, name, opts...)
		require.NoError(t, err)
		_, err = board.FillShadow(ctx)
		require.ErrorIs(t, err, lb.ErrInvalidArgument, "FillShadow on a board %s", what)
		require.ErrorIs(t, board.DropShadow(ctx), lb.ErrInvalidArgument, "DropShadow on a board %s", what)
	}
	require.Empty(t, boardKeys(t, b, name), "a refused call wrote nothing")
	// The other order of the options is the same board.
	board, err := lb.New(c, name, lb.WithShadowShards(5), lb.WithShards(0))
	require.NoError(t, err)
	_, err = board.FillShadow(ctx)
	require.NoError(t, err)
}

func negZero() float64 { z := 0.0; return -z }

// shadowMove is one move of a board to new bounds.
type shadowMove struct {
	shardCombo
	next []float64 // the new bounds; shardCombo.bounds the old ones
}

// TestShadowMove moves a live board to new bounds in the three steps of
// WithShadowShards, beside an unsharded board fed the same writes: at every
// step, with the processes of two steps writing side by side, every board in
// service answers as the unsharded one, and both layouts hold exactly the
// partitions (the closed day the fill alone wrote included). The fill runs
// while writes go on.
func TestShadowMove(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []shadowMove{
			{shardCombo{policy: lb.KeepBest, order: lb.HighestFirst, rank: lb.Ordinal, bounds: shardBounds, seed: 7100, on: "mrc"}, shardDense},
			{shardCombo{policy: lb.Accumulate, order: lb.LowestFirst, rank: lb.Competition, tie: 1, bounds: shardDense, seed: 7101, on: "rc"}, []float64{0}},
			{shardCombo{policy: lb.Replace, order: lb.HighestFirst, rank: lb.Competition, bounds: []float64{0}, seed: 7102, on: "rc"}, []float64{-3, 1, 1.5, 4}},
		} {
			if !strings.Contains(c.on, b.Name[:1]) {
				continue
			}
			t.Run(fmt.Sprintf("%s_to_%d_bounds", c.name(), len(c.next)), func(t *testing.T) {
				t.Parallel()
				runShadowMove(t, b, c)
			})
		}
	})
}

func runShadowMove(t *testing.T, b *testredis.Backend, c shadowMove) {
	p := newShardPair(t, b, c.shardCombo)
	old := p.bounds
	board := func(opts ...lb.Option) *lb.Leaderboard {
		board, err := lb.New(b.Client, p.sName, append(c.options(t), opts...)...)
		require.NoError(t, err)
		return board
	}
	step0 := p.sharded
	step1 := board(lb.WithShards(old...), lb.WithShadowShards(c.next...))
	step2 := board(lb.WithShards(c.next...), lb.WithShadowShards(old...))
	step3 := board(lb.WithShards(c.next...))
	views := shardViews()

	// work runs the model workload with each write going through one of
	// boards at random (the processes of a rollout), then reads every view
	// through each of them and checks the layouts of bounds.
	work := func(steps int, boards []*lb.Leaderboard, layouts ...[]float64) {
		p.run(modelLoop{
			steps: steps, checkEvery: steps,
			before: func() { p.sharded = boards[p.rng.IntN(len(boards))] },
			ops: []modelOp{{80, p.submitAny}, {12, p.submitBatch}, {5, p.batcherPair}, {8, func() {
				p.remove(p.members(shardPool, modelUnknown, 3)...)
			}}, {3, p.set}, {2, p.removeBetween}, {1, p.reset}, {2, p.setData}},
			check: func(bool) {
				for _, board := range boards {
					p.sharded = board
					for _, v := range views {
						p.compare(v, shardPool, modelUnknown)
					}
				}
				for _, bounds := range layouts {
					p.bounds = bounds
					for _, v := range views {
						p.layout(v)
					}
				}
				p.bounds = old
			},
		})
	}
	work(40, []*lb.Leaderboard{step0}, old)

	// Step 1: every process keeps the shadow; the fill runs meanwhile.
	filled := make(chan error, 1)
	var rep lb.ShadowReport
	go func() {
		var err error
		rep, err = step1.FillShadow(p.ctx)
		filled <- err
	}()
	work(15, []*lb.Leaderboard{step1})
	require.NoError(t, <-filled, "FillShadow")
	require.Equal(t, 3, rep.Periods, "FillShadow: all-time, today and the closed day still within its retention")
	require.Positive(t, rep.Members)
	work(15, []*lb.Leaderboard{step1}, old, c.next)
	requireShadowClean(t, p, step1)

	// Step 2 rolls out: processes of steps 1 and 2 side by side, reading
	// the old layout and the new one.
	work(30, []*lb.Leaderboard{step1, step2}, old, c.next)
	requireShadowClean(t, p, step2)
	// Step 3 rolls out: the new layout alone serves reads; then the old one
	// goes.
	work(30, []*lb.Leaderboard{step2, step3}, c.next)
	require.NoError(t, step2.DropShadow(p.ctx))
	for _, k := range boardKeys(t, b, p.sName) {
		require.NotContains(t, k, "."+keys.Layout(old)+"~", "DropShadow left a key of the old layout")
	}
	p.bounds = c.next
	work(20, []*lb.Leaderboard{step3}, c.next)
	p.checkClean()
}

// requireShadowClean requires Check to report both layouts of every window
// clean, the shadow's after the board's, with the unsharded board's counts.
func requireShadowClean(t *testing.T, p *shardPair, board *lb.Leaderboard) {
	t.Helper()
	reps, err := board.Check(p.ctx, false)
	require.NoError(t, err)
	require.Len(t, reps, 4, "two windows, two layouts each")
	for i, v := range shardViews()[:2] {
		n, err := p.plain.Count(p.ctx, v.q...)
		require.NoError(t, err)
		for k, r := range reps[2*i : 2*i+2] {
			require.Equal(t, v.window, r.Window)
			require.Equal(t, k == 1, r.Shadow, "the shadow's report follows the board's")
			requireCleanReport(t, r, n, fmt.Sprintf("%s Check of %s, shadow=%v", p.where(), v.window, r.Shadow))
		}
	}
}

// TestShadowConcurrent moves a board to new bounds under concurrent writers
// on a Cluster and on Redis: the fill runs while processes of step 1 write,
// then processes of steps 1 and 2 write side by side, with readers of step
// 2 on the new layout. Every increment lands: the totals read from the new
// layout are the writers' exact sums, and both layouts check clean.
func TestShadowConcurrent(t *testing.T) {
	t.Run("cluster", func(t *testing.T) { runShadowConcurrent(t, testredis.Cluster(t), 12, 40, 7200) })
	t.Run("redis", func(t *testing.T) { runShadowConcurrent(t, testredis.Real(t), 6, 40, 7300) })
}

func runShadowConcurrent(t *testing.T, b *testredis.Backend, writers, rounds int, seed uint64) {
	ctx := context.Background()
	name := shardName(t, b)
	old, next := shardBounds, []float64{-3, -1, 0.5, 1, 2.5, 4}
	opts := []lb.Option{lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future))}
	board := func(more ...lb.Option) *lb.Leaderboard {
		board, err := lb.New(b.Client, name, append(opts, more...)...)
		require.NoError(t, err)
		return board
	}
	step1 := board(lb.WithShards(old...), lb.WithShadowShards(next...))
	step2 := board(lb.WithShards(next...), lb.WithShadowShards(old...))
	const members = 40
	member := func(i int) string { return fmt.Sprintf("c%02d", i) }
	seed0 := map[string]float64{}
	for i := range members {
		seed0[member(i)] = float64(i%9) - 4
	}
	require.NoError(t, board(lb.WithShards(old...)).SubmitMany(ctx, seed0))

	var fails failures
	fail := fails.add
	filled := make(chan struct{})
	var during, after atomic.Int64 // writes while the fill ran, after it
	sums := make([]map[string]float64, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			sums[w] = map[string]float64{}
			// Writes run as long as the fill does, then rounds more.
			for i, mine := 0, 0; mine < rounds; i++ {
				by := step1
				select {
				case <-filled:
					after.Add(1)
					mine++
					if rng.IntN(2) == 0 {
						by = step2
					}
				default:
					during.Add(1)
				}
				m := member(rng.IntN(members))
				v := 0.5 * float64(rng.IntN(17)-8) // -4 .. 4: across the bounds of both layouts
				var err error
				if other := member(rng.IntN(members)); i%5 == 4 && other != m {
					err = by.SubmitMany(ctx, map[string]float64{m: v, other: 0})
				} else {
					_, err = by.Submit(ctx, m, v)
				}
				if err != nil {
					fail("writer %d: %q += %v: %v", w, m, v, err)
					return
				}
				sums[w][m] += v
			}
		}()
	}
	rep, err := step1.FillShadow(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, rep.Periods, "all-time, today and yesterday")
	close(filled)
	done := make(chan struct{})
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for i := 0; ; i++ {
			top, err := step2.Top(ctx, 1000)
			if err != nil {
				fail("reader: Top: %v", err)
				return
			}
			checkShardAnswer(fail, fmt.Sprintf("reader: Top(1000) %d", i), lb.HighestFirst, top)
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	wg.Wait()
	close(done)
	rwg.Wait()
	require.Empty(t, fails.list, "seed=%d", seed)
	t.Logf("%d writes while the fill ran, %d after", during.Load(), after.Load())
	require.Positive(t, during.Load(), "no write ran beside the fill")
	require.Positive(t, after.Load(), "no write ran after the fill")

	want := map[string]float64{}
	for m, v := range seed0 {
		want[m] = v // the all-time board; the day saw the same SubmitMany
	}
	for _, s := range sums {
		for m, v := range s {
			want[m] += v
		}
	}
	for _, by := range []*lb.Leaderboard{step1, step2} {
		got, err := by.Among(ctx, slices.Collect(maps.Keys(want)))
		require.NoError(t, err)
		require.Len(t, got, members)
		for _, e := range got {
			require.Equal(t, want[e.Member], e.Score, "seed=%d: %q's total", seed, e.Member)
		}
		top, err := by.Top(ctx, 1000)
		require.NoError(t, err)
		require.Len(t, top, members)
		for _, e := range top {
			st, err := by.Rank(ctx, e.Member)
			require.NoError(t, err)
			require.Equal(t, e, st.Entry, "seed=%d: Rank(%q) against Top", seed, e.Member)
		}
	}
	for _, by := range []*lb.Leaderboard{step1, step2} {
		reps, err := by.Check(ctx, false)
		require.NoError(t, err)
		require.Len(t, reps, 4)
		for _, r := range reps {
			requireCleanReport(t, r, members, fmt.Sprintf("seed=%d: Check of %s, shadow=%v", seed, r.Window, r.Shadow))
		}
	}
}

// shadowFilled is a board on b read through c, bounds 10 moving to 5,
// with two members and its shadow filled, and moved, the same board after
// the move (bounds 5) on b's own client.
func shadowFilled(t *testing.T, b *testredis.Backend, c rueidis.Client, more ...lb.Option) (board, moved *lb.Leaderboard) {
	ctx := context.Background()
	name := shardName(t, b)
	board, err := lb.New(c, name, append([]lb.Option{lb.WithShards(10), lb.WithShadowShards(5)}, more...)...)
	require.NoError(t, err)
	moved, err = lb.New(b.Client, name, lb.WithShards(5))
	require.NoError(t, err)
	require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 20}))
	_, err = board.FillShadow(ctx)
	require.NoError(t, err)
	return board, moved
}

// writesOf7 are the ways to write score 7 for a member on board: Submit,
// SubmitMany, and a Batcher of its own.
func writesOf7(t *testing.T, board *lb.Leaderboard) map[string]func(member string) error {
	ctx := context.Background()
	return map[string]func(member string) error{
		"Submit":     func(m string) error { _, err := board.Submit(ctx, m, 7); return err },
		"SubmitMany": func(m string) error { return board.SubmitMany(ctx, map[string]float64{m: 7}) },
		"Batcher": func(m string) error {
			bt, err := board.NewBatcher()
			require.NoError(t, err)
			defer bt.Close(ctx)
			_, err = bt.Submit(ctx, m, 7)
			return err
		},
	}
}

// TestShadowFollowsAReloadedWrite: on one node a write's shadow share (a
// repair that copies into the shadow what the write put in the
// partitions) rides in the write's pipeline after it. When the server has
// the repair's script but not the write's (a restart or a failover, then
// a SubmitMany; a fresh server's first Batcher batch), the write fails
// with NOSCRIPT and is sent again after the repair has run: the repair
// then copied nothing, and the member was missing from the shadow until
// its next write. The repair now runs again after the reloaded write.
func TestShadowFollowsAReloadedWrite(t *testing.T) {
	for _, b := range []*testredis.Backend{testredis.Mini(t), testredis.Real(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			board, moved := shadowFilled(t, b, b.Client)
			writes := writesOf7(t, board)
			delete(writes, "SubmitMany")
			for _, kind := range slices.Sorted(maps.Keys(writes)) {
				t.Run(kind, func(t *testing.T) {
					flushScripts(t, b)
					// Loads the repair's script, not the write's.
					require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 2}))
					m := "new-" + kind
					require.NoError(t, writes[kind](m))
					st, err := moved.Rank(ctx, m)
					require.NoError(t, err, "the member is in the shadow layout")
					require.Equal(t, 7.0, st.Score)
				})
			}
		})
	}
}

// TestShadowFillCutShort: a FillShadow that fails part way (a client
// failing its nth call, a ctx ended) returns the error, leaves no marker of
// the shadow (Present on the new bounds stays false), and run again, with
// writes between, leaves the shadow exactly the partitions: the new layout
// reads as the old one, and Check reports both clean.
func TestShadowFillCutShort(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, nth := range []int64{1, 2, 131} {
			t.Run(fmt.Sprint("call_", nth), func(t *testing.T) {
				t.Parallel()
				runShadowFillCutShort(t, b, func(fc *faultClient, ctx context.Context) context.Context {
					fc.nth.Store(nth)
					return ctx
				})
			})
		}
		t.Run("ctx", func(t *testing.T) {
			t.Parallel()
			runShadowFillCutShort(t, b, func(_ *faultClient, ctx context.Context) context.Context {
				ctx, cancel := context.WithTimeout(ctx, 5*time.Millisecond)
				t.Cleanup(cancel)
				return ctx
			})
		})
	})
}

func runShadowFillCutShort(t *testing.T, b *testredis.Backend, cut func(*faultClient, context.Context) context.Context) {
	ctx := context.Background()
	name := shardName(t, b)
	old, next := []float64{0, 10}, []float64{-5, 5, 20}
	opts := []lb.Option{lb.WithPolicy(lb.Replace), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future)), lb.WithStore(newMemStore())}
	fc := &faultClient{Client: b.Client}
	step1, err := lb.New(fc, name, append(opts, lb.WithShards(old...), lb.WithShadowShards(next...))...)
	require.NoError(t, err)
	moved, err := lb.New(b.Client, name, append(opts, lb.WithShards(next...))...)
	require.NoError(t, err)
	scores := map[string]float64{}
	for i := range 60 {
		scores[fmt.Sprintf("m%02d", i)] = float64(i%31) - 10
	}
	_, err = step1.Rebuild(ctx) // the markers Present looks for
	require.NoError(t, err)
	require.NoError(t, step1.SubmitMany(ctx, scores))
	_, err = step1.FillShadow(ctx)
	require.NoError(t, err, "a first fill, whole")
	present := func(want bool, what string) {
		t.Helper()
		got, err := moved.Present(ctx)
		require.NoError(t, err)
		require.Equal(t, want, got, "Present on the new bounds %s", what)
	}
	present(true, "after a fill")
	// Writes a process without the shadow made: the shadow falls behind.
	plainOld, err := lb.New(b.Client, name, append(opts, lb.WithShards(old...))...)
	require.NoError(t, err)
	for i := range 20 {
		m := fmt.Sprintf("m%02d", i)
		scores[m] = -scores[m] + 0.5
		_, err := plainOld.Submit(ctx, m, scores[m])
		require.NoError(t, err)
	}
	require.NoError(t, plainOld.Remove(ctx, "m59"))
	delete(scores, "m59")

	fc.calls.Store(0)
	_, err = step1.FillShadow(cut(fc, ctx))
	require.Error(t, err, "the fill cut short")
	fc.nth.Store(0)
	if fc.calls.Load() > 1 {
		// Its first call deleted the markers (and the shadow's shards).
		present(false, "after a fill cut short")
	}
	for i := 20; i < 30; i++ {
		m := fmt.Sprintf("m%02d", i)
		scores[m] += 7
		_, err := step1.Submit(ctx, m, scores[m])
		require.NoError(t, err)
	}
	_, err = step1.FillShadow(ctx)
	require.NoError(t, err, "the fill again")
	present(true, "after the fill again")

	for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
		top, err := moved.Top(ctx, 1000, lb.In(w))
		require.NoError(t, err)
		want, err := step1.Top(ctx, 1000, lb.In(w))
		require.NoError(t, err)
		require.Equal(t, want, top, "%s: the new layout reads as the old one", w.Name())
		require.Len(t, top, len(scores))
		for _, e := range top {
			require.Equal(t, scores[e.Member], e.Score, "%s: %q", w.Name(), e.Member)
		}
	}
	reps, err := step1.Check(ctx, false)
	require.NoError(t, err)
	require.Len(t, reps, 4)
	for _, r := range reps {
		requireCleanReport(t, r, int64(len(scores)), fmt.Sprintf("Check of %s, shadow=%v", r.Window, r.Shadow))
	}
}

// TestShadowMoveUnderFaults moves a board to new bounds while writers of
// step 1 (Submit, a Batcher, Set, Remove, each retried until it succeeds,
// one writer a member) run on a client that fails some calls, before or
// after sending them (a process dying between a write's steps), and the
// fill, also failing now and then, runs again until it succeeds. The new
// layout then reads as the writers' last writes, as the old one does, and
// Check reports both clean: a retry repairs the shadow as it repairs the
// board.
func TestShadowMoveUnderFaults(t *testing.T) {
	for _, b := range []*testredis.Backend{testredis.Cluster(t), testredis.Real(t)} {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			runShadowMoveUnderFaults(t, b)
		})
	}
}

func runShadowMoveUnderFaults(t *testing.T, b *testredis.Backend) {
	ctx := context.Background()
	name := shardName(t, b)
	old, next := shardBounds, []float64{-3, -1, 0.5, 1, 2.5, 4}
	opts := []lb.Option{lb.WithPolicy(lb.Replace), lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(fixed(future))}
	step1 := func(c rueidis.Client) *lb.Leaderboard {
		board, err := lb.New(c, name, append(opts, lb.WithShards(old...), lb.WithShadowShards(next...))...)
		require.NoError(t, err)
		return board
	}
	writes, fills := &faultClient{Client: b.Client}, &faultClient{Client: b.Client}
	writes.permille.Store(150)
	fills.permille.Store(3) // a fill is some 400 calls
	writer, filler, healthy := step1(writes), step1(fills), step1(b.Client)
	moved, err := lb.New(b.Client, name, append(opts, lb.WithShards(next...))...)
	require.NoError(t, err)

	var mu sync.Mutex
	want := map[string]float64{}
	var wg sync.WaitGroup
	for w := range 6 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 7400))
			bt, err := writer.NewBatcher()
			if err != nil {
				panic(err)
			}
			defer bt.Close(ctx)
			for range 120 {
				m := fmt.Sprintf("c%d-%d", w, rng.IntN(6))
				v := 0.5 * float64(rng.IntN(17)-8) // across the bounds of both layouts
				kind := rng.IntN(10)
				for err := errFault; err != nil; {
					switch {
					case kind < 4:
						_, err = writer.Submit(ctx, m, v)
					case kind < 7:
						_, err = bt.Submit(ctx, m, v)
					case kind < 8:
						if err = writer.Set(ctx, m, v); err == nil {
							err = writer.Set(ctx, m, v, lb.In(lb.Daily()))
						}
					default:
						err = writer.Remove(ctx, m)
					}
				}
				mu.Lock()
				if want[m] = v; kind >= 8 {
					delete(want, m)
				}
				mu.Unlock()
			}
		})
	}
	fillTries := 0
	for err := errFault; err != nil; fillTries++ {
		_, err = filler.FillShadow(ctx)
	}
	wg.Wait()
	t.Logf("the fill ran %d times", fillTries)
	for _, by := range []*lb.Leaderboard{healthy, moved} {
		for _, w := range []lb.Window{lb.AllTime(), lb.Daily()} {
			top, err := by.Top(ctx, 1000, lb.In(w))
			require.NoError(t, err)
			got := map[string]float64{}
			for _, e := range top {
				got[e.Member] = e.Score
			}
			require.Equal(t, want, got, "%s", w.Name())
			n, err := by.Count(ctx, lb.In(w))
			require.NoError(t, err)
			require.Equal(t, int64(len(want)), n, "%s: Count", w.Name())
		}
	}
	reps, err := healthy.Check(ctx, false)
	require.NoError(t, err)
	for _, r := range reps {
		requireCleanReport(t, r, int64(len(want)), fmt.Sprintf("Check of %s, shadow=%v", r.Window, r.Shadow))
	}
}
