package pgstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// lmVal is a member's standing in the lifecycle model.
type lmVal struct {
	score float64
	at    time.Time
}

// lmRun drives one board through every write kind over several days,
// beside a plain Go model of what its readable periods hold.
type lmRun struct {
	t       *testing.T
	ctx     context.Context
	rng     *rand.Rand
	b       *testredis.Backend
	name    string
	board   *leaderboard.Leaderboard
	batcher *leaderboard.Batcher
	clock   *smClock
	c       smCombo
	periods map[string]map[string]lmVal // "alltime" or "daily/<date>"
	data    map[string]string
	ids     map[string]string // id -> member
	nextID  int
	log     []string
}

const lmRetention = 48 * time.Hour

func (r *lmRun) logf(f string, a ...any) {
	r.log = append(r.log, r.clock.Now().Format("01-02T15:04:05.000000 ")+fmt.Sprintf(f, a...))
}

func (r *lmRun) period(k string) map[string]lmVal {
	if r.periods[k] == nil {
		r.periods[k] = map[string]lmVal{}
	}
	return r.periods[k]
}

// readable is whether the daily period holding at is still readable at the
// board's clock (its end plus the retention after now, in milliseconds, as
// the board decides it).
func (r *lmRun) readable(at time.Time) bool {
	end := at.UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	return end.Add(lmRetention).UnixMilli() > r.clock.Now().UnixMilli()
}

func (r *lmRun) readableKeys() []string {
	out := []string{"alltime"}
	now := r.clock.Now()
	for d := range 4 {
		at := now.Add(-time.Duration(d) * 24 * time.Hour)
		if r.readable(at) {
			out = append(out, dayKey(at))
		}
	}
	return out
}

func (r *lmRun) better(a, b float64) bool {
	if r.c.order == leaderboard.HighestFirst {
		return a > b
	}
	return a < b
}

// apply is one submission in one period, by the policy.
func (r *lmRun) apply(k, mem string, s float64, at time.Time) {
	p := r.period(k)
	old, ok := p[mem]
	switch {
	case !ok:
		p[mem] = lmVal{s, at}
	case r.c.policy == leaderboard.Replace:
		p[mem] = lmVal{s, at}
	case r.c.policy == leaderboard.Accumulate:
		if s != 0 {
			sum := old.score + s
			if r.c.tb != "" {
				sum = math.Round(sum*100) / 100
			}
			p[mem] = lmVal{sum, at}
		}
	case r.better(s, old.score) || (s == old.score && at.Before(old.at)):
		p[mem] = lmVal{s, at}
	}
}

// submitted applies a submission reached at at to every period it reaches.
func (r *lmRun) submitted(mem string, s float64, at time.Time, data string) {
	r.apply("alltime", mem, s, at)
	if r.readable(at) {
		r.apply(dayKey(at), mem, s, at)
	}
	if data != "" {
		r.data[mem] = data
	}
}

var lmMembers = []string{"a", "b", "c", "d", "e", "f", "g", "p:1", "p:10", "Z"}
var lmScores = []float64{-3, -1.5, -0.25, 0, 0.1, 0.2, 0.7, 1, 1, 2, 2, 3, 5, 8.5}

func (r *lmRun) member() string { return lmMembers[r.rng.IntN(len(lmMembers))] }
func (r *lmRun) score() float64 { return lmScores[r.rng.IntN(len(lmScores))] }

func (r *lmRun) window() (string, leaderboard.Query) {
	if r.rng.IntN(2) == 0 {
		return dayKey(r.clock.Now()), leaderboard.In(leaderboard.Daily())
	}
	return "alltime", leaderboard.In(leaderboard.AllTime())
}

// submit is a Submit, now or back in time (into a retained or an expired
// daily period), with or without a new id and data.
func (r *lmRun) submit() {
	now := r.clock.Now()
	mem, s := r.member(), r.score()
	var opts []leaderboard.SubmitOption
	at := now
	if r.rng.IntN(4) == 0 {
		at = now.Add(-time.Duration(r.rng.Int64N(int64(80 * time.Hour)))).Truncate(time.Microsecond)
		opts = append(opts, leaderboard.WithTime(at))
	}
	id, data := "", ""
	if r.rng.IntN(2) == 0 {
		r.nextID++
		id = fmt.Sprintf("id%d", r.nextID)
		opts = append(opts, leaderboard.WithID(id))
	}
	if r.rng.IntN(3) == 0 {
		data = fmt.Sprintf("d%d", r.rng.IntN(100))
		opts = append(opts, leaderboard.WithData(data))
	}
	r.logf("Submit(%q, %v, at=%v, id=%q, data=%q)", mem, s, at.Format("01-02T15:04:05.000000"), id, data)
	res, err := r.board.Submit(r.ctx, mem, s, opts...)
	require.NoError(r.t, err, "Submit")
	require.False(r.t, res.Duplicate, "Submit of a new id")
	r.submitted(mem, s, at, data)
	if id != "" {
		r.ids[id] = mem
	}
}

// retry submits again under an id seen before, for its member or another,
// with another score: a duplicate that changes nothing.
func (r *lmRun) retry() {
	if len(r.ids) == 0 {
		return
	}
	ids := make([]string, 0, len(r.ids))
	for id := range r.ids {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	id := ids[r.rng.IntN(len(ids))]
	mem := r.ids[id]
	if r.rng.IntN(4) == 0 {
		mem = r.member()
	}
	s := r.score()
	r.logf("Submit retry(%q, %v, id=%q)", mem, s, id)
	res, err := r.board.Submit(r.ctx, mem, s, leaderboard.WithID(id), leaderboard.WithData("retry"))
	require.NoError(r.t, err, "Submit retry")
	require.True(r.t, res.Duplicate, "Submit retry of %q", id)
}

// set is a Set, sometimes followed by Submits at the very same instant.
func (r *lmRun) set() {
	now := r.clock.Now()
	k, q := r.window()
	mem, s := r.member(), r.score()
	r.logf("Set(%q, %v, %s)", mem, s, k)
	require.NoError(r.t, r.board.Set(r.ctx, mem, s, q), "Set")
	r.period(k)[mem] = lmVal{s, now}
	for range r.rng.IntN(3) {
		s := r.score()
		r.logf("Submit(%q, %v) same instant", mem, s)
		_, err := r.board.Submit(r.ctx, mem, s)
		require.NoError(r.t, err, "Submit after Set")
		r.submitted(mem, s, now, "")
	}
}

func (r *lmRun) submitMany() {
	now := r.clock.Now()
	batch := map[string]float64{}
	for range 1 + r.rng.IntN(4) {
		batch[r.member()] = r.score()
	}
	r.logf("SubmitMany(%v)", batch)
	require.NoError(r.t, r.board.SubmitMany(r.ctx, batch), "SubmitMany")
	for mem, s := range batch {
		r.submitted(mem, s, now, "")
	}
}

// batched sends submissions through the Batcher from goroutines at once:
// distinct members, except where the policy folds in any order (KeepBest;
// Accumulate of whole numbers), which several goroutines share a member.
func (r *lmRun) batched() {
	now := r.clock.Now()
	type one struct {
		mem string
		s   float64
	}
	var subs []one
	shared := r.c.policy != leaderboard.Replace
	used := map[string]bool{}
	for range 2 + r.rng.IntN(5) {
		mem, s := r.member(), r.score()
		if used[mem] && !shared {
			continue
		}
		if used[mem] && r.c.policy == leaderboard.Accumulate && r.c.tb == "" {
			s = math.Trunc(s)
		}
		used[mem] = true
		subs = append(subs, one{mem, s})
	}
	if r.c.policy == leaderboard.Accumulate && r.c.tb == "" {
		// Fractions of a member submitted at once add in any order.
		count := map[string]int{}
		for _, o := range subs {
			count[o.mem]++
		}
		for i, o := range subs {
			if count[o.mem] > 1 {
				subs[i].s = math.Trunc(o.s)
			}
		}
	}
	r.logf("Batcher(%v)", subs)
	var wg sync.WaitGroup
	errs := make([]error, len(subs))
	for i, o := range subs {
		wg.Go(func() { _, errs[i] = r.batcher.Submit(r.ctx, o.mem, o.s) })
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(r.t, err, "Batcher Submit")
	}
	for _, o := range subs {
		r.submitted(o.mem, o.s, now, "")
	}
}

func (r *lmRun) remove() {
	ms := []string{r.member()}
	if r.rng.IntN(2) == 0 {
		ms = append(ms, r.member(), "ghost")
	}
	r.logf("Remove(%q)", ms)
	require.NoError(r.t, r.board.Remove(r.ctx, ms...), "Remove")
	for _, k := range r.readableKeys() {
		for _, mem := range ms {
			delete(r.period(k), mem)
		}
	}
	for _, mem := range ms {
		delete(r.data, mem)
	}
}

func (r *lmRun) removeBetween() {
	k, q := r.window()
	bounds := []float64{math.Inf(-1), -1, 0, 0.2, 1, 2, 3, 6, math.Inf(1)}
	a, b := bounds[r.rng.IntN(len(bounds))], bounds[r.rng.IntN(len(bounds))]
	lo, hi := min(a, b), max(a, b)
	r.logf("RemoveBetween(%v, %v, %s)", lo, hi, k)
	n, err := r.board.RemoveBetween(r.ctx, lo, hi, q)
	require.NoError(r.t, err, "RemoveBetween")
	var want int64
	for mem, v := range r.period(k) {
		if v.score >= lo && v.score <= hi {
			delete(r.period(k), mem)
			want++
		}
	}
	require.Equal(r.t, want, n, "RemoveBetween count")
}

func (r *lmRun) reset() {
	k, q := r.window()
	r.logf("Reset(%s)", k)
	require.NoError(r.t, r.board.Reset(r.ctx, q), "Reset")
	delete(r.periods, k)
}

func (r *lmRun) deleteBoard() {
	r.logf("Delete")
	require.NoError(r.t, r.board.Delete(r.ctx), "Delete")
	r.periods, r.data, r.ids = map[string]map[string]lmVal{}, map[string]string{}, map[string]string{}
}

func (r *lmRun) setData() {
	mem := r.member()
	data := ""
	if r.rng.IntN(3) > 0 {
		data = fmt.Sprintf("s%d", r.rng.IntN(100))
	}
	r.logf("SetData(%q, %q)", mem, data)
	require.NoError(r.t, r.board.SetData(r.ctx, mem, data), "SetData")
	if data == "" {
		delete(r.data, mem)
	} else {
		r.data[mem] = data
	}
}

func (r *lmRun) step() {
	switch x := r.rng.IntN(100); {
	case x < 35:
		r.submit()
	case x < 45:
		r.retry()
	case x < 57:
		r.set()
	case x < 65:
		r.submitMany()
	case x < 73:
		r.batched()
	case x < 80:
		r.remove()
	case x < 86:
		r.removeBetween()
	case x < 90:
		r.reset()
	case x < 91:
		r.deleteBoard()
	default:
		r.setData()
	}
}

// want is the model's period k as the board orders it.
func (r *lmRun) want(k string) []leaderboard.Entry {
	p := r.periods[k]
	es := make([]leaderboard.Entry, 0, len(p))
	for mem, v := range p {
		es = append(es, leaderboard.Entry{Member: mem, Score: v.score, Data: r.data[mem]})
	}
	high := r.c.order == leaderboard.HighestFirst
	slot := func(t time.Time) time.Time { return t.Truncate(time.Millisecond) }
	sort.Slice(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Score != b.Score {
			return r.better(a.Score, b.Score)
		}
		if r.c.tb != "" {
			ta, tb := slot(p[a.Member].at), slot(p[b.Member].at)
			if !ta.Equal(tb) {
				return ta.Before(tb) == (r.c.tb == "earlier")
			}
		}
		if high {
			return a.Member > b.Member
		}
		return a.Member < b.Member
	})
	for i := range es {
		es[i].Rank = int64(i + 1)
	}
	if len(es) == 0 {
		return nil
	}
	return es
}

func (r *lmRun) query(k string) []leaderboard.Query {
	if k == "alltime" {
		return []leaderboard.Query{leaderboard.In(leaderboard.AllTime()), leaderboard.IncludeData()}
	}
	at, err := time.Parse("2006-01-02", strings.TrimPrefix(k, "daily/"))
	require.NoError(r.t, err)
	return []leaderboard.Query{leaderboard.In(leaderboard.Daily()), leaderboard.At(at.Add(12 * time.Hour)), leaderboard.IncludeData()}
}

// check compares every readable period with the model.
func (r *lmRun) check(what string) {
	for _, k := range r.readableKeys() {
		got, err := r.board.Top(r.ctx, leaderboard.MaxN, r.query(k)...)
		require.NoError(r.t, err)
		if len(got) == 0 {
			got = nil
		}
		require.Equal(r.t, r.want(k), got, "%s: model vs Top of %s", what, k)
	}
}

func lmCombos() []smCombo {
	var out []smCombo
	i := 0
	for _, p := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate} {
		for _, tb := range []string{"", []string{"earlier", "later"}[i/2%2]} {
			i++
			c := smCombo{policy: p, tb: tb, seed: uint64(9100 + i)}
			if i%2 == 0 {
				c.order = leaderboard.LowestFirst
			}
			out = append(out, c)
		}
	}
	return out
}

// TestStoreModelLifecycle drives store-backed boards (a daily window with a
// retention beside the all-time one) over four days with every write kind:
// Submits now and back in time (into retained and expired periods), with
// ids, their retries, data, Sets followed by Submits at the same instant,
// SubmitMany, a Batcher's concurrent Submits, Remove, RemoveBetween, Reset,
// Delete and SetData. Every readable period must equal a Go model
// throughout, after a Rebuild over the board (data kept), after a wipe and
// a Rebuild (kept standings), and after one from the log's aggregation;
// every id stays a duplicate. Unsharded: TestStoreModelCorrections rebuilds
// sharded boards, whose rebuilds here would take seconds each.
func TestStoreModelLifecycle(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		s := newStore(t)
		rounds, _ := strconv.Atoi(os.Getenv("STORE_MODEL_ROUNDS"))
		for round := range max(rounds, 1) {
			for _, c := range lmCombos() {
				c.seed += uint64(round) * 1000
				t.Run(c.name(), func(t *testing.T) { runLifecycleModel(t, b, s, c, 120) })
			}
		}
	})
}

func runLifecycleModel(t *testing.T, b *testredis.Backend, s *Store, c smCombo, steps int) {
	clock := &smClock{now: smDay1}
	name := b.BoardName(t)
	c.rank = leaderboard.Ordinal
	c.hot = 0
	board := lmBoard(t, b, s, c, name, clock)
	batcher, err := board.NewBatcher(leaderboard.WithBatchWindow(2 * time.Millisecond))
	require.NoError(t, err)
	defer func() { _ = batcher.Close(context.Background()) }()
	r := &lmRun{t: t, ctx: context.Background(), rng: rand.New(rand.NewPCG(c.seed, c.seed*7)), b: b, name: name,
		board: board, batcher: batcher, clock: clock, c: c, periods: map[string]map[string]lmVal{},
		data: map[string]string{}, ids: map[string]string{}}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("ops:\n%s", strings.Join(r.log, "\n"))
		}
	})
	for i := range steps {
		if i > 0 && i%(steps/4) == 0 {
			clock.Set(clock.Now().Add(25 * time.Hour))
			r.logf("clock -> next day")
		} else {
			clock.Set(clock.Now().Add(time.Duration(r.rng.IntN(3)) * 700 * time.Millisecond))
		}
		r.step()
		if i%25 == 24 {
			r.check(fmt.Sprintf("step %d", i))
		}
	}
	r.check("end")
	reports, err := board.Verify(r.ctx)
	require.NoError(t, err)
	for _, rep := range reports {
		require.True(t, rep.Clean(), "Verify %+v", rep)
	}
	// A Rebuild over the board keeps its data.
	_, err = board.Rebuild(r.ctx)
	require.NoError(t, err)
	r.check("after Rebuild over the board")
	// A wipe keeps no data: a Rebuild brings scores back without it.
	b.Wipe(t, name)
	r.data = map[string]string{}
	rep, err := board.Rebuild(r.ctx)
	require.NoError(t, err)
	require.Empty(t, rep.Refused)
	r.check("after Rebuild")
	// The same from the log's aggregation, the kept standings set aside.
	_, err = s.pool.Exec(r.ctx, "UPDATE "+s.tKeptPeriods+" SET complete = false WHERE board = $1", name)
	require.NoError(t, err)
	b.Wipe(t, name)
	_, err = board.Rebuild(r.ctx)
	require.NoError(t, err)
	r.check("after Rebuild from the log")
	for id, mem := range r.ids {
		res, err := board.Submit(r.ctx, mem, 1, leaderboard.WithID(id))
		require.NoError(t, err)
		require.True(t, res.Duplicate, "retry of %q after Rebuild", id)
	}
	r.check("retries after Rebuild")
}

func lmBoard(t *testing.T, b *testredis.Backend, s *Store, c smCombo, name string, clock *smClock) *leaderboard.Leaderboard {
	opts := []leaderboard.Option{
		leaderboard.WithStore(s), leaderboard.WithPolicy(c.policy), leaderboard.WithOrder(c.order),
		leaderboard.WithRanking(c.rank), leaderboard.WithWindows(leaderboard.AllTime(), leaderboard.Daily()),
		leaderboard.WithRetention(lmRetention), leaderboard.WithClock(clock.Now),
	}
	if c.tb != "" {
		o := leaderboard.TimeOrder{Epoch: smDay1.Add(-10 * 24 * time.Hour), Resolution: time.Millisecond, MaxScore: 1000, Decimals: 2}
		tbf := leaderboard.EarlierFirst
		if c.tb == "later" {
			tbf = leaderboard.LaterFirst
		}
		tb, err := tbf(o)
		require.NoError(t, err)
		opts = append(opts, leaderboard.WithTieBreak(tb))
	}
	if c.shards != nil {
		opts = append(opts, leaderboard.WithShards(c.shards...))
	}
	board, err := leaderboard.New(b.Client, name, opts...)
	require.NoError(t, err)
	return board
}
