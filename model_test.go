package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// The model test drives a board with a random workload and compares every
// answer with a plain Go model: one map member->score per window period,
// sorted on demand.

// modelDay1 is noon UTC some two months ahead, whenever the test runs: a real
// Redis expires keys by its own clock, so a board dated in the past would lose
// its daily keys under the test. The workload does not depend on the date.
var (
	modelDay1 = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 2, 0).Add(12 * time.Hour)
	modelDay2 = modelDay1.Add(24 * time.Hour)
)

// modelPool holds members that differ only in case or length, so the byte
// order of ties is exercised.
var modelPool = []string{
	"a", "A", "aa", "aA", "Aa", "ab", "b", "B", "ba", "bb",
	"player:1", "player:9", "player:10", "player:100", "player:2",
	"z", "Z", "zz", "zZ", "üben", "x-1", "x_1", "0", "00", "9",
}

// modelUnknown are names never submitted.
var modelUnknown = []string{"ghost", "nobody", "a0", "player:11"}

// modelScores are few, so ties are frequent.
var modelScores = []float64{
	-5, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5,
	0.5, 2.25, -1e-3, 1e15,
}

const (
	modelSteps      = 300
	modelCheckEvery = 25
)

type modelCombo struct {
	policy     lb.Policy
	policyName string
	order      lb.Order
	orderName  string
	rank       lb.RankMode
	rankName   string
	nextDay    bool
	seed       uint64
	// hot is WithHotTop's k; 0 for none.
	hot int
	// replica: WithReplicaReads; twoStep: WithTwoStepAround.
	replica, twoStep bool
}

func modelCombos() []modelCombo {
	policies := []struct {
		p    lb.Policy
		name string
	}{{lb.KeepBest, "KeepBest"}, {lb.Replace, "Replace"}, {lb.Accumulate, "Accumulate"}}
	orders := []struct {
		o    lb.Order
		name string
	}{{lb.HighestFirst, "HighestFirst"}, {lb.LowestFirst, "LowestFirst"}}
	ranks := []struct {
		r    lb.RankMode
		name string
	}{{lb.Ordinal, "Ordinal"}, {lb.Competition, "Competition"}}
	var out []modelCombo
	for pi, p := range policies {
		for oi, o := range orders {
			for ri, r := range ranks {
				i := pi*4 + oi*2 + ri
				out = append(out, modelCombo{
					policy: p.p, policyName: p.name,
					order: o.o, orderName: o.name,
					rank: r.r, rankName: r.name,
					// Half the combos move to the next day half-way; every
					// policy and order gets both variants.
					nextDay: (pi+oi+ri)%2 == 1,
					seed:    uint64(1000 + i),
					// Half the combos keep a hot top of 5 (WithHotTop): every
					// Top, Range and Page within it reads the mirror.
					hot: 5 * (i % 2),
					// A quarter more read as for replicas (WithReplicaReads),
					// with and without a hot top.
					replica: (i/2)%2 == 1,
					twoStep: i%3 == 0,
				})
			}
		}
	}
	return out
}

func (c modelCombo) name() string {
	day := "oneDay"
	if c.nextDay {
		day = "nextDay"
	}
	name := c.policyName + "/" + c.orderName + "/" + c.rankName + "/" + day
	if c.hot > 0 {
		name += fmt.Sprintf("/hot%d", c.hot)
	}
	if c.replica {
		name += "/replicaReads"
	}
	if c.twoStep {
		name += "/twoStepAround"
	}
	return name
}

// ---- the model ----

type modelEntry struct {
	member string
	score  float64
}

type model struct {
	policy lb.Policy
	order  lb.Order
	rank   lb.RankMode
	// boards maps "alltime" and "daily/<date>" to member->score.
	boards map[string]map[string]float64
	// data is the members' data (WithData, SetData): the board's, no
	// window's.
	data map[string]string
}

// modelData is the data the model test sets: names, JSON, bytes that are
// no text, a NUL, and the longest a board takes.
var modelData = []string{"Ana", "名前 ✓", `{"name":"Bo","lvl":7}`, "a\x00b", "\xff\xfe", strings.Repeat("d", lb.MaxDataLen)}

// withData fills es's Data from the model.
func (m *model) withData(es []lb.Entry) []lb.Entry {
	out := make([]lb.Entry, len(es))
	for i, e := range es {
		e.Data = m.data[e.Member]
		out[i] = e
	}
	return out
}

func newModel(c modelCombo) *model {
	return &model{policy: c.policy, order: c.order, rank: c.rank, boards: map[string]map[string]float64{}, data: map[string]string{}}
}

func modelDayKey(t time.Time) string { return "daily/" + t.UTC().Format("2006-01-02") }

// keys returns the model boards a write at now touches, in window order.
func (m *model) keys(now time.Time) []string { return []string{"alltime", modelDayKey(now)} }

func (m *model) board(key string) map[string]float64 {
	b := m.boards[key]
	if b == nil {
		b = map[string]float64{}
		m.boards[key] = b
	}
	return b
}

// better reports whether score a ranks strictly ahead of score b.
func (m *model) better(a, b float64) bool {
	if m.order == lb.LowestFirst {
		return a < b
	}
	return a > b
}

// sorted returns a board in read order: score, then member bytes (descending
// for HighestFirst as ZREVRANGE does, ascending for LowestFirst).
func (m *model) sorted(b map[string]float64) []modelEntry {
	out := make([]modelEntry, 0, len(b))
	for k, v := range b {
		out = append(out, modelEntry{k, v})
	}
	sort.Slice(out, func(i, j int) bool {
		a, c := out[i], out[j]
		if a.score != c.score {
			return m.better(a.score, c.score)
		}
		if m.order == lb.LowestFirst {
			return a.member < c.member
		}
		return a.member > c.member
	})
	return out
}

// ranked turns a sorted list into entries with ranks.
func (m *model) ranked(s []modelEntry) []lb.Entry {
	out := make([]lb.Entry, len(s))
	for i, e := range s {
		r := int64(i + 1)
		if m.rank == lb.Competition && i > 0 && s[i-1].score == e.score {
			r = out[i-1].Rank
		}
		out[i] = lb.Entry{Member: e.member, Score: e.score, Rank: r}
	}
	return out
}

func (m *model) entries(key string) []lb.Entry {
	return m.ranked(m.sorted(m.boards[key]))
}

// standing is the member's standing on a board, ok=false if not ranked.
func (m *model) standing(key, member string) (lb.Standing, bool) {
	es := m.entries(key)
	for i, e := range es {
		if e.Member != member {
			continue
		}
		total := int64(len(es))
		st := lb.Standing{Entry: e, Total: total}
		if total == 1 {
			st.Percentile = 100
			return st, true
		}
		below := total - e.Rank
		if m.rank == lb.Competition {
			below = 0
			for _, o := range es[i+1:] {
				if m.better(e.Score, o.Score) {
					below++
				}
			}
		}
		st.Percentile = float64(below) / float64(total-1) * 100
		return st, true
	}
	return lb.Standing{}, false
}

// apply submits one score to every window at now and returns the expected
// result per window (in window order).
func (m *model) apply(now time.Time, member string, score float64) []lb.WindowResult {
	var out []lb.WindowResult
	for _, key := range m.keys(now) {
		wr := lb.WindowResult{Previous: lb.Entry{Member: member}}
		if st, ok := m.standing(key, member); ok {
			wr.Previous = st.Entry
		}
		b := m.board(key)
		old, present := b[member]
		next := score
		if present {
			switch m.policy {
			case lb.Replace:
				next = score
			case lb.Accumulate:
				next = old + score
			default:
				next = old
				if m.better(score, old) {
					next = score
				}
			}
		}
		b[member] = next
		wr.Changed = !present || next != old
		wr.Standing, _ = m.standing(key, member)
		out = append(out, wr)
	}
	return out
}

// remove removes members from every readable period at now: all time,
// today, and yesterday (the default retention of one period).
func (m *model) remove(now time.Time, members ...string) {
	for _, key := range append(m.keys(now), modelDayKey(now.Add(-24*time.Hour))) {
		for _, mem := range members {
			delete(m.board(key), mem)
		}
	}
	for _, mem := range members {
		delete(m.data, mem)
	}
}

// among is the expected answer of Among.
func (m *model) among(key string, members []string) []lb.Entry {
	want := map[string]bool{}
	for _, mem := range members {
		want[mem] = true
	}
	var s []modelEntry
	for _, e := range m.sorted(m.boards[key]) {
		if want[e.member] {
			s = append(s, e)
		}
	}
	return m.ranked(s)
}

// between is the expected answer of Between: the first n ranked entries
// with lo <= score <= hi.
func (m *model) between(key string, lo, hi float64, n int) []lb.Entry {
	var out []lb.Entry
	for _, e := range m.entries(key) {
		if e.Score >= lo && e.Score <= hi && len(out) < n {
			out = append(out, e)
		}
	}
	return out
}

// aroundScore is the expected answer of AroundScore: 1 + the members
// strictly better than x, and the entries at r-radius .. r+radius-1.
func (m *model) aroundScore(key string, x float64, radius int) (int64, []lb.Entry) {
	all := m.entries(key)
	better := 0
	for _, e := range all {
		if m.better(e.Score, x) {
			better++
		}
	}
	return int64(better) + 1, all[max(0, better-radius):min(len(all), better+radius)]
}

// ---- the run ----

type modelRun struct {
	*modelHarness
	board *lb.Leaderboard
	m     *model
	clock *testClock
	combo modelCombo
	// periods seen in Submit results, per window name.
	periods map[string]map[string]bool
}

// member draws a pool member: removes and the new day keep some pool members
// absent at checks.
func (r *modelRun) member() string { return pick(r.modelHarness, modelPool) }

func (r *modelRun) score() float64 {
	// 1e15 is rare so Accumulate totals stay far from 2^53.
	for {
		s := modelScores[r.rng.IntN(len(modelScores))]
		if s != 1e15 || r.rng.IntN(4) == 0 {
			return s
		}
	}
}

func (r *modelRun) submit() {
	t := r.t
	mem, sc := r.member(), r.score()
	var opts []lb.SubmitOption
	data := ""
	if r.rng.IntN(3) == 0 {
		data = pick(r.modelHarness, append([]string{""}, modelData...))
		opts = append(opts, lb.WithData(data))
	}
	r.logf("Submit(%q, %v, WithData(%.20q))", mem, sc, data)
	got, err := r.board.Submit(r.ctx, mem, sc, opts...)
	require.NoError(t, err, "%s Submit(%q, %v)", r.where(), mem, sc)
	want := r.m.apply(r.clock.Now(), mem, sc)
	if data != "" {
		r.m.data[mem] = data
	}
	require.Len(t, got.Windows, len(want), "%s Submit(%q, %v) windows", r.where(), mem, sc)
	for i, w := range want {
		g := got.Windows[i]
		msg := fmt.Sprintf("%s Submit(%q, %v) window %d (%s %s)", r.where(), mem, sc, i, g.Window, g.Period)
		require.Equal(t, w.Previous, g.Previous, "%s Previous", msg)
		requireStanding(t, w.Standing, g.Standing, msg+" Standing")
		require.Equal(t, w.Changed, g.Changed, "%s Changed", msg)
		require.False(t, g.Closed, "%s Closed", msg)
		if r.periods[g.Window] == nil {
			r.periods[g.Window] = map[string]bool{}
		}
		r.periods[g.Window][g.Period] = true
	}
	require.Equal(t, "alltime", got.Windows[0].Window, "%s window 0", r.where())
	require.Equal(t, "daily", got.Windows[1].Window, "%s window 1", r.where())
	require.Equal(t, "alltime", got.Windows[0].Period, "%s alltime period", r.where())
	require.Equal(t, r.clock.Now().Format("2006-01-02"), got.Windows[1].Period, "%s daily period", r.where())
	requireStanding(t, want[0].Standing, got.Standing, r.where()+" Result.Standing")
	require.Equal(t, want[0].Previous, got.Previous, "%s Result.Previous", r.where())
	require.Equal(t, want[0].Changed, got.Changed, "%s Result.Changed", r.where())
}

func (r *modelRun) submitMany() {
	n := 1 + r.rng.IntN(6)
	batch := map[string]float64{}
	for range n {
		batch[r.member()] = r.score()
	}
	r.logf("SubmitMany(%v)", batch)
	require.NoError(r.t, r.board.SubmitMany(r.ctx, batch), "%s SubmitMany(%v)", r.where(), batch)
	now := r.clock.Now()
	for mem, sc := range batch {
		r.m.apply(now, mem, sc)
	}
}

// reset empties the current period of one window; the data stays.
func (r *modelRun) reset() {
	now := r.clock.Now()
	key, q := "alltime", lb.In(lb.AllTime())
	if r.rng.IntN(2) == 0 {
		key, q = modelDayKey(now), lb.In(lb.Daily())
	}
	r.logf("Reset(%s)", key)
	require.NoError(r.t, r.board.Reset(r.ctx, q), "%s Reset(%s)", r.where(), key)
	delete(r.m.boards, key)
}

// deleteBoard deletes the whole board: every readable period and the data.
func (r *modelRun) deleteBoard() {
	r.logf("Delete()")
	require.NoError(r.t, r.board.Delete(r.ctx), "%s Delete", r.where())
	r.m.boards = map[string]map[string]float64{}
	r.m.data = map[string]string{}
}

// setData sets or clears a member's data, ranked or not.
func (r *modelRun) setData() {
	mem := r.member()
	if r.rng.IntN(4) == 0 {
		mem = pick(r.modelHarness, modelUnknown)
	}
	data := pick(r.modelHarness, append([]string{""}, modelData...))
	r.logf("SetData(%q, %.20q)", mem, data)
	require.NoError(r.t, r.board.SetData(r.ctx, mem, data), "%s SetData(%q)", r.where(), mem)
	if data == "" {
		delete(r.m.data, mem)
	} else {
		r.m.data[mem] = data
	}
}

// set corrects one member's score in one window's current period.
func (r *modelRun) set() {
	key, q := r.window()
	mem, sc := r.member(), r.score()
	r.logf("Set(%q, %v, %s)", mem, sc, key)
	require.NoError(r.t, r.board.Set(r.ctx, mem, sc, q), "%s Set(%q, %v)", r.where(), mem, sc)
	r.m.board(key)[mem] = sc
}

// removeBetween removes a score range from one window's current period;
// the data stays.
func (r *modelRun) removeBetween() {
	key, q := r.window()
	lo, hi := r.scoreRange()
	r.logf("RemoveBetween(%v, %v, %s)", lo, hi, key)
	n, err := r.board.RemoveBetween(r.ctx, lo, hi, q)
	require.NoError(r.t, err, "%s RemoveBetween(%v, %v)", r.where(), lo, hi)
	b := r.m.board(key)
	var want int64
	for mem, sc := range b {
		if sc >= lo && sc <= hi {
			delete(b, mem)
			want++
		}
	}
	require.Equal(r.t, want, n, "%s RemoveBetween(%v, %v) removed", r.where(), lo, hi)
}

// window draws the all-time or the daily window, with its model key now.
func (r *modelRun) window() (string, lb.Query) {
	if r.rng.IntN(2) == 0 {
		return modelDayKey(r.clock.Now()), lb.In(lb.Daily())
	}
	return "alltime", lb.In(lb.AllTime())
}

// modelBounds are score bounds: the model's scores, scores between them,
// and the open ends.
var modelBounds = []float64{math.Inf(-1), -4, -1.5, -1e-3, 0, 0.25, 1, 2.25, 3, 5, 1e15, math.Inf(1)}

// scoreRange draws lo <= hi from modelBounds.
func (r *modelRun) scoreRange() (float64, float64) {
	a, b := pick(r.modelHarness, modelBounds), pick(r.modelHarness, modelBounds)
	return min(a, b), max(a, b)
}

func (r *modelRun) remove() {
	ms := r.members(modelPool, modelUnknown, 3)
	r.logf("Remove(%q)", ms)
	require.NoError(r.t, r.board.Remove(r.ctx, ms...), "%s Remove(%q)", r.where(), ms)
	r.m.remove(r.clock.Now(), ms...)
}

func requireStanding(t *testing.T, want, got lb.Standing, msg string) {
	t.Helper()
	require.Equal(t, want.Entry, got.Entry, "%s entry", msg)
	require.Equal(t, want.Total, got.Total, "%s total", msg)
	require.InDelta(t, want.Percentile, got.Percentile, 1e-9, "%s percentile", msg)
}

// view is one way to query the board and the model board it must match.
type modelView struct {
	name string
	key  string
	q    []lb.Query
	// frozen views (a closed day) no longer change: between full checks a
	// Count and Top(1000) show that nothing touched them.
	frozen bool
}

func (r *modelRun) views() []modelView {
	now := r.clock.Now()
	vs := []modelView{
		{name: "default", key: "alltime"},
		{name: "daily", key: modelDayKey(now), q: []lb.Query{lb.In(lb.Daily())}},
	}
	if !now.Equal(modelDay1) {
		vs = append(vs, modelView{name: "daily@day1", key: modelDayKey(modelDay1), frozen: true,
			q: []lb.Query{lb.In(lb.Daily()), lb.At(modelDay1)}})
	}
	return vs
}

// checkAll compares every view with the model; full also runs every check
// on frozen views.
func (r *modelRun) checkAll(full bool) {
	for _, v := range r.views() {
		if v.frozen && !full {
			r.checkCheap(v)
			continue
		}
		r.check(v)
	}
	// The all-time window named explicitly, and at another time, is the
	// default one.
	want := r.m.entries("alltime")
	for _, q := range [][]lb.Query{
		{lb.In(lb.AllTime())},
		{lb.In(lb.AllTime()), lb.At(modelDay1.Add(-72 * time.Hour))},
	} {
		got, err := r.board.Top(r.ctx, 1000, q...)
		require.NoError(r.t, err, "%s Top(1000) in alltime", r.where())
		requireEntries(r.t, want, got, r.where()+" Top(1000) In(AllTime())")
	}
	r.checkPeriods()
}

// checkPeriods requires Periods to list, per window, the model's readable
// periods with their counts: all time; today and yesterday (the default
// retention of one period), yesterday with 0 when nobody played.
func (r *modelRun) checkPeriods() {
	now := r.clock.Now()
	all, err := r.board.Periods(r.ctx)
	require.NoError(r.t, err, "%s Periods", r.where())
	require.Equal(r.t, []lb.PeriodInfo{{Period: lb.AllTime().Period(now), Members: int64(len(r.m.board("alltime")))}}, all, "%s Periods", r.where())
	days, err := r.board.Periods(r.ctx, lb.In(lb.Daily()))
	require.NoError(r.t, err, "%s Periods(In(Daily))", r.where())
	var want []lb.PeriodInfo
	for _, t := range []time.Time{now, now.Add(-24 * time.Hour)} {
		want = append(want, lb.PeriodInfo{Period: lb.Daily().Period(t), Members: int64(len(r.m.board(modelDayKey(t))))})
	}
	require.Equal(r.t, want, days, "%s Periods(In(Daily))", r.where())
}

func (r *modelRun) checkCheap(v modelView) {
	where := r.where() + " view=" + v.name
	want := r.m.entries(v.key)
	n, err := r.board.Count(r.ctx, v.q...)
	require.NoError(r.t, err, "%s Count", where)
	require.Equal(r.t, int64(len(want)), n, "%s Count", where)
	got, err := r.board.Top(r.ctx, 1000, v.q...)
	require.NoError(r.t, err, "%s Top(1000)", where)
	requireEntries(r.t, want, got, where+" Top(1000)")
}

func requireEntries(t *testing.T, want, got []lb.Entry, msg string) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	require.Equal(t, want, got, msg)
}

func (r *modelRun) check(v modelView) {
	t, ctx, board := r.t, r.ctx, r.board
	where := r.where() + " view=" + v.name
	all := r.m.entries(v.key)
	total := int64(len(all))

	n, err := board.Count(ctx, v.q...)
	require.NoError(t, err, "%s Count", where)
	require.Equal(t, total, n, "%s Count", where)

	for _, k := range []int{1, 10, 1000} {
		got, err := board.Top(ctx, k, v.q...)
		require.NoError(t, err, "%s Top(%d)", where, k)
		requireEntries(t, all[:min(k, len(all))], got, fmt.Sprintf("%s Top(%d)", where, k))
	}

	for _, mem := range append(append([]string{}, modelPool...), modelUnknown...) {
		got, err := board.Rank(ctx, mem, v.q...)
		want, ok := r.m.standing(v.key, mem)
		if !ok {
			require.ErrorIs(t, err, lb.ErrNotRanked, "%s Rank(%q) of an unranked member", where, mem)
			continue
		}
		require.NoError(t, err, "%s Rank(%q)", where, mem)
		requireStanding(t, want, got, fmt.Sprintf("%s Rank(%q)", where, mem))
	}

	r.checkRanks(v, where, append(append([]string{}, modelPool...), modelUnknown...), total)
	for _, fr := range [][2]int64{{1, 1}, {4, 20}, {2, total + 3}, {total, total + 5}, {total + 1, total + 2}} {
		if fr[0] < 1 || fr[1] < fr[0] {
			continue
		}
		got, err := board.Range(ctx, fr[0], fr[1], v.q...)
		require.NoError(t, err, "%s Range(%d, %d)", where, fr[0], fr[1])
		lo, hi := min(fr[0]-1, total), min(fr[1], total)
		requireEntries(t, all[lo:hi], got, fmt.Sprintf("%s Range(%d, %d)", where, fr[0], fr[1]))
	}
	for _, pct := range modelPercents {
		got, err := board.Cutoff(ctx, pct, v.q...)
		if total == 0 {
			require.ErrorIs(t, err, lb.ErrNotRanked, "%s Cutoff(%v) of an empty period", where, pct)
			continue
		}
		require.NoError(t, err, "%s Cutoff(%v)", where, pct)
		require.Equal(t, all[cutoffAt(total, pct)-1], got, "%s Cutoff(%v)", where, pct)
	}
	r.checkAround(v, where, all)
	r.checkScores(v, where, all)
	r.checkWithData(v, where, all)

	for _, size := range []int{1, 3, 7} {
		var walked []lb.Entry
		pages := (len(all) + size - 1) / size
		for num := 1; num <= pages+1; num++ {
			p, err := board.Page(ctx, num, size, v.q...)
			require.NoError(t, err, "%s Page(%d, %d)", where, num, size)
			require.Equal(t, num, p.Number, "%s Page(%d, %d).Number", where, num, size)
			require.Equal(t, size, p.Size, "%s Page(%d, %d).Size", where, num, size)
			require.Equal(t, total, p.Total, "%s Page(%d, %d).Total", where, num, size)
			lo := min((num-1)*size, len(all))
			hi := min(lo+size, len(all))
			requireEntries(t, all[lo:hi], p.Entries, fmt.Sprintf("%s Page(%d, %d)", where, num, size))
			walked = append(walked, p.Entries...)
		}
		requireEntries(t, all, walked, fmt.Sprintf("%s page walk of size %d", where, size))
	}

	for range 2 {
		k := 1 + r.rng.IntN(8)
		var ms []string
		for range k {
			switch r.rng.IntN(5) {
			case 0:
				ms = append(ms, modelUnknown[r.rng.IntN(len(modelUnknown))])
			case 1:
				if len(ms) > 0 { // a duplicate
					ms = append(ms, ms[r.rng.IntN(len(ms))])
					continue
				}
				fallthrough
			default:
				ms = append(ms, r.member())
			}
		}
		got, err := board.Among(ctx, ms, v.q...)
		require.NoError(t, err, "%s Among(%q)", where, ms)
		requireEntries(t, r.m.among(v.key, ms), got, fmt.Sprintf("%s Among(%q)", where, ms))
		r.checkRanks(v, where, ms, total)
	}
}

// checkWithData reads the view with IncludeData every way and requires the
// model's entries with their members' data (the reads without it, above,
// require Data to be empty).
func (r *modelRun) checkWithData(v modelView, where string, all []lb.Entry) {
	t, ctx, board := r.t, r.ctx, r.board
	q := append(slices.Clone(v.q), lb.IncludeData())
	where += " IncludeData"
	want := r.m.withData(all)
	top, err := board.Top(ctx, 1000, q...)
	require.NoError(t, err, where)
	requireEntries(t, want, top, where+" Top(1000)")
	p, err := board.Page(ctx, 2, 3, q...)
	require.NoError(t, err, where)
	requireEntries(t, want[min(3, len(want)):min(6, len(want))], p.Entries, where+" Page(2, 3)")
	rg, err := board.Range(ctx, 2, 9, q...)
	require.NoError(t, err, where)
	requireEntries(t, want[min(1, len(want)):min(9, len(want))], rg, where+" Range(2, 9)")
	if len(want) > 0 {
		c, err := board.Cutoff(ctx, 40, q...)
		require.NoError(t, err, where)
		require.Equal(t, want[cutoffAt(int64(len(want)), 40)-1], c, where+" Cutoff(40)")
	}
	if len(all) > 0 {
		pos := len(all) / 2
		es, err := board.Around(ctx, all[pos].Member, 1, q...)
		require.NoError(t, err, where)
		start := min(max(pos-1, 0), max(0, len(all)-3))
		requireEntries(t, want[start:min(start+3, len(all))], es, where+" Around")
		st, err := board.Rank(ctx, all[pos].Member, q...)
		require.NoError(t, err, where)
		require.Equal(t, want[pos], st.Entry, "%s Rank(%q)", where, all[pos].Member)
	}
	bt, err := board.Between(ctx, math.Inf(-1), math.Inf(1), 5, q...)
	require.NoError(t, err, where)
	requireEntries(t, want[:min(5, len(want))], bt, where+" Between(-Inf, +Inf, 5)")
	place, as, err := board.AroundScore(ctx, 0.25, 2, q...)
	require.NoError(t, err, where)
	_, asWant := r.m.aroundScore(v.key, 0.25, 2)
	require.Equal(t, r.m.withData(asWant), as, "%s AroundScore(0.25, 2) at %d", where, place)
	var walked []lb.Entry
	for e, err := range board.All(ctx, q...) {
		require.NoError(t, err, where)
		walked = append(walked, e)
	}
	requireEntries(t, want, walked, where+" All")
	ms := append(append([]string{}, modelPool[:6]...), modelUnknown...)
	sts, err := board.Ranks(ctx, ms, q...)
	require.NoError(t, err, where)
	for i, m := range ms {
		require.Equal(t, m, sts[i].Member, where)
		require.Equal(t, r.m.data[m], sts[i].Data, "%s Ranks(%q): data, also of a member without a score", where, m)
	}
	among, err := board.Among(ctx, ms, q...)
	require.NoError(t, err, where)
	requireEntries(t, r.m.withData(r.m.among(v.key, ms)), among, where+" Among")
}

// checkScores compares the reads by score, and the walk of All, with the
// model.
func (r *modelRun) checkScores(v modelView, where string, all []lb.Entry) {
	t, ctx, board := r.t, r.ctx, r.board
	for range 3 {
		lo, hi := r.scoreRange()
		for _, n := range []int{1, 3, lb.MaxN} {
			got, err := board.Between(ctx, lo, hi, n, v.q...)
			require.NoError(t, err, "%s Between(%v, %v, %d)", where, lo, hi, n)
			requireEntries(t, r.m.between(v.key, lo, hi, n), got, fmt.Sprintf("%s Between(%v, %v, %d)", where, lo, hi, n))
		}
		c, err := board.CountBetween(ctx, lo, hi, v.q...)
		require.NoError(t, err, "%s CountBetween(%v, %v)", where, lo, hi)
		require.Equal(t, int64(len(r.m.between(v.key, lo, hi, len(all)+1))), c, "%s CountBetween(%v, %v)", where, lo, hi)
	}
	for range 3 {
		x := pick(r.modelHarness, append(slices.Clone(modelScores), -1.5, 0.25, 7, -9))
		for _, radius := range []int{0, 1, 2, 30} {
			place, got, err := board.AroundScore(ctx, x, radius, v.q...)
			require.NoError(t, err, "%s AroundScore(%v, %d)", where, x, radius)
			wantPlace, want := r.m.aroundScore(v.key, x, radius)
			require.Equal(t, wantPlace, place, "%s AroundScore(%v, %d) place", where, x, radius)
			requireEntries(t, want, got, fmt.Sprintf("%s AroundScore(%v, %d)", where, x, radius))
		}
	}
	var walked []lb.Entry
	for e, err := range board.All(ctx, v.q...) {
		require.NoError(t, err, "%s All", where)
		walked = append(walked, e)
	}
	requireEntries(t, all, walked, where+" All")
}

// modelPercents are the Cutoff percents the model tests read.
var modelPercents = []float64{1e-9, 1, 10, 100.0 / 3, 50, 99.99, 100}

// cutoffAt is Cutoff's position, as the spec says: ceil(total*percent/100),
// at least 1, computed exactly, where a product within 2^-51 of a whole
// number is that number (the float64 a decimal or a third is stored as
// strays by less: 100.0/3 percent of 3 members is 1 of them).
func cutoffAt(total int64, percent float64) int64 {
	x := new(big.Rat).SetFloat64(percent)
	x.Mul(x, big.NewRat(total, 100))
	n := new(big.Int).Quo(x.Num(), x.Denom()) // floor: x > 0
	for _, whole := range []*big.Int{n, new(big.Int).Add(n, big.NewInt(1))} {
		w := new(big.Rat).SetInt(whole)
		gap := new(big.Rat).Sub(x, w)
		if gap.Abs(gap).Cmp(w.Mul(w, big.NewRat(1, 1<<51))) <= 0 {
			return max(1, whole.Int64())
		}
	}
	return max(1, n.Int64()+1)
}

// checkRanks requires Ranks to give each member its model standing, in the
// order asked (repeats too), and an unranked member its name and the total.
func (r *modelRun) checkRanks(v modelView, where string, ms []string, total int64) {
	got, err := r.board.Ranks(r.ctx, ms, v.q...)
	require.NoError(r.t, err, "%s Ranks(%q)", where, ms)
	require.Len(r.t, got, len(ms), "%s Ranks(%q)", where, ms)
	for i, m := range ms {
		want, ok := r.m.standing(v.key, m)
		if !ok {
			want = lb.Standing{Entry: lb.Entry{Member: m}, Total: total}
		}
		requireStanding(r.t, want, got[i], fmt.Sprintf("%s Ranks(%q)[%d]", where, ms, i))
	}
}

func (r *modelRun) checkAround(v modelView, where string, all []lb.Entry) {
	t := r.t
	_, err := r.board.Around(r.ctx, modelUnknown[0], 1, v.q...)
	require.ErrorIs(t, err, lb.ErrNotRanked, "%s Around(%q) of an unranked member", where, modelUnknown[0])
	if len(all) == 0 {
		return
	}
	total := len(all)
	for _, pos := range []int{0, total - 1, total / 2} {
		mem := all[pos].Member
		for _, radius := range []int{0, 1, 3, total + 2} {
			width := 2*radius + 1
			start := min(max(pos-radius, 0), max(0, total-width))
			end := min(start+width, total)
			got, err := r.board.Around(r.ctx, mem, radius, v.q...)
			require.NoError(t, err, "%s Around(%q, %d)", where, mem, radius)
			requireEntries(t, all[start:end], got, fmt.Sprintf("%s Around(%q, %d) at position %d", where, mem, radius, pos))
		}
	}
}

func newModelBoard(t *testing.T, b *testredis.Backend, c modelCombo, clock *testClock) *lb.Leaderboard {
	t.Helper()
	opts := []lb.Option{
		lb.WithPolicy(c.policy),
		lb.WithOrder(c.order),
		lb.WithRanking(c.rank),
		lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithClock(clock.Now),
	}
	if c.hot > 0 {
		opts = append(opts, lb.WithHotTop(c.hot))
	}
	if c.replica {
		opts = append(opts, lb.WithReplicaReads())
	}
	if c.twoStep {
		opts = append(opts, lb.WithTwoStepAround())
	}
	board, err := lb.New(b.Client, b.BoardName(t), opts...)
	require.NoError(t, err)
	return board
}

func TestModel(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range modelCombos() {
			t.Run(c.name(), func(t *testing.T) {
				t.Parallel()
				runModel(t, b, c)
			})
		}
	})
}

func runModel(t *testing.T, b *testredis.Backend, c modelCombo) {
	t.Logf("model run %s: seed=%d", c.name(), c.seed)
	clock := &testClock{now: modelDay1}
	r := &modelRun{
		modelHarness: newModelHarness(t, fmt.Sprintf("combo=%s seed=%d", c.name(), c.seed), c.seed, 0x9e3779b97f4a7c15),
		board:        newModelBoard(t, b, c, clock),
		m:            newModel(c),
		clock:        clock,
		combo:        c,
		periods:      map[string]map[string]bool{},
	}
	r.run(modelLoop{
		steps: modelSteps, checkEvery: modelCheckEvery,
		before: func() {
			if c.nextDay && r.step == modelSteps/2 {
				r.logf("clock -> %s", modelDay2.Format(time.RFC3339))
				clock.Set(modelDay2)
				r.checkAll(true)
			}
		},
		ops: []modelOp{{80, r.submit}, {11, r.submitMany}, {5, r.remove}, {4, r.setData}, {1, r.reset},
			{3, r.set}, {1, r.removeBetween}, {6, r.batchSubmit},
			{1, func() {
				if r.rng.IntN(3) == 0 { // rarer still: a board that empties often checks little
					r.deleteBoard()
				}
			}}},
		check: r.checkAll,
	})
	require.Len(t, r.periods["alltime"], 1, "alltime periods seen: %v", r.periods["alltime"])
	wantDays := 1
	if c.nextDay {
		wantDays = 2
	}
	require.Len(t, r.periods["daily"], wantDays, "daily periods seen: %v", r.periods["daily"])
}

// TestModelRoundTrips proves every read, Submit, SubmitMany and Remove costs
// one round trip, on each code path: plain commands (Ordinal), scripts
// (Competition) and the Accumulate scripts.
func TestModelRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range []modelCombo{
			{policy: lb.KeepBest, policyName: "KeepBest", rank: lb.Ordinal, rankName: "Ordinal"},
			{policy: lb.Replace, policyName: "Replace", rank: lb.Competition, rankName: "Competition"},
			{policy: lb.Accumulate, policyName: "Accumulate", rank: lb.Ordinal, rankName: "Ordinal"},
		} {
			t.Run(c.policyName+"/"+c.rankName, func(t *testing.T) {
				ctx := context.Background()
				board := newModelBoard(t, b, c, &testClock{now: modelDay1})
				for i, mem := range modelPool {
					_, err := board.Submit(ctx, mem, float64(i%5))
					require.NoError(t, err)
				}
				daily := lb.In(lb.Daily())
				ops := []struct {
					name string
					fn   func() error
				}{
					{"Submit", func() error { _, err := board.Submit(ctx, "a", 7); return err }},
					{"Submit new member", func() error { _, err := board.Submit(ctx, "ghost", 1); return err }},
					{"SubmitMany", func() error { return board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "new": 3}) }},
					{"Remove", func() error { return board.Remove(ctx, "ghost", "new", "nobody") }},
					{"Top", func() error { _, err := board.Top(ctx, 10); return err }},
					{"Top daily", func() error { _, err := board.Top(ctx, 10, daily); return err }},
					{"Rank", func() error { _, err := board.Rank(ctx, "b"); return err }},
					{"Rank unranked", func() error {
						_, err := board.Rank(ctx, "nobody")
						if errors.Is(err, lb.ErrNotRanked) {
							return nil
						}
						return fmt.Errorf("Rank(nobody) = %v, want ErrNotRanked", err)
					}},
					{"Around", func() error { _, err := board.Around(ctx, "b", 3); return err }},
					{"Around daily", func() error { _, err := board.Around(ctx, "b", 3, daily); return err }},
					{"Page", func() error { _, err := board.Page(ctx, 2, 5); return err }},
					{"Among", func() error { _, err := board.Among(ctx, []string{"a", "b", "nobody"}); return err }},
					{"Ranks", func() error { _, err := board.Ranks(ctx, []string{"a", "b", "nobody", "a"}); return err }},
					{"Periods", func() error { _, err := board.Periods(ctx, daily); return err }},
					{"Range", func() error { _, err := board.Range(ctx, 2, 7); return err }},
					{"Cutoff", func() error { _, err := board.Cutoff(ctx, 10); return err }},
					{"Between", func() error { _, err := board.Between(ctx, 1, 3, 10); return err }},
					{"CountBetween", func() error { _, err := board.CountBetween(ctx, 1, 3); return err }},
					{"AroundScore", func() error { _, _, err := board.AroundScore(ctx, 2.5, 3); return err }},
					{"All", func() error {
						for _, err := range board.All(ctx) {
							if err != nil {
								return err
							}
						}
						return nil
					}},
					{"Set", func() error { return board.Set(ctx, "a", 3) }},
					{"RemoveBetween", func() error { _, err := board.RemoveBetween(ctx, 3.5, 3.7); return err }},
					// Last: they empty the board.
					{"Reset", func() error { return board.Reset(ctx, daily) }},
					{"Delete", func() error { return board.Delete(ctx) }},
					{"Count", func() error { _, err := board.Count(ctx); return err }},
				}
				for _, op := range ops {
					// The warm-up loads the op's script, if any.
					require.NoError(t, op.fn(), "%s warm-up", op.name)
					before := b.Client.Calls()
					require.NoError(t, op.fn(), op.name)
					require.Equal(t, int64(1), b.Client.Calls()-before, "%s round trips", op.name)
				}
			})
		}
	})
}
