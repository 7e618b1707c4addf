package leaderboard_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// scanHookClient runs hooks around the ZSCANs of given keys: one armed
// before a key's ZSCAN runs just before the call that sends it, one armed
// after it just after that call returns; each once. Check scans a
// layout's shards in order after reading the partitions, so a hook
// before shard 0's scan writes after the partitions were read, and one
// after shard 1's between two shards' scans.
type scanHookClient struct {
	rueidis.Client
	mu            sync.Mutex
	before, after map[string]func()
}

func (c *scanHookClient) arm(before, after map[string]func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.before, c.after = before, after
}

// left is how many hooks have not run.
func (c *scanHookClient) left() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.before) + len(c.after)
}

// take removes and returns the hooks of hooks for the ZSCANs of keys.
func (c *scanHookClient) take(hooks map[string]func(), keys []string) []func() {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []func()
	for _, k := range keys {
		if h, ok := hooks[k]; ok {
			delete(hooks, k)
			out = append(out, h)
		}
	}
	return out
}

func (c *scanHookClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	return c.DoMulti(ctx, cmd)[0]
}

func (c *scanHookClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	// The keys first: rueidis recycles the commands once sent.
	var scanned []string
	for _, cmd := range cmds {
		if args := cmd.Commands(); args[0] == "ZSCAN" {
			scanned = append(scanned, args[1])
		}
	}
	for _, h := range c.take(c.before, scanned) {
		h()
	}
	res := c.Client.DoMulti(ctx, cmds...)
	for _, h := range c.take(c.after, scanned) {
		h()
	}
	return res
}

// checkRaceCombo is a board the Check race tests write and check.
type checkRaceCombo struct {
	policy lb.Policy
	order  lb.Order
	shadow []float64 // WithShadowShards, filled before Check; nil for none
}

func (c checkRaceCombo) name() string {
	return fmt.Sprintf("%v/%v/shadow=%v", c.policy, c.order, c.shadow != nil)
}

func (c checkRaceCombo) options() []lb.Option {
	opts := []lb.Option{lb.WithPolicy(c.policy), lb.WithOrder(c.order), lb.WithWindows(lb.AllTime()),
		lb.WithClock(fixed(future)), lb.WithShards(shardBounds...)}
	if c.shadow != nil {
		opts = append(opts, lb.WithShadowShards(c.shadow...))
	}
	return opts
}

func (c checkRaceCombo) layouts() [][]float64 {
	if c.shadow == nil {
		return [][]float64{shardBounds}
	}
	return [][]float64{shardBounds, c.shadow}
}

var checkRaceCombos = []checkRaceCombo{
	{policy: lb.KeepBest, order: lb.HighestFirst},
	{policy: lb.Accumulate, order: lb.LowestFirst},
	{policy: lb.KeepBest, order: lb.HighestFirst, shadow: []float64{-3, -1, 0.5, 1, 2.5, 4}},
	{policy: lb.Accumulate, order: lb.LowestFirst, shadow: []float64{-3, -1, 0.5, 1, 2.5, 4}},
}

// inShard is a value in shard i of bounds (multiples of 1/4, which sums
// keep exact): below the first bound, above the last, or between two.
func inShard(bounds []float64, i int) float64 {
	switch i {
	case 0:
		return bounds[0] - 1
	case len(bounds):
		return bounds[len(bounds)-1] + 1
	}
	return (bounds[i-1] + bounds[i]) / 2
}

// TestCheckIgnoresWritesBetweenItsReads: Check reads a period's
// partitions, then each shard in turn, in many round trips. Writes landing
// between those reads made a sound board show findings: a member written
// after its partition was read as stale or misplaced, a new member as a
// stray, one that crossed a bound between two shards' scans as duplicated
// or missing, so that Check(ctx, false) after FillShadow (README,
// "Changing bounds") never came back clean on a busy board. Findings now
// stand only once a read of the suspects confirms them. A client runs
// writes of each kind (KeepBest and Accumulate, each layout, the shadow
// after FillShadow) at those points; every report must be clean but for
// a stray planted in shard 0 of each layout, a real defect, which Check
// must report and, asked to, repair.
func TestCheckIgnoresWritesBetweenItsReads(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range checkRaceCombos {
			t.Run(c.name(), func(t *testing.T) { checkBetweenReads(t, b, c) })
		}
	})
}

// checkWrites is a board written beside the one Check runs on, with each
// member's stored value.
type checkWrites struct {
	t      *testing.T
	ctx    context.Context
	board  *lb.Leaderboard
	policy lb.Policy
	mu     sync.Mutex
	values map[string]float64
}

// to makes member's stored value v (up only under KeepBest HighestFirst).
func (w *checkWrites) to(member string, v float64) {
	w.mu.Lock()
	score := v
	if w.policy == lb.Accumulate {
		score = v - w.values[member]
	}
	w.values[member] = v
	w.mu.Unlock()
	_, err := w.board.Submit(w.ctx, member, score)
	require.NoError(w.t, err, "submit %q %v", member, score)
}

// hooks are writes of every kind around the scans of one layout (bounds)
// of board name, their members named after round: before shard 0's scan
// a member changing value in its shard, one crossing from shard 1 to the
// last but one, a new member; after shard 1's scan one crossing from
// shard 1 to the last (seen in both), and under Accumulate one from the
// last but one to shard 0 (seen in neither).
func (w *checkWrites) hooks(name string, bounds []float64, round string) (before, after map[string]func()) {
	period := lb.AllTime().Period(future).ID
	key := func(i int) string { return shardKey(name, bounds, i, "alltime", period) }
	last := len(bounds)
	m := func(what string) string { return fmt.Sprintf("%s-%s-%d", what, round, last) }
	for _, s := range []struct {
		member string
		shard  int
	}{{m("stale"), last}, {m("cross"), 1}, {m("dupe"), 1}, {m("gone"), last - 1}} {
		w.to(s.member, inShard(bounds, s.shard))
	}
	before = map[string]func(){key(0): func() {
		w.to(m("stale"), inShard(bounds, last)+1)
		w.to(m("cross"), inShard(bounds, last-1))
		w.to(m("new"), inShard(bounds, 2))
	}}
	after = map[string]func(){key(1): func() {
		w.to(m("dupe"), inShard(bounds, last))
		if w.policy == lb.Accumulate {
			w.to(m("gone"), inShard(bounds, 0))
		}
	}}
	return before, after
}

func checkBetweenReads(t *testing.T, b *testredis.Backend, c checkRaceCombo) {
	ctx := context.Background()
	name := shardName(t, b)
	hooked := &scanHookClient{Client: b.Client}
	checker, err := lb.New(hooked, name, c.options()...)
	require.NoError(t, err)
	writer, err := lb.New(b.Client, name, c.options()...)
	require.NoError(t, err)
	w := &checkWrites{t: t, ctx: ctx, board: writer, policy: c.policy, values: map[string]float64{}}
	for i := range 12 {
		w.to(fmt.Sprintf("m%02d", i), inShard(shardBounds, i%5))
	}
	if c.shadow != nil {
		_, err := writer.FillShadow(ctx)
		require.NoError(t, err)
	}
	period := lb.AllTime().Period(future).ID
	cl := b.Client.Client
	for _, bounds := range c.layouts() {
		// A real defect: a member in no partition, in shard 0.
		require.NoError(t, cl.Do(ctx, cl.B().Zadd().Key(shardKey(name, bounds, 0, "alltime", period)).ScoreMember().ScoreMember(-10, "ghost").Build()).Error())
	}
	for _, round := range []struct {
		name          string
		repair, ghost bool
	}{{"a", false, true}, {"b", true, true}, {"c", false, false}, {"d", true, false}} {
		before, after := map[string]func(){}, map[string]func(){}
		var want []lb.CheckReport
		for i, bounds := range c.layouts() {
			bf, af := w.hooks(name, bounds, round.name)
			maps.Copy(before, bf)
			maps.Copy(after, af)
			r := lb.CheckReport{Window: "alltime", Period: period, Shadow: i == 1}
			if round.ghost {
				r.Stray, r.Repaired = []string{"ghost"}, round.repair
			}
			want = append(want, r)
		}
		hooked.arm(before, after)
		reps, err := checker.Check(ctx, round.repair)
		require.NoError(t, err, "round %s", round.name)
		require.Zero(t, hooked.left(), "round %s: every hook ran", round.name)
		for i := range reps {
			reps[i].Members = 0 // as the partitions were read, before or after the writes
			if reps[i].Shadow && round.repair && round.ghost && reps[i].Clean() {
				// On one node the repair of the board's layout repairs
				// the shadow's too, before the shadow is checked.
				reps[i].Stray, reps[i].Repaired = []string{"ghost"}, true
			}
		}
		requireReports(t, want, reps, fmt.Sprintf("round %s, Check(%v)", round.name, round.repair))
	}
	reps, err := checker.Check(ctx, false)
	require.NoError(t, err)
	for _, r := range reps {
		requireCleanReport(t, r, int64(len(w.values)), fmt.Sprintf("at rest, shadow=%v", r.Shadow))
	}
}

// TestCheckCleanUnderLiveWrites: writers submit without pause (members
// crossing bounds, new members, SubmitMany beside Submit; KeepBest and
// Accumulate; a shadow layout filled while they run) while Check(false)
// runs again and again: the board is sound throughout, so every report
// must be clean. Randomized beside TestCheckIgnoresWritesBetweenItsReads.
func TestCheckCleanUnderLiveWrites(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range checkRaceCombos[2:] {
			t.Run(c.name(), func(t *testing.T) { checkUnderLiveWrites(t, b, c, 3, 8) })
		}
	})
}

func checkUnderLiveWrites(t *testing.T, b *testredis.Backend, c checkRaceCombo, writers, checks int) {
	ctx := context.Background()
	name := shardName(t, b)
	board, err := lb.New(b.Client, name, c.options()...)
	require.NoError(t, err)
	var fails failures
	var writes atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 99))
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				m := fmt.Sprintf("w%d-%d", w, rng.IntN(20))
				if rng.IntN(10) == 0 {
					m = fmt.Sprintf("new%d-%d", w, i) // a member never seen
				}
				v := 0.5 * float64(rng.IntN(21)-10) // -5 .. 5: across every bound
				var err error
				if i%4 == 3 {
					err = board.SubmitMany(ctx, map[string]float64{m: v, fmt.Sprintf("w%d-%d", w, rng.IntN(20)): -v})
				} else {
					_, err = board.Submit(ctx, m, v)
				}
				if err != nil {
					fails.add("writer %d: %v", w, err)
					return
				}
				writes.Add(1)
			}
		})
	}
	defer func() { close(stop); wg.Wait() }()
	time.Sleep(20 * time.Millisecond)
	if c.shadow != nil {
		_, err := board.FillShadow(ctx)
		require.NoError(t, err)
	}
	for i := range checks {
		start := writes.Load()
		reps, err := board.Check(ctx, false)
		require.NoError(t, err)
		for _, r := range reps {
			require.True(t, r.Clean(), "Check %d, shadow=%v, with %d writes during it: %+v", i, r.Shadow, writes.Load()-start, r)
		}
	}
	require.Empty(t, fails.list)
	require.Positive(t, writes.Load())
	t.Logf("%d writes", writes.Load())
}
