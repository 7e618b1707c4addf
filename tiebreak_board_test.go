package leaderboard_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// These tests drive tie-broken boards (EarlierFirst, LaterFirst) and compare
// them with a plain Go model that keeps, per member, the scaled score S
// (score × 10^Decimals, an integer) and the time slot ⌊(t − Epoch) /
// Resolution⌋ of the submission that set it, and sorts by (score, slot,
// name) under the board's order and the rule.

// tieEpoch is an Epoch a day before the tests run (whole hours, no monotonic
// reading), and tieNow the boards' clock: near time.Now(), as a real Redis
// expects, and after the Epoch. The boards use only the all-time window,
// whose key never expires.
var (
	tieEpoch = time.Now().UTC().Truncate(time.Hour).Add(-24 * time.Hour)
	tieNow   = tieEpoch.Add(23 * time.Hour)
)

func tieRuleName(later bool) string {
	if later {
		return "LaterFirst"
	}
	return "EarlierFirst"
}

func tieNew(t *testing.T, later bool, o lb.TimeOrder) lb.TieBreak {
	t.Helper()
	var tb lb.TieBreak
	var err error
	if later {
		tb, err = lb.LaterFirst(o)
	} else {
		tb, err = lb.EarlierFirst(o)
	}
	require.NoError(t, err, "%s(%+v)", tieRuleName(later), o)
	require.NotNil(t, tb)
	return tb
}

// ---- the model ----

// tieRow is one member in the model: scaled score and time slot.
type tieRow struct {
	member string
	s      int64
	slot   int64
}

// tieModel is one board's expected content.
type tieModel struct {
	high    bool
	later   bool
	rank    lb.RankMode
	policy  lb.Policy
	o       lb.TimeOrder
	scale   float64
	maxS    int64
	members map[string]tieRow
}

func newTieModel(order lb.Order, later bool, rank lb.RankMode, policy lb.Policy, o lb.TimeOrder) *tieModel {
	scale := math.Pow10(o.Decimals)
	return &tieModel{
		high: order == lb.HighestFirst, later: later, rank: rank, policy: policy, o: o,
		scale: scale, maxS: int64(math.Round(o.MaxScore * scale)), members: map[string]tieRow{},
	}
}

// scaled is S for a score the test knows to have at most Decimals digits.
func (m *tieModel) scaled(score float64) int64 { return int64(math.Round(score * m.scale)) }

// plain is the score S stands for, as the board must report it.
func (m *tieModel) plain(s int64) float64 { return float64(s) / m.scale }

func (m *tieModel) slot(t time.Time) int64 { return int64(t.Sub(m.o.Epoch) / m.o.Resolution) }

// betterScore reports whether scaled score a ranks strictly ahead of b.
func (m *tieModel) betterScore(a, b int64) bool {
	if m.high {
		return a > b
	}
	return a < b
}

// ahead reports whether row a comes before row b in read order.
func (m *tieModel) ahead(a, b tieRow) bool {
	if a.s != b.s {
		return m.betterScore(a.s, b.s)
	}
	if a.slot != b.slot {
		if m.later {
			return a.slot > b.slot
		}
		return a.slot < b.slot
	}
	if m.high {
		return a.member > b.member
	}
	return a.member < b.member
}

func (m *tieModel) sortRows(rows []tieRow) {
	slices.SortFunc(rows, func(a, b tieRow) int {
		switch {
		case m.ahead(a, b):
			return -1
		case m.ahead(b, a):
			return 1
		}
		return 0
	})
}

func (m *tieModel) sorted() []tieRow {
	rows := make([]tieRow, 0, len(m.members))
	for _, r := range m.members {
		rows = append(rows, r)
	}
	m.sortRows(rows)
	return rows
}

// ranked turns sorted rows into entries with ranks.
func (m *tieModel) ranked(rows []tieRow) []lb.Entry {
	out := make([]lb.Entry, len(rows))
	for i, r := range rows {
		rank := int64(i + 1)
		if m.rank == lb.Competition && i > 0 && rows[i-1].s == r.s {
			rank = out[i-1].Rank
		}
		out[i] = lb.Entry{Member: r.member, Score: m.plain(r.s), Rank: rank}
	}
	return out
}

func (m *tieModel) entries() []lb.Entry { return m.ranked(m.sorted()) }

// standing is a member's expected standing; ok=false when not ranked.
func (m *tieModel) standing(member string) (lb.Standing, bool) {
	rows := m.sorted()
	es := m.ranked(rows)
	for i, e := range es {
		if e.Member != member {
			continue
		}
		total := int64(len(es))
		st := lb.Standing{Entry: e, Total: total, Percentile: 100}
		if total > 1 {
			worse := total - e.Rank
			if m.rank == lb.Competition {
				worse = 0
				for _, o := range rows[i+1:] {
					if m.betterScore(rows[i].s, o.s) {
						worse++
					}
				}
			}
			st.Percentile = float64(worse) / float64(total-1) * 100
		}
		return st, true
	}
	return lb.Standing{}, false
}

// next is what the policy stores for member after a submission of scaled
// score s at slot; ok=false when the board must refuse it (an Accumulate
// total beyond MaxScore).
func (m *tieModel) next(member string, s, slot int64) (row tieRow, ok bool) {
	old, present := m.members[member]
	row = tieRow{member: member, s: s, slot: slot}
	if !present {
		return row, true
	}
	switch m.policy {
	case lb.Replace:
		return row, true
	case lb.Accumulate:
		if s == 0 {
			return old, true // adding 0 reaches no new total: its time stays
		}
		row.s = old.s + s
		return row, row.s <= m.maxS && row.s >= -m.maxS
	default: // KeepBest keeps the first time a best was reached
		if m.betterScore(s, old.s) || (s == old.s && slot < old.slot) {
			return row, true
		}
		return old, true
	}
}

// submit applies one Submit; ok=false when it must be refused.
func (m *tieModel) submit(member string, s, slot int64) (res lb.Result, ok bool) {
	row, ok := m.next(member, s, slot)
	if !ok {
		return lb.Result{}, false
	}
	res.Previous = lb.Entry{Member: member}
	old, present := m.members[member]
	if st, had := m.standing(member); had {
		res.Previous = st.Entry
	}
	m.members[member] = row
	res.Changed = !present || old.s != row.s
	res.Standing, _ = m.standing(member)
	return res, true
}

// submitMany applies a batch stamped at slot; ok=false (and nothing
// applied) when the board must refuse it.
func (m *tieModel) submitMany(batch map[string]int64, slot int64) bool {
	rows := make([]tieRow, 0, len(batch))
	for mem, s := range batch {
		row, ok := m.next(mem, s, slot)
		if !ok {
			return false
		}
		rows = append(rows, row)
	}
	for _, r := range rows {
		m.members[r.member] = r
	}
	return true
}

func (m *tieModel) among(members []string) []lb.Entry {
	want := map[string]bool{}
	for _, mem := range members {
		want[mem] = true
	}
	var rows []tieRow
	for _, r := range m.sorted() {
		if want[r.member] {
			rows = append(rows, r)
		}
	}
	return m.ranked(rows)
}

// ---- 1. the order property ----

// TestTieBreakOrderProperty loads thousands of distinct members with scores
// from a small set and times sharing few slots (Replace), through Submit
// WithTime (each result checked) and SubmitMany batches stamped by a clock
// set to a random time, then compares the whole board with the model's sort.
func TestTieBreakOrderProperty(t *testing.T) {
	o := lb.TimeOrder{Epoch: tieEpoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 2}
	scores := []float64{12.34, -0.5, 0, 99.99, 1e6, -1e6, 0.01, -12.34, 12.35, -0.01}
	combos := []struct {
		order lb.Order
		later bool
		rank  lb.RankMode
		seed  uint64
	}{
		// Each rule and order once under each rank mode: Ordinal Replace is a
		// transaction, Competition the submit script.
		{lb.HighestFirst, false, lb.Ordinal, 11},
		{lb.HighestFirst, true, lb.Competition, 12},
		{lb.LowestFirst, false, lb.Competition, 13},
		{lb.LowestFirst, true, lb.Ordinal, 14},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		// miniredis sorts a whole set for every rank: fewer members there.
		n := 2000
		if b.Mini != nil {
			n = 1000
		}
		for _, c := range combos {
			name := fmt.Sprintf("%v/%s/%v", c.order, tieRuleName(c.later), c.rank)
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				runTieOrderProperty(t, b, n, o, scores, c.order, c.later, c.rank, c.seed)
			})
		}
	})
}

func runTieOrderProperty(t *testing.T, b *testredis.Backend, n int, o lb.TimeOrder, scores []float64,
	order lb.Order, later bool, rank lb.RankMode, seed uint64) {
	ctx := context.Background()
	where := fmt.Sprintf("order=%v rule=%s rank=%v seed=%d", order, tieRuleName(later), rank, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	clock := &testClock{now: tieNow}
	board, _ := newBoard(t, b, lb.WithPolicy(lb.Replace), lb.WithOrder(order), lb.WithRanking(rank),
		lb.WithTieBreak(tieNew(t, later, o)), lb.WithClock(clock.Now))
	m := newTieModel(order, later, rank, lb.Replace, o)
	nowSlot := m.slot(tieNow)
	hot := []int64{0, nowSlot, nowSlot - 1}
	for range 37 {
		hot = append(hot, rng.Int64N(nowSlot+1))
	}
	randomTime := func() time.Time {
		var at time.Time
		switch x := rng.IntN(20); {
		case x == 0:
			at = tieEpoch
		case x == 1:
			at = tieNow
		case x < 14:
			at = tieEpoch.Add(time.Duration(hot[rng.IntN(len(hot))])*time.Second + time.Duration(rng.Int64N(int64(time.Second))))
		default:
			at = tieEpoch.Add(time.Duration(rng.Int64N(int64(tieNow.Sub(tieEpoch)) + 1)))
		}
		if at.After(tieNow) {
			at = tieNow
		}
		return at
	}
	seen := map[string]bool{}
	fresh := func() string {
		for {
			if mem := tieName(rng); !seen[mem] {
				seen[mem] = true
				return mem
			}
		}
	}

	for len(m.members) < n {
		if rng.IntN(6) == 0 {
			// A batch, stamped with the clock's now.
			at := randomTime()
			batch := map[string]float64{}
			for range min(1+rng.IntN(8), n-len(m.members)) {
				mem := fresh()
				batch[mem] = scores[rng.IntN(len(scores))]
				m.members[mem] = tieRow{member: mem, s: m.scaled(batch[mem]), slot: m.slot(at)}
			}
			clock.Set(at)
			require.NoError(t, board.SubmitMany(ctx, batch), "%s SubmitMany(%v) at %v", where, batch, at)
			clock.Set(tieNow)
			continue
		}
		mem, score, at := fresh(), scores[rng.IntN(len(scores))], randomTime()
		row := tieRow{member: mem, s: m.scaled(score), slot: m.slot(at)}
		m.members[mem] = row
		res, err := board.Submit(ctx, mem, score, lb.WithTime(at))
		msg := fmt.Sprintf("%s Submit(%q, %v, WithTime(%v)) as member %d", where, mem, score, at, len(m.members))
		require.NoError(t, err, msg)
		// Rank and total, counted without sorting.
		var aheadOf, better int64
		for _, r := range m.members {
			if m.ahead(r, row) {
				aheadOf++
			}
			if m.betterScore(r.s, row.s) {
				better++
			}
		}
		wantRank := aheadOf + 1
		if rank == lb.Competition {
			wantRank = better + 1
		}
		require.Equal(t, lb.Entry{Member: mem, Score: score, Rank: wantRank}, res.Entry, msg)
		require.Equal(t, int64(len(m.members)), res.Total, msg)
		require.True(t, res.Changed, msg)
		require.Equal(t, lb.Entry{Member: mem}, res.Previous, msg)
	}

	all := m.entries()
	require.Len(t, all, n)
	top, err := board.Top(ctx, 1000)
	require.NoError(t, err, where)
	require.Equal(t, all[:min(1000, n)], top, "%s Top(1000)", where)
	var walked []lb.Entry
	for num := 1; num <= n/1000+1; num++ {
		p, err := board.Page(ctx, num, 1000)
		require.NoError(t, err, "%s Page(%d, 1000)", where, num)
		require.Equal(t, int64(n), p.Total, "%s Page(%d, 1000).Total", where, num)
		walked = append(walked, p.Entries...)
	}
	require.Equal(t, all, walked, "%s page walk of size 1000", where)
	for _, e := range walked {
		// Entry.Score is the plain score exactly, never the composite.
		require.Contains(t, scores, e.Score, "%s %q", where, e.Member)
	}
	sample := make([]string, 0, 1000)
	for _, e := range all {
		if rng.IntN(2) == 0 && len(sample) < 1000 {
			sample = append(sample, e.Member)
		}
	}
	rng.Shuffle(len(sample), func(i, j int) { sample[i], sample[j] = sample[j], sample[i] })
	among, err := board.Among(ctx, sample)
	require.NoError(t, err, where)
	require.Equal(t, m.among(sample), among, "%s Among of %d members", where, len(sample))
}

// tieName is a random member name over an alphabet with case variants,
// digits, punctuation and a multi-byte letter, so byte order matters.
func tieName(rng *rand.Rand) string {
	const alphabet = "aAbBzZ0_:-"
	var sb strings.Builder
	for range 1 + rng.IntN(5) {
		if rng.IntN(15) == 0 {
			sb.WriteString("ü")
			continue
		}
		sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
	}
	return sb.String()
}

// ---- 2. the model-based run ----

// tieEncoding is one TimeOrder the model run uses, with scores it holds.
type tieEncoding struct {
	name   string
	order  lb.TimeOrder
	scores []float64
	start  time.Duration // the clock starts at Epoch + start
}

var tieEncodings = []tieEncoding{
	{
		// Resolution 1s, two decimals: 2^53/(1e5+1) slots would outlast a
		// time.Duration, so the slots are capped (292 years).
		name:   "1s/2dec/max1000",
		order:  lb.TimeOrder{Epoch: tieEpoch, Resolution: time.Second, MaxScore: 1000, Decimals: 2},
		scores: []float64{-1000, -99.99, -12.34, -0.5, 0, 0.01, 0.5, 12.34, 99.99, 1000, 0.1, 0.2},
		start:  20 * time.Hour,
	},
	{
		// Resolution 1ms, whole scores up to 1e5: composites reach 2^53.
		name:   "1ms/0dec/max1e5",
		order:  lb.TimeOrder{Epoch: tieEpoch, Resolution: time.Millisecond, MaxScore: 1e5, Decimals: 0},
		scores: []float64{-1e5, -99999, -7, -1, 0, 1, 2, 7, 99999, 1e5},
		start:  23 * time.Hour,
	},
	{
		// A Resolution of 7s from an Epoch off any whole second, one decimal.
		name:   "7s/1dec/max5e4",
		order:  lb.TimeOrder{Epoch: tieEpoch.Add(123456789), Resolution: 7 * time.Second, MaxScore: 5e4, Decimals: 1},
		scores: []float64{-5e4, -4999.9, -2, -0.1, 0, 0.1, 0.3, 1.5, 2, 4999.9, 5e4},
		start:  22 * time.Hour,
	},
}

var (
	tiePool    = []string{"a", "A", "b", "B", "ab", "aB", "Ab", "z", "Z", "zz", "p:1", "p:10", "p:2", "ü", "0", "00", "x-1", "x_1"}
	tieUnknown = []string{"ghost", "nobody", "p:3"}
)

const (
	tieModelSteps  = 200
	tieCheckEvery  = 20
	tieMaxClockRun = 3 // the clock moves up to this many Resolutions a step
)

type tieCombo struct {
	policy lb.Policy
	order  lb.Order
	later  bool
	rank   lb.RankMode
	enc    tieEncoding
	seed   uint64
	hot    int // WithHotTop's k; 0 for none
}

func (c tieCombo) name() string {
	name := fmt.Sprintf("%v/%v/%s/%v/%s", c.policy, c.order, tieRuleName(c.later), c.rank, c.enc.name)
	if c.hot > 0 {
		name += fmt.Sprintf("/hot%d", c.hot)
	}
	return name
}

// tieCombos is every policy × order × rule × rank mode; each policy, order
// and rule runs under two encodings (one per rank mode).
func tieCombos() []tieCombo {
	var out []tieCombo
	for pi, p := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
		for oi, o := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
			for li, later := range []bool{false, true} {
				for ri, r := range []lb.RankMode{lb.Ordinal, lb.Competition} {
					i := pi*8 + oi*4 + li*2 + ri
					out = append(out, tieCombo{
						policy: p, order: o, later: later, rank: r,
						enc:  tieEncodings[i%len(tieEncodings)],
						seed: uint64(7000 + i),
						hot:  4 * ((pi + oi + li) % 2),
					})
				}
			}
		}
	}
	return out
}

type tieRun struct {
	*modelHarness
	board *lb.Leaderboard
	m     *tieModel
	clock *testClock
	c     tieCombo
	times []time.Time // times submitted so far, to replay
}

func (r *tieRun) score() float64 {
	s := r.c.enc.scores
	for {
		v := s[r.rng.IntN(len(s))]
		// The extremes are rarer, so Accumulate totals are refused at times
		// but not all the time.
		if math.Abs(v) != r.c.enc.order.MaxScore || r.rng.IntN(3) == 0 {
			return v
		}
	}
}

// at picks a submission time at or before the clock: now, a recent slot, a
// time submitted before (a replay, maybe elsewhere in its slot), the Epoch,
// or anywhere in between.
func (r *tieRun) at() time.Time {
	now, epoch, res := r.clock.Now(), r.c.enc.order.Epoch, r.c.enc.order.Resolution
	frac := time.Duration(r.rng.Int64N(int64(res)))
	var t time.Time
	switch x := r.rng.IntN(20); {
	case x < 5:
		t = now
	case x < 10:
		t = now.Add(-time.Duration(r.rng.IntN(4))*res - frac)
	case x < 15 && len(r.times) > 0:
		t = r.times[r.rng.IntN(len(r.times))]
		if r.rng.IntN(2) == 0 { // elsewhere in the same slot
			t = epoch.Add(time.Duration(r.m.slot(t))*res + frac)
		}
	case x < 17:
		t = epoch.Add(frac)
	default:
		t = epoch.Add(time.Duration(r.rng.Int64N(int64(now.Sub(epoch)) + 1)))
	}
	if t.After(now) {
		t = now
	}
	if t.Before(epoch) {
		t = epoch
	}
	return t
}

func (r *tieRun) submit() {
	t := r.t
	mem, score := pick(r.modelHarness, tiePool), r.score()
	var opts []lb.SubmitOption
	at := r.clock.Now()
	if r.rng.IntN(6) != 0 {
		at = r.at()
		opts = append(opts, lb.WithTime(at))
	}
	r.times = append(r.times, at)
	call := fmt.Sprintf("Submit(%q, %v) at %s (slot %d, clock %s, WithTime %v)",
		mem, score, at.Format(time.RFC3339Nano), r.m.slot(at), r.clock.Now().Format(time.RFC3339Nano), len(opts) > 0)
	r.logf("%s", call)
	got, err := r.board.Submit(r.ctx, mem, score, opts...)
	want, ok := r.m.submit(mem, r.m.scaled(score), r.m.slot(at))
	msg := r.where() + " " + call
	if !ok {
		requireBeyondMax(t, err, "%s: an Accumulate total beyond MaxScore", msg)
		r.logf("refused: %v", err)
		return
	}
	require.NoError(t, err, msg)
	require.Equal(t, want.Previous, got.Previous, "%s Previous", msg)
	requireStanding(t, want.Standing, got.Standing, msg+" Standing")
	require.Equal(t, want.Changed, got.Changed, "%s Changed", msg)
	require.Len(t, got.Windows, 1, msg)
	require.False(t, got.Windows[0].Closed, msg)
}

func (r *tieRun) submitMany() {
	batch := map[string]float64{}
	scaled := map[string]int64{}
	for range 1 + r.rng.IntN(5) {
		mem, score := pick(r.modelHarness, tiePool), r.score()
		batch[mem], scaled[mem] = score, r.m.scaled(score)
	}
	now := r.clock.Now()
	r.times = append(r.times, now)
	call := fmt.Sprintf("SubmitMany(%v) at %s (slot %d)", batch, now.Format(time.RFC3339Nano), r.m.slot(now))
	r.logf("%s", call)
	err := r.board.SubmitMany(r.ctx, batch)
	if !r.m.submitMany(scaled, r.m.slot(now)) {
		requireBeyondMax(r.t, err, "%s %s: an Accumulate total beyond MaxScore", r.where(), call)
		r.logf("refused: %v", err)
		return
	}
	require.NoError(r.t, err, "%s %s", r.where(), call)
}

func (r *tieRun) remove() {
	ms := []string{pick(r.modelHarness, tiePool), pick(r.modelHarness, tieUnknown)}
	r.logf("Remove(%q)", ms)
	require.NoError(r.t, r.board.Remove(r.ctx, ms...), "%s Remove(%q)", r.where(), ms)
	for _, mem := range ms {
		delete(r.m.members, mem)
	}
}

func (r *tieRun) check() {
	t, ctx, board := r.t, r.ctx, r.board
	where := r.where()
	all := r.m.entries()
	total := int64(len(all))

	n, err := board.Count(ctx)
	require.NoError(t, err, "%s Count", where)
	require.Equal(t, total, n, "%s Count", where)

	for _, k := range []int{3, 1000} {
		got, err := board.Top(ctx, k)
		require.NoError(t, err, "%s Top(%d)", where, k)
		requireEntries(t, all[:min(k, len(all))], got, fmt.Sprintf("%s Top(%d)", where, k))
	}

	for _, mem := range append(slices.Clone(tiePool), tieUnknown...) {
		got, err := board.Rank(ctx, mem)
		want, ok := r.m.standing(mem)
		if !ok {
			require.ErrorIs(t, err, lb.ErrNotRanked, "%s Rank(%q) of an unranked member", where, mem)
			continue
		}
		require.NoError(t, err, "%s Rank(%q)", where, mem)
		requireStanding(t, want, got, fmt.Sprintf("%s Rank(%q)", where, mem))
	}
	// Ranks decodes the composites as Rank does, in the order asked.
	everyone := append(slices.Clone(tiePool), tieUnknown...)
	sts, err := board.Ranks(ctx, everyone)
	require.NoError(t, err, "%s Ranks", where)
	for i, mem := range everyone {
		want, ok := r.m.standing(mem)
		if !ok {
			want = lb.Standing{Entry: lb.Entry{Member: mem}, Total: total}
		}
		requireStanding(t, want, sts[i], fmt.Sprintf("%s Ranks[%d] (%q)", where, i, mem))
	}

	// Range and Cutoff decode the composites as Page does.
	rg, err := board.Range(ctx, 2, 6)
	require.NoError(t, err, "%s Range", where)
	requireEntries(t, all[min(1, len(all)):min(6, len(all))], rg, where+" Range(2, 6)")
	for _, pct := range modelPercents {
		c, err := board.Cutoff(ctx, pct)
		if total == 0 {
			require.ErrorIs(t, err, lb.ErrNotRanked, "%s Cutoff(%v)", where, pct)
			continue
		}
		require.NoError(t, err, "%s Cutoff(%v)", where, pct)
		require.Equal(t, all[cutoffAt(total, pct)-1], c, "%s Cutoff(%v)", where, pct)
	}

	r.checkScores(where, all)

	_, err = board.Around(ctx, tieUnknown[0], 2)
	require.ErrorIs(t, err, lb.ErrNotRanked, "%s Around of an unranked member", where)
	if len(all) > 0 {
		for _, pos := range []int{0, len(all) / 2, len(all) - 1} {
			const radius = 2
			start := min(max(pos-radius, 0), max(0, len(all)-(2*radius+1)))
			end := min(start+2*radius+1, len(all))
			got, err := board.Around(ctx, all[pos].Member, radius)
			require.NoError(t, err, "%s Around(%q, %d)", where, all[pos].Member, radius)
			requireEntries(t, all[start:end], got, fmt.Sprintf("%s Around(%q, %d) at position %d", where, all[pos].Member, radius, pos))
		}
	}

	for _, size := range []int{3, 1000} {
		var walked []lb.Entry
		for num := 1; num <= (len(all)+size-1)/size+1; num++ {
			p, err := board.Page(ctx, num, size)
			require.NoError(t, err, "%s Page(%d, %d)", where, num, size)
			require.Equal(t, total, p.Total, "%s Page(%d, %d).Total", where, num, size)
			lo := min((num-1)*size, len(all))
			requireEntries(t, all[lo:min(lo+size, len(all))], p.Entries, fmt.Sprintf("%s Page(%d, %d)", where, num, size))
			walked = append(walked, p.Entries...)
		}
		requireEntries(t, all, walked, fmt.Sprintf("%s page walk of size %d", where, size))
	}

	for range 2 {
		var ms []string
		for range 1 + r.rng.IntN(8) {
			switch x := r.rng.IntN(6); {
			case x == 0:
				ms = append(ms, tieUnknown[r.rng.IntN(len(tieUnknown))])
			case x == 1 && len(ms) > 0:
				ms = append(ms, ms[r.rng.IntN(len(ms))]) // a repeat
			default:
				ms = append(ms, tiePool[r.rng.IntN(len(tiePool))])
			}
		}
		got, err := board.Among(ctx, ms)
		require.NoError(t, err, "%s Among(%q)", where, ms)
		requireEntries(t, r.m.among(ms), got, fmt.Sprintf("%s Among(%q)", where, ms))
	}
}

// bound draws a score bound: a score of the encoding, one half a step
// beside it (between two scores the encoding holds), one beyond MaxScore,
// or an open end.
func (r *tieRun) bound() float64 {
	o := r.c.enc.order
	switch x := r.rng.IntN(10); {
	case x == 0:
		return []float64{math.Inf(-1), math.Inf(1), -2 * o.MaxScore, 2 * o.MaxScore}[r.rng.IntN(4)]
	case x < 4:
		half := 0.5 / math.Pow10(o.Decimals)
		return pick(r.modelHarness, r.c.enc.scores) + []float64{-half, half}[r.rng.IntN(2)]
	}
	return pick(r.modelHarness, r.c.enc.scores)
}

// scoreRange draws lo <= hi.
func (r *tieRun) scoreRange() (float64, float64) {
	a, b := r.bound(), r.bound()
	return min(a, b), max(a, b)
}

// checkScores compares Between, CountBetween, AroundScore and All with the
// model: the bounds take every tie of a score, the entries plain scores.
func (r *tieRun) checkScores(where string, all []lb.Entry) {
	t, ctx, board := r.t, r.ctx, r.board
	for range 4 {
		lo, hi := r.scoreRange()
		var in []lb.Entry
		for _, e := range all {
			if e.Score >= lo && e.Score <= hi {
				in = append(in, e)
			}
		}
		for _, n := range []int{2, lb.MaxN} {
			got, err := board.Between(ctx, lo, hi, n)
			require.NoError(t, err, "%s Between(%v, %v, %d)", where, lo, hi, n)
			requireEntries(t, in[:min(n, len(in))], got, fmt.Sprintf("%s Between(%v, %v, %d)", where, lo, hi, n))
		}
		c, err := board.CountBetween(ctx, lo, hi)
		require.NoError(t, err, "%s CountBetween(%v, %v)", where, lo, hi)
		require.Equal(t, int64(len(in)), c, "%s CountBetween(%v, %v)", where, lo, hi)
	}
	for range 3 {
		x := r.bound()
		if math.IsInf(x, 0) {
			continue
		}
		better := 0
		for _, e := range all {
			if (r.m.high && e.Score > x) || (!r.m.high && e.Score < x) {
				better++
			}
		}
		for _, radius := range []int{0, 2} {
			place, got, err := board.AroundScore(ctx, x, radius)
			require.NoError(t, err, "%s AroundScore(%v, %d)", where, x, radius)
			require.Equal(t, int64(better+1), place, "%s AroundScore(%v, %d) place", where, x, radius)
			requireEntries(t, all[max(0, better-radius):min(len(all), better+radius)], got, fmt.Sprintf("%s AroundScore(%v, %d)", where, x, radius))
		}
	}
	var walked []lb.Entry
	for e, err := range board.All(ctx) {
		require.NoError(t, err, "%s All", where)
		walked = append(walked, e)
	}
	requireEntries(t, all, walked, where+" All")
}

// set corrects a member's score: it becomes exactly that score, stamped
// with the clock, whatever the policy.
func (r *tieRun) set() {
	mem, score := pick(r.modelHarness, tiePool), r.score()
	now := r.clock.Now()
	r.logf("Set(%q, %v) at slot %d", mem, score, r.m.slot(now))
	require.NoError(r.t, r.board.Set(r.ctx, mem, score), "%s Set(%q, %v)", r.where(), mem, score)
	r.m.members[mem] = tieRow{member: mem, s: r.m.scaled(score), slot: r.m.slot(now)}
}

// batch submits a few scores of two members through a Batcher (some
// WithTime), joining in order, into batches of a random size: the board
// must end as the model does applying them one by one (folds, refusals
// written again one submission at a time, a member's later writes after its
// refused one), each caller refused exactly when the model refuses its
// submission, and each member's last applied submission reporting its
// final score.
func (r *tieRun) batch() {
	t := r.t
	size := pick(r.modelHarness, []int{1, 2, 100})
	bt, err := r.board.NewBatcher(lb.WithBatchWindow(time.Minute), lb.WithBatchSize(size))
	require.NoError(t, err)
	calls := make([]*batchCall, 2+r.rng.IntN(7))
	at := make([]time.Time, len(calls))
	for i := range calls {
		calls[i] = &batchCall{member: pick(r.modelHarness, tiePool[:2]), score: r.score()}
		if r.rng.IntN(2) == 0 {
			at[i] = r.at()
		}
	}
	r.logf("Batcher(size %d): %s at %v", size, batchCallsString(calls), at)
	got := runBatcherAt(t, bt, calls, at)
	last := map[string]int{}
	for i, c := range calls {
		when := at[i]
		if when.IsZero() {
			when = r.clock.Now()
		}
		r.times = append(r.times, when)
		msg := fmt.Sprintf("%s batch submit %d: %q %v at slot %d", r.where(), i, c.member, c.score, r.m.slot(when))
		if _, ok := r.m.submit(c.member, r.m.scaled(c.score), r.m.slot(when)); !ok {
			requireBeyondMax(t, got[i].err, "%s: an Accumulate total beyond MaxScore", msg)
			continue
		}
		require.NoError(t, got[i].err, msg)
		last[c.member] = i
	}
	for mem, i := range last {
		want, ok := r.m.standing(mem)
		require.True(t, ok, mem)
		require.Equal(t, want.Score, got[i].res.Windows[0].Standing.Score, "%s batch: %q's last submission's score", r.where(), mem)
	}
}

// removeBetween removes every member whose plain score is in a range.
func (r *tieRun) removeBetween() {
	lo, hi := r.scoreRange()
	r.logf("RemoveBetween(%v, %v)", lo, hi)
	n, err := r.board.RemoveBetween(r.ctx, lo, hi)
	require.NoError(r.t, err, "%s RemoveBetween(%v, %v)", r.where(), lo, hi)
	var want int64
	for mem, row := range r.m.members {
		if p := r.m.plain(row.s); p >= lo && p <= hi {
			delete(r.m.members, mem)
			want++
		}
	}
	require.Equal(r.t, want, n, "%s RemoveBetween(%v, %v)", r.where(), lo, hi)
}

// TestTieBreakModel runs every policy, order, rule and rank mode against the
// model, with submissions stamped at random times at or before a clock that
// moves forward, so that times go backwards too (replays).
func TestTieBreakModel(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, c := range tieCombos() {
			t.Run(c.name(), func(t *testing.T) {
				t.Parallel()
				runTieModel(t, b, c)
			})
		}
	})
}

func runTieModel(t *testing.T, b *testredis.Backend, c tieCombo) {
	t.Logf("tie-break model run %s: seed=%d", c.name(), c.seed)
	clock := &testClock{now: c.enc.order.Epoch.Add(c.enc.start)}
	opts := []lb.Option{lb.WithPolicy(c.policy), lb.WithOrder(c.order), lb.WithRanking(c.rank),
		lb.WithTieBreak(tieNew(t, c.later, c.enc.order)), lb.WithClock(clock.Now)}
	if c.hot > 0 {
		opts = append(opts, lb.WithHotTop(c.hot))
	}
	board, _ := newBoard(t, b, opts...)
	r := &tieRun{
		modelHarness: newModelHarness(t, fmt.Sprintf("combo=%s seed=%d", c.name(), c.seed), c.seed, 0x9e3779b97f4a7c15),
		board:        board, clock: clock, c: c,
		m: newTieModel(c.order, c.later, c.rank, c.policy, c.enc.order),
	}
	res := c.enc.order.Resolution
	r.run(modelLoop{
		steps: tieModelSteps, checkEvery: tieCheckEvery,
		before: func() {
			if r.rng.IntN(2) == 0 {
				next := clock.Now().Add(time.Duration(r.rng.Int64N(tieMaxClockRun * int64(res))))
				r.logf("clock -> %s", next.Format(time.RFC3339Nano))
				clock.Set(next)
			}
		},
		ops:   []modelOp{{76, r.submit}, {10, r.submitMany}, {6, r.batch}, {5, r.remove}, {2, r.set}, {1, r.removeBetween}},
		check: func(bool) { r.check() },
	})
}

// ---- 3. the guards on a board ----

// TestTieBreakScoreGuards refuses scores the encoding cannot hold, on every
// write path, and writes nothing then.
func TestTieBreakScoreGuards(t *testing.T) {
	o := lb.TimeOrder{Epoch: tieEpoch, Resolution: time.Second, MaxScore: 1000, Decimals: 2}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
			for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
				for _, later := range []bool{false, true} {
					t.Run(fmt.Sprintf("%v/%v/%s", policy, rank, tieRuleName(later)), func(t *testing.T) {
						board, name := newBoard(t, b, lb.WithPolicy(policy), lb.WithRanking(rank),
							lb.WithTieBreak(tieNew(t, later, o)), lb.WithClock(fixed(tieNow)))
						_, err := board.Submit(ctx, "seed", 1)
						require.NoError(t, err)
						before := b.Snapshot(t, name)
						require.Len(t, before, 1)

						for _, s := range []float64{1000.01, -1000.01, 1001, 12.345, 0.001, -0.005, 1e300} {
							for _, mem := range []string{"p", "seed"} {
								_, err := board.Submit(ctx, mem, s)
								// Beyond MaxScore is outside what the board
								// holds too; too many fraction digits only
								// imprecise.
								check := requireBeyondMax
								if math.Abs(s) <= 1000 {
									check = requireOnlyPrecision
								}
								check(t, err, "Submit(%q, %v)", mem, s)
								_, err = board.Submit(ctx, mem, s, lb.WithTime(tieEpoch))
								check(t, err, "Submit(%q, %v, WithTime(Epoch))", mem, s)
								err = board.SubmitMany(ctx, map[string]float64{"ok": 1, mem: s})
								check(t, err, "SubmitMany(%q: %v)", mem, s)
							}
						}
						require.Equal(t, before, b.Snapshot(t, name), "a refused score wrote something")

						for mem, s := range map[string]float64{"max": 1000, "min": -1000, "p": 12.34, "q": -0.01} {
							res, err := board.Submit(ctx, mem, s)
							require.NoError(t, err, "Submit(%q, %v)", mem, s)
							require.Equal(t, s, res.Score, "Submit(%q, %v)", mem, s)
						}
						require.NoError(t, board.SubmitMany(ctx, map[string]float64{"r": 1000, "s": 12.34, "u": -1000}))
						want := map[string]float64{"seed": 1, "max": 1000, "min": -1000, "p": 12.34, "q": -0.01, "r": 1000, "s": 12.34, "u": -1000}
						top, err := board.Top(ctx, 100)
						require.NoError(t, err)
						require.Len(t, top, len(want))
						for _, e := range top {
							require.Equal(t, want[e.Member], e.Score, e.Member)
						}
					})
				}
			}
		}
	})
}

// TestTieBreakTimeGuards refuses times outside [Epoch, Horizon()) on a board
// whose horizon lies two days ahead, accepts both ends, and orders members
// at the extreme slots and scores (composites next to 2^53) exactly.
// clockRefusals checks that with the board's clock outside its tie-break's
// time every write stamped by it is ErrPrecision even when its ctx has
// ended: bad input is refused before the ctx is looked at.
func clockRefusals(t *testing.T, board *lb.Leaderboard, where string) {
	t.Helper()
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := board.Submit(ended, "p", 1)
	require.ErrorIs(t, err, lb.ErrPrecision, "Submit, the clock %s, ctx ended", where)
	require.ErrorIs(t, board.SubmitMany(ended, map[string]float64{"p": 1, "seed": 6}), lb.ErrPrecision,
		"SubmitMany, the clock %s, ctx ended", where)
	require.ErrorIs(t, board.Set(ended, "p", 1), lb.ErrPrecision, "Set, the clock %s, ctx ended", where)
	bt, err := board.NewBatcher()
	require.NoError(t, err)
	_, err = bt.Submit(ended, "p", 1)
	require.ErrorIs(t, err, lb.ErrPrecision, "Batcher.Submit, the clock %s, ctx ended", where)
	require.NoError(t, bt.Close(context.Background()))
}

func TestTieBreakTimeGuards(t *testing.T) {
	const slots = 9007 // 2^53 / (1e12 + 1)
	epoch := time.Now().UTC().Truncate(time.Hour).Add(48*time.Hour - slots*time.Hour)
	o := lb.TimeOrder{Epoch: epoch, Resolution: time.Hour, MaxScore: 1e12, Decimals: 0}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, order := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
			for _, later := range []bool{false, true} {
				for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
					for _, policy := range []lb.Policy{lb.Replace, lb.KeepBest} {
						t.Run(fmt.Sprintf("%v/%s/%v/%v", order, tieRuleName(later), rank, policy), func(t *testing.T) {
							tb := tieNew(t, later, o)
							horizon := tb.Horizon()
							require.Equal(t, epoch.Add(slots*time.Hour), horizon)
							clock := &testClock{now: horizon}
							board, name := newBoard(t, b, lb.WithOrder(order), lb.WithRanking(rank), lb.WithPolicy(policy),
								lb.WithTieBreak(tb), lb.WithClock(clock.Now))
							_, err := board.Submit(ctx, "seed", 5, lb.WithTime(epoch.Add(time.Hour)))
							require.NoError(t, err)
							before := b.Snapshot(t, name)

							for _, at := range []time.Time{epoch.Add(-time.Nanosecond), epoch.Add(-time.Hour), horizon} {
								for _, mem := range []string{"p", "seed"} {
									_, err := board.Submit(ctx, mem, 1, lb.WithTime(at))
									require.ErrorIs(t, err, lb.ErrPrecision, "Submit(%q) WithTime(%v), Epoch %v, horizon %v", mem, at, epoch, horizon)
								}
							}
							// The clock at the horizon: a submission stamped now is refused.
							_, err = board.Submit(ctx, "p", 1)
							require.ErrorIs(t, err, lb.ErrPrecision, "Submit stamped by the clock at the horizon")
							require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"p": 1, "seed": 6}), lb.ErrPrecision,
								"SubmitMany stamped by the clock at the horizon")
							clockRefusals(t, board, "at the horizon")
							// Past the default clock skew (1s; times are cut to the
							// microsecond); within it a time is taken as now, which is
							// the horizon here (ErrPrecision, above).
							_, err = board.Submit(ctx, "p", 1, lb.WithTime(horizon.Add(time.Second+time.Microsecond)))
							require.ErrorIs(t, err, lb.ErrInvalidArgument, "a time after the clock and its skew")
							_, err = board.Submit(ctx, "p", 1, lb.WithTime(horizon.Add(time.Nanosecond)))
							require.ErrorIs(t, err, lb.ErrPrecision, "a time within the skew is now: the horizon")
							_, err = board.Submit(ctx, "p", 1e12+1, lb.WithTime(epoch))
							require.ErrorIs(t, err, lb.ErrPrecision, "a score beyond MaxScore")
							// The clock before the Epoch: the same.
							clock.Set(epoch.Add(-time.Nanosecond))
							_, err = board.Submit(ctx, "p", 1)
							require.ErrorIs(t, err, lb.ErrPrecision, "Submit stamped by the clock before the Epoch")
							require.ErrorIs(t, board.SubmitMany(ctx, map[string]float64{"p": 1, "seed": 6}), lb.ErrPrecision,
								"SubmitMany stamped by the clock before the Epoch")
							clockRefusals(t, board, "before the Epoch")
							clock.Set(horizon)
							require.Equal(t, before, b.Snapshot(t, name), "a refused submission wrote something")

							m := newTieModel(order, later, rank, policy, o)
							m.members["seed"] = tieRow{member: "seed", s: 5, slot: 1}
							for _, s := range []struct {
								member string
								score  float64
								at     time.Time
							}{
								{"e+", 1e12, epoch},
								{"h+", 1e12, horizon.Add(-time.Nanosecond)},
								{"r+", 1e12, horizon.Add(-time.Hour)},
								{"m+", 1e12, epoch.Add(slots / 2 * time.Hour)},
								{"e-", -1e12, epoch},
								{"h-", -1e12, horizon.Add(-time.Nanosecond)},
								{"r-", -1e12, horizon.Add(-time.Hour).Add(time.Nanosecond)},
								{"e0", 0, epoch.Add(time.Hour - time.Nanosecond)},
								{"h0", 0, horizon.Add(-time.Nanosecond)},
								{"e1", -1, epoch},
								{"h1", 1, horizon.Add(-time.Hour)},
							} {
								res, err := board.Submit(ctx, s.member, s.score, lb.WithTime(s.at))
								require.NoError(t, err, "Submit(%q, %v) WithTime(%v)", s.member, s.score, s.at)
								want, ok := m.submit(s.member, m.scaled(s.score), m.slot(s.at))
								require.True(t, ok)
								require.Equal(t, want.Previous, res.Previous, s.member)
								requireStanding(t, want.Standing, res.Standing, s.member)
							}
							// SubmitMany in the last slot before the horizon.
							clock.Set(horizon.Add(-time.Nanosecond))
							require.NoError(t, board.SubmitMany(ctx, map[string]float64{"n+": 1e12, "n-": -1e12}))
							require.True(t, m.submitMany(map[string]int64{"n+": 1e12, "n-": -1e12}, slots-1))
							// A replay at the Epoch moves a KeepBest member's time back.
							res, err := board.Submit(ctx, "h+", 1e12, lb.WithTime(epoch))
							require.NoError(t, err)
							want, _ := m.submit("h+", 1e12, 0)
							require.Equal(t, want.Previous, res.Previous, "replay of h+")
							requireStanding(t, want.Standing, res.Standing, "replay of h+")
							require.False(t, res.Changed, "replay of h+")

							top, err := board.Top(ctx, 100)
							require.NoError(t, err)
							require.Equal(t, m.entries(), top)
							p, err := board.Page(ctx, 2, 5)
							require.NoError(t, err)
							require.Equal(t, m.entries()[5:10], p.Entries)
							for _, e := range m.entries() {
								st, err := board.Rank(ctx, e.Member)
								require.NoError(t, err, e.Member)
								want, _ := m.standing(e.Member)
								requireStanding(t, want, st, "Rank("+e.Member+")")
							}
						})
					}
				}
			}
		}
	})
}

// TestTieBreakAccumulateGuards accepts an Accumulate total of exactly
// ±MaxScore and refuses one step more, through Submit and SubmitMany,
// writing nothing then.
func TestTieBreakAccumulateGuards(t *testing.T) {
	o := lb.TimeOrder{Epoch: tieEpoch, Resolution: time.Second, MaxScore: 1000, Decimals: 2}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			for _, later := range []bool{false, true} {
				for _, order := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
					t.Run(fmt.Sprintf("%v/%s/%v", rank, tieRuleName(later), order), func(t *testing.T) {
						board, name := newBoard(t, b, lb.WithPolicy(lb.Accumulate), lb.WithRanking(rank), lb.WithOrder(order),
							lb.WithTieBreak(tieNew(t, later, o)), lb.WithClock(fixed(tieNow)))
						for _, sign := range []float64{1, -1} {
							p, q := fmt.Sprintf("p%v", sign), fmt.Sprintf("q%v", sign)
							_, err := board.Submit(ctx, p, sign*600)
							require.NoError(t, err)
							res, err := board.Submit(ctx, p, sign*400)
							require.NoError(t, err, "a total of exactly %v", sign*1000)
							require.Equal(t, sign*1000, res.Score)
							require.True(t, res.Changed)

							require.NoError(t, board.SubmitMany(ctx, map[string]float64{q: sign * 999.99}))
							require.NoError(t, board.SubmitMany(ctx, map[string]float64{q: sign * 0.01}), "a total of exactly %v", sign*1000)
							st, err := board.Rank(ctx, q)
							require.NoError(t, err)
							require.Equal(t, sign*1000, st.Score)

							before := b.Snapshot(t, name)
							for _, mem := range []string{p, q} {
								_, err = board.Submit(ctx, mem, sign*0.01)
								requireBeyondMax(t, err, "Submit(%q, %v) past MaxScore", mem, sign*0.01)
								_, err = board.Submit(ctx, mem, sign*1000, lb.WithTime(tieEpoch))
								requireBeyondMax(t, err, "Submit(%q, %v) past MaxScore", mem, sign*1000)
								err = board.SubmitMany(ctx, map[string]float64{"fresh": 5, mem: sign * 0.01})
								requireBeyondMax(t, err, "SubmitMany(%q: %v) past MaxScore", mem, sign*0.01)
							}
							require.Equal(t, before, b.Snapshot(t, name), "a refused total wrote something")

							// Back inside the range is fine.
							res, err = board.Submit(ctx, p, -sign*0.01)
							require.NoError(t, err)
							require.Equal(t, sign*999.99, res.Score)
						}
						// Totals are exact in the scaled integers: 0.1 + 0.2 is 0.3.
						_, err := board.Submit(ctx, "x", 0.1)
						require.NoError(t, err)
						res, err := board.Submit(ctx, "x", 0.2)
						require.NoError(t, err)
						require.Equal(t, 0.3, res.Score)
						require.NoError(t, board.SubmitMany(ctx, map[string]float64{"x": 0.3}))
						st, err := board.Rank(ctx, "x")
						require.NoError(t, err)
						require.Equal(t, 0.6, st.Score)
					})
				}
			}
		}
	})
}

// ---- 4. the constructors ----

func TestTieBreakConstructors(t *testing.T) {
	epoch := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, later := range []bool{false, true} {
		ctor := lb.EarlierFirst
		if later {
			ctor = lb.LaterFirst
		}
		t.Run(tieRuleName(later), func(t *testing.T) {
			tb, err := ctor(lb.TimeOrder{Epoch: epoch, Resolution: time.Millisecond, MaxScore: 1e6, Decimals: 0})
			require.ErrorIs(t, err, lb.ErrPrecision)
			require.Nil(t, tb)
			for _, s := range []string{"1e+06", "1ms"} {
				require.Contains(t, err.Error(), s, "the error names the settings")
			}

			for _, bad := range []lb.TimeOrder{
				{Resolution: time.Second, MaxScore: 100},
				{Epoch: epoch, Resolution: 0, MaxScore: 100},
				{Epoch: epoch, Resolution: -time.Second, MaxScore: 100},
				{Epoch: epoch, Resolution: time.Second, MaxScore: 0},
				{Epoch: epoch, Resolution: time.Second, MaxScore: -5},
				{Epoch: epoch, Resolution: time.Second, MaxScore: math.NaN()},
				{Epoch: epoch, Resolution: time.Second, MaxScore: math.Inf(1)},
				{Epoch: epoch, Resolution: time.Second, MaxScore: math.Inf(-1)},
				{Epoch: epoch, Resolution: time.Second, MaxScore: 100, Decimals: -1},
				{Epoch: epoch, Resolution: time.Second, MaxScore: 100, Decimals: 16},
			} {
				tb, err := ctor(bad)
				require.ErrorIs(t, err, lb.ErrInvalidArgument, "%+v", bad)
				require.NotErrorIs(t, err, lb.ErrPrecision, "%+v", bad)
				require.Nil(t, tb, "%+v", bad)
			}

			for _, c := range []struct {
				o lb.TimeOrder
				m uint64 // MaxScore × 10^Decimals
			}{
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 0}, 1e6},
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Millisecond, MaxScore: 1e5, Decimals: 0}, 1e5},
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 2}, 1e8},
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Minute, MaxScore: 1e9, Decimals: 0}, 1e9},
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Hour, MaxScore: 1e12, Decimals: 0}, 1e12},
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Second, MaxScore: 1000, Decimals: 2}, 1e5},
				{lb.TimeOrder{Epoch: epoch, Resolution: time.Hour, MaxScore: 1, Decimals: 0}, 1},
				{lb.TimeOrder{Epoch: epoch.Add(-time.Nanosecond), Resolution: 7 * time.Second, MaxScore: 123.45, Decimals: 2}, 12345},
			} {
				tb, err := ctor(c.o)
				require.NoError(t, err, "%+v", c.o)
				slots := uint64(1<<53) / (c.m + 1)
				slots = min(slots, uint64(math.MaxInt64/int64(c.o.Resolution)))
				require.Equal(t, c.o.Epoch.Add(time.Duration(slots)*c.o.Resolution), tb.Horizon(), "%+v: %d slots", c.o, slots)
				require.False(t, tb.Horizon().Before(c.o.Epoch.AddDate(1, 0, 0)), "%+v", c.o)
			}

			for _, o := range []lb.TimeOrder{
				{Epoch: epoch, Resolution: time.Second, MaxScore: 1e9, Decimals: 0},   // 104 days
				{Epoch: epoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 3},   // 104 days
				{Epoch: epoch, Resolution: time.Second, MaxScore: 1e16, Decimals: 0},  // no room at all
				{Epoch: epoch, Resolution: time.Second, MaxScore: 1e300, Decimals: 0}, // no room at all
			} {
				tb, err := ctor(o)
				require.ErrorIs(t, err, lb.ErrPrecision, "%+v", o)
				require.Nil(t, tb, "%+v", o)
			}
		})
	}
}

// TestTieBreakAccumulateZero: on an Accumulate board with EarlierFirst,
// adding 0 reaches no new total and keeps the time the total was reached:
// alice reached 100 before bob and stays first after a Submit, a
// SubmitMany and a Batcher's submission of 0 (Changed false). A Batcher
// folding +5 and -5 writes them apart, so the total is stamped with the
// -5's time (as two Submits would): bob first. The store agrees (Verify,
// and a Rebuild gives the same order), on plain and sharded boards.
func TestTieBreakAccumulateZero(t *testing.T) {
	o := lb.TimeOrder{Epoch: tieEpoch, Resolution: time.Second, MaxScore: 1000}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for name, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(50)}} {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				board, bname := newBoard(t, b, append(opts, lb.WithPolicy(lb.Accumulate), lb.WithTieBreak(tieNew(t, false, o)),
					lb.WithStore(newMemStore()), lb.WithClock(fixed(tieNow)))...)
				at := func(s int) lb.SubmitOption { return lb.WithTime(tieEpoch.Add(time.Duration(s) * time.Minute)) }
				order := func(when string, want ...string) {
					t.Helper()
					top, err := board.Top(ctx, 10)
					require.NoError(t, err)
					var got []string
					for _, e := range top {
						got = append(got, e.Member)
					}
					require.Equal(t, want, got, when)
				}
				for i, m := range []string{"alice", "bob"} {
					_, err := board.Submit(ctx, m, 100, at(i+1))
					require.NoError(t, err)
				}
				res, err := board.Submit(ctx, "alice", 0, at(3))
				require.NoError(t, err)
				require.False(t, res.Changed)
				require.Equal(t, int64(1), res.Previous.Rank)
				require.Equal(t, int64(1), res.Rank)
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"alice": 0, "bob": 0}))
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				runBatcherAt(t, bt, []*batchCall{{member: "alice", score: 0}, {member: "bob", score: 0}}, []time.Time{tieEpoch.Add(4 * time.Minute), {}})
				order("after adding 0", "alice", "bob")

				bt, err = board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				var seqs []int
				lb.TraceBatch(bt, func(seq int) { seqs = append(seqs, seq) })
				got := runBatcherAt(t, bt, []*batchCall{{member: "alice", score: 5}, {member: "alice", score: -5}, {member: "alice", score: 0}},
					[]time.Time{tieEpoch.Add(5 * time.Minute), tieEpoch.Add(6 * time.Minute), tieEpoch.Add(7 * time.Minute)})
				require.Equal(t, []int{0, 1, 1}, seqs, "+5 and -5 apart, the 0 folded into the -5")
				for _, c := range got {
					require.NoError(t, c.err)
				}
				order("after +5 and -5", "bob", "alice")

				reps, err := board.Verify(ctx)
				require.NoError(t, err)
				for _, r := range reps {
					require.True(t, r.Clean(), "the store agrees: %+v", r)
				}
				b.Wipe(t, bname)
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				order("after a Rebuild", "bob", "alice")
			})
		}
	})
}

// requireBeyondMax checks the error of a score or total beyond MaxScore:
// ErrPrecision, and ErrInvalidScore (outside what the board can hold).
func requireBeyondMax(t require.TestingT, err error, msgAndArgs ...any) {
	require.ErrorIs(t, err, lb.ErrPrecision, msgAndArgs...)
	require.ErrorIs(t, err, lb.ErrInvalidScore, msgAndArgs...)
}

// requireOnlyPrecision checks the error of a score the tie-break cannot
// hold exactly but within MaxScore: ErrPrecision alone.
func requireOnlyPrecision(t require.TestingT, err error, msgAndArgs ...any) {
	require.ErrorIs(t, err, lb.ErrPrecision, msgAndArgs...)
	require.NotErrorIs(t, err, lb.ErrInvalidScore, msgAndArgs...)
}

// TestTieBreakEpochInsideMicrosecond: an Epoch inside a microsecond (an
// Epoch taken from a clock with nanoseconds) refused every submission
// stamped at it, from WithTime or from the board's clock, as both are cut
// to the microsecond before the Epoch. A time in the Epoch's microsecond
// counts as the Epoch now, in the first slot; a microsecond before it is
// still refused and writes nothing.
func TestTieBreakEpochInsideMicrosecond(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		ctx := context.Background()
		epoch := tieEpoch.Add(500 * time.Nanosecond)
		tb := tieNew(t, false, lb.TimeOrder{Epoch: epoch, Resolution: time.Second, MaxScore: 1e6, Decimals: 2})
		now := epoch
		board, name := newBoard(t, b, lb.WithTieBreak(tb), lb.WithClock(func() time.Time { return now }))
		_, err := board.Submit(ctx, "clock", 10)
		require.NoError(t, err, "the board's clock at the Epoch")
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"many": 10}), "SubmitMany at the Epoch")
		now = epoch.Add(time.Hour)
		_, err = board.Submit(ctx, "stamped", 10, lb.WithTime(epoch))
		require.NoError(t, err, "WithTime(Epoch)")
		// Slots count from the Epoch itself: a whole second after its
		// microsecond is still in the first slot, a microsecond more not.
		_, err = board.Submit(ctx, "later", 10, lb.WithTime(epoch.Add(time.Second+time.Microsecond)))
		require.NoError(t, err)

		before := b.Snapshot(t, name)
		_, err = board.Submit(ctx, "early", 10, lb.WithTime(epoch.Add(-time.Microsecond)))
		require.ErrorIs(t, err, lb.ErrPrecision, "a microsecond before the Epoch's")
		require.Equal(t, before, b.Snapshot(t, name), "a refused time wrote something")

		es, err := board.Top(ctx, 4)
		require.NoError(t, err)
		require.Len(t, es, 4)
		require.Equal(t, "later", es[3].Member, "the three at the Epoch share its slot, before a second later: %+v", es)
		for _, e := range es {
			require.Equal(t, 10.0, e.Score)
		}
	})
}
