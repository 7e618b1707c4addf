package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// replayCall is one submission of TestBatcherReplaysSubmits.
type replayCall struct {
	member, data, id string
	score            float64
	at               time.Time // WithTime; zero for none
}

func (c replayCall) opts() []lb.SubmitOption {
	o := []lb.SubmitOption{lb.WithData(c.data)}
	if !c.at.IsZero() {
		o = append(o, lb.WithTime(c.at))
	}
	if c.id != "" {
		o = append(o, lb.WithID(c.id))
	}
	return o
}

// replayRun is one case: twin boards, a clock both read, the calls.
type replayRun struct {
	t           *testing.T
	b           *testredis.Backend
	desc        string
	clock       *testClock
	base        time.Time
	moving      bool // the clock crosses midnight, a step a call
	daily       bool // an all-time and a daily window
	twins       [2]*lb.Leaderboard
	names       [2]string
	stores      [2]*memStore
	calls       []replayCall
	want, got   []lb.Result
	wantE, gotE []error
	seq         []int // the write each call joined, -1 for one on its own
}

// TestBatcherReplaysSubmits: a Batcher leaves Redis and the store as the
// same submissions sent one by one through Submit leave them, and each
// caller gets Submit's error (a refusal) and, on success, its standings
// before and after a write holding its submission: its own, or those of a
// fold from its first to its last submission. Random cases under every
// policy, with and without a tie-break (either order of time), a daily
// window beside the all-time one with WithTime into yesterday and a clock
// crossing midnight, WithID, data, scores at the edge of the range, shards
// (with a shadow layout too), a hot top, Competition ranks, a store, and
// batches of several sizes and windows (folds into a batch sent and
// waiting included).
func TestBatcherReplaysSubmits(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for seed := range 80 {
			r := newReplayRun(t, b, rand.New(rand.NewPCG(uint64(seed), 11)))
			r.desc = fmt.Sprintf("seed %d: %s", seed, r.desc)
			r.run(rand.New(rand.NewPCG(uint64(seed), 12)))
			r.check()
			for _, name := range r.names {
				b.Wipe(t, name) // a SCAN of miniredis sorts every key it holds
			}
		}
	})
}

// newReplayRun builds a random case's twin boards and calls.
func newReplayRun(t *testing.T, b *testredis.Backend, rng *rand.Rand) *replayRun {
	r := &replayRun{t: t, b: b, base: future, moving: rng.IntN(2) == 0}
	if r.moving {
		r.base = future.Truncate(24 * time.Hour).Add(-3 * time.Second)
	}
	r.clock = &testClock{now: r.base}
	policy := pick2(rng, []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate})
	opts := []lb.Option{lb.WithPolicy(policy), lb.WithClock(r.clock.Now)}
	var flags []string
	add := func(name string, o lb.Option) {
		if rng.IntN(2) == 0 {
			opts, flags = append(opts, o), append(flags, name)
		}
	}
	tied := rng.IntN(2) == 0
	if tied {
		mk := pick2(rng, []func(lb.TimeOrder) (lb.TieBreak, error){lb.EarlierFirst, lb.LaterFirst})
		tb, err := mk(lb.TimeOrder{Epoch: r.base.AddDate(0, 0, -30), Resolution: time.Second, MaxScore: 1000, Decimals: 1})
		require.NoError(t, err)
		opts, flags = append(opts, lb.WithTieBreak(tb)), append(flags, "tie-break")
	}
	add("lowest", lb.WithOrder(lb.LowestFirst))
	add("daily", lb.WithWindows(lb.AllTime(), lb.Daily()))
	r.daily = slices.Contains(flags, "daily")
	add("sharded", lb.WithShards(0, 500))
	if slices.Contains(flags, "sharded") {
		add("shadow", lb.WithShadowShards(100))
	}
	add("hot", lb.WithHotTop(2))
	add("competition", lb.WithRanking(lb.Competition))
	withStore := rng.IntN(2) == 0
	for i := range r.twins {
		o := slices.Clone(opts)
		if withStore {
			r.stores[i] = newMemStore()
			o = append(o, lb.WithStore(r.stores[i]))
		}
		r.twins[i], r.names[i] = newBoard(t, b, o...)
	}
	r.calls = replayCalls(rng, r.base, tied)
	r.desc = fmt.Sprintf("%v %v store %v moving %v calls %+v", policy, flags, withStore, r.moving, r.calls)
	return r
}

func pick2[T any](rng *rand.Rand, xs []T) T { return xs[rng.IntN(len(xs))] }

// replayCalls draws up to ten calls for three members.
func replayCalls(rng *rand.Rand, base time.Time, tied bool) []replayCall {
	scores := []float64{0, 1, 2, -1, -2, 5, 400, 600, -600, 990, -990}
	if tied {
		scores = append(scores, 0.5, -1.5)
	} else {
		scores = append(scores, 0.1, 1e300, -1e300, 1.7e308, -1.7e308)
	}
	calls := make([]replayCall, 1+rng.IntN(10))
	for i := range calls {
		c := replayCall{member: pick2(rng, []string{"a", "b", "c"}), score: pick2(rng, scores)}
		switch rng.IntN(6) {
		case 0:
			c.at = base.AddDate(0, 0, -1).Add(time.Duration(rng.IntN(5)) * time.Second)
		case 1:
			c.at = base.Add(-time.Duration(rng.IntN(5)) * time.Second)
		case 2:
			c.data = pick2(rng, []string{"x", "y"})
		case 3:
			c.id = "id" + strconv.Itoa(i)
		}
		calls[i] = c
	}
	return calls
}

// tick moves the clock to call i's time.
func (r *replayRun) tick(i int) {
	if r.moving {
		r.clock.Set(r.base.Add(time.Duration(i) * 700 * time.Millisecond))
	}
}

// run sends the calls through Submit on the first twin, then through a
// Batcher on the second, each joining (or starting on its own) before the
// next is sent.
func (r *replayRun) run(rng *rand.Rand) {
	ctx, n := context.Background(), len(r.calls)
	r.want, r.got, r.wantE, r.gotE, r.seq = make([]lb.Result, n), make([]lb.Result, n), make([]error, n), make([]error, n), make([]int, n)
	for i, c := range r.calls {
		r.tick(i)
		r.want[i], r.wantE[i] = r.twins[0].Submit(ctx, c.member, c.score, c.opts()...)
	}
	r.clock.Set(r.base)
	bt, err := r.twins[1].NewBatcher(lb.WithBatchWindow(pick2(rng, []time.Duration{time.Minute, time.Millisecond, 50 * time.Microsecond})),
		lb.WithBatchSize(pick2(rng, []int{1, 2, 100})))
	require.NoError(r.t, err)
	var seqs []int
	lb.TraceBatch(bt, func(seq int) { seqs = append(seqs, seq) })
	fins := make([]chan struct{}, n)
	// Every other run's callers share a ctx that can end (and never
	// does): they are woken together (the Batcher's watch), not each by
	// its own select.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if rng.IntN(2) == 0 {
		sctx = ctx
	}
	for i, c := range r.calls {
		r.tick(i)
		fins[i] = make(chan struct{})
		joined, mark := lb.BatchJoined(bt), lb.BatchAfter(bt, c.member)
		go func() {
			defer close(fins[i])
			r.got[i], r.gotE[i] = bt.Submit(sctx, c.member, c.score, c.opts()...)
		}()
		for lb.BatchJoined(bt) == joined && (lb.BatchAfter(bt, c.member) == mark || lb.BatchAfter(bt, c.member) == nil) && !isDone(fins[i]) {
			time.Sleep(50 * time.Microsecond)
		}
		r.seq[i] = -1
		if lb.BatchJoined(bt) != joined {
			r.seq[i] = seqs[len(seqs)-1]
		}
	}
	require.NoError(r.t, bt.Close(ctx))
	for _, fin := range fins {
		<-fin
	}
}

func isDone(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// check compares the twins, and each caller's answer with Submit's.
func (r *replayRun) check() {
	t := r.t
	for i := range r.calls {
		what := fmt.Sprintf("%s: call %d", r.desc, i)
		require.Equal(t, r.wantE[i] == nil, r.gotE[i] == nil, "%s: Submit's error %v, the Batcher's %v", what, r.wantE[i], r.gotE[i])
		for _, s := range []error{lb.ErrInvalidScore, lb.ErrPrecision} {
			require.Equal(t, errors.Is(r.wantE[i], s), errors.Is(r.gotE[i], s), "%s: %v, %v", what, r.wantE[i], r.gotE[i])
		}
		if r.wantE[i] == nil {
			r.checkResult(i, what)
		}
	}
	require.Equal(t, r.snapshot(0), r.snapshot(1), r.desc)
	r.checkTops()
	if r.stores[0] != nil {
		require.Equal(t, storeByMember(r.stores[0]), storeByMember(r.stores[1]), r.desc)
	}
}

// checkResult requires call i's standings to be Submit's, or those of the
// fold of the calls first..last that joined its write.
func (r *replayRun) checkResult(i int, what string) {
	first, last := i, i
	for k := range r.calls {
		if r.seq[i] >= 0 && r.seq[k] == r.seq[i] && r.wantE[k] == nil {
			first, last = min(first, k), max(last, k)
		}
	}
	require.Len(r.t, r.got[i].Windows, len(r.want[i].Windows), what)
	for j, w := range r.want[i].Windows {
		g, wf, wl := r.got[i].Windows[j], r.want[first].Windows[j], r.want[last].Windows[j]
		msg := fmt.Sprintf("%s window %d: got %+v, Submit's %+v (first %+v, last %+v)", what, j, g, w, wf.Previous, wl.Standing)
		require.Equal(r.t, w.Closed, g.Closed, msg)
		require.Equal(r.t, w.Period, g.Period, msg)
		require.True(r.t, sameEntry(g.Previous, w.Previous) || sameEntry(g.Previous, wf.Previous), msg)
		require.True(r.t, sameEntry(g.Standing.Entry, w.Standing.Entry) || sameEntry(g.Standing.Entry, wl.Standing.Entry), msg)
		if first == last {
			require.Equal(r.t, w.Changed, g.Changed, msg)
		}
	}
}

// checkTops requires the twins' reads of each period's top to agree:
// through a hot top's mirror, and this process's snapshot of it, too.
func (r *replayRun) checkTops() {
	qs := [][]lb.Query{{lb.IncludeData()}}
	if r.daily {
		for _, at := range []time.Time{r.base.AddDate(0, 0, -1), r.base, r.clock.Now()} {
			qs = append(qs, []lb.Query{lb.In(lb.Daily()), lb.At(at), lb.IncludeData()})
		}
	}
	for _, q := range qs {
		want, werr := r.twins[0].Top(context.Background(), 3, q...)
		got, err := r.twins[1].Top(context.Background(), 3, q...)
		require.Equal(r.t, werr, err, r.desc) // ErrExpired: a day past its retention
		require.Equal(r.t, want, got, r.desc)
	}
}

// sameEntry compares scores and whether ranked: ranks depend on when the
// other members' writes applied, which a batch orders by their first
// submission.
func sameEntry(a, b lb.Entry) bool { return a.Score == b.Score && (a.Rank == 0) == (b.Rank == 0) }

var (
	replayTag   = regexp.MustCompile(`~\d+\}`)
	replayStamp = regexp.MustCompile(`:clock$|::turn:|:v\d+:\d+$`)
	replayExp   = regexp.MustCompile(`exp=\d+`)
)

// snapshot is twin i's keys under names that do not hold its board name
// (a sharded board's hash tags do), without the keys that count time or
// turns, and without the expiries Redis sets relative to its own clock
// (the id set, the top mirrors).
func (r *replayRun) snapshot(i int) map[string]string {
	out := map[string]string{}
	for k, v := range r.b.Snapshot(r.t, r.names[i]) {
		k = replayTag.ReplaceAllString(strings.ReplaceAll(k, r.names[i], "B"), "}")
		if replayStamp.MatchString(k) {
			continue
		}
		if strings.HasSuffix(k, ":ids") || strings.Contains(k, ":topk:") {
			v = replayExp.ReplaceAllString(v, "")
		}
		out[k] = v
	}
	return out
}

// storeByMember is what the store holds, each member's submissions in the
// order it took them.
func storeByMember(s *memStore) map[string][]string {
	out := map[string][]string{}
	for _, sub := range s.subs {
		out[sub.Member] = append(out[sub.Member], fmt.Sprintf("%v id %q at %v periods %v", sub.Score, sub.ID, sub.At.UnixMicro(), sub.Periods))
	}
	return out
}
