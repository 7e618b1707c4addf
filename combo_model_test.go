package leaderboard_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/rueidis"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// The other model tests each hold most options still and vary one axis:
// model_test.go a plain board, tiebreak_board_test.go the tie-breaks,
// sharded_test.go a sharded board against an unsharded twin. This one draws
// a whole combination of options per seed, so that options meet that the
// others never put on one board: shards with a shadow layout (FillShadow,
// DropShadow and Check mixed into the workload, writes through the swapped
// layout once it is filled), a hot top, replica reads through a client that
// sends reads to replicas, a tie-break, ranking, order, policy, AllTime and
// Daily with a clock that crosses midnight and jumps a day under a
// retention, a store (memstore_test.go) with the keys wiped and rebuilt,
// and a Batcher. Every read is compared with a plain Go model.

// comboCase is the combination of options one seed draws.
type comboCase struct {
	seed   uint64
	bounds []float64 // nil: unsharded
	shadow []float64 // a second layout, on sharded boards only
	hot    int
	// replica reads through a client that sends reads to replicas.
	replica bool
	tie     int // 0 none, 1 EarlierFirst, 2 LaterFirst
	rank    lb.RankMode
	order   lb.Order
	policy  lb.Policy
	// retention is WithRetention's, when hasRet.
	retention time.Duration
	hasRet    bool
	store     bool
	batcher   bool
}

func (c comboCase) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%v/%v/%v", c.policy, c.order, c.rank)
	if c.tie != 0 {
		sb.WriteString("/" + tieRuleName(c.tie == 2))
	}
	if c.bounds != nil {
		fmt.Fprintf(&sb, "/shards%v", c.bounds)
	}
	if c.shadow != nil {
		fmt.Fprintf(&sb, "/shadow%v", c.shadow)
	}
	if c.hot > 0 {
		fmt.Fprintf(&sb, "/hot%d", c.hot)
	}
	if c.replica {
		sb.WriteString("/replica")
	}
	if c.hasRet {
		fmt.Fprintf(&sb, "/retention=%v", c.retention)
	}
	if c.store {
		sb.WriteString("/store")
	}
	if c.batcher {
		sb.WriteString("/batcher")
	}
	return sb.String()
}

// drawCombo draws seed's combination, from a source of its own so that
// the workload's draws do not change it.
func drawCombo(seed uint64) comboCase {
	rng := rand.New(rand.NewPCG(seed, seed*31+7))
	c := comboCase{seed: seed}
	c.policy = []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate}[rng.IntN(3)]
	c.order = []lb.Order{lb.HighestFirst, lb.LowestFirst}[rng.IntN(2)]
	c.rank = []lb.RankMode{lb.Ordinal, lb.Competition}[rng.IntN(2)]
	c.tie = rng.IntN(3)
	// No shards, a few bounds, a spike (0 alone in its shard), one bound.
	c.bounds = [][]float64{nil, {-1, 0.5, 3}, {0, 0.001}, {2}}[rng.IntN(4)]
	if c.bounds != nil && rng.IntN(2) == 0 {
		c.shadow = [][]float64{{-2, 1, 4}, {0.25}, {-0.5, 0, 0.01, 5}}[rng.IntN(3)]
	}
	if rng.IntN(2) == 0 {
		c.hot = []int{1, 3, 5}[rng.IntN(3)]
	}
	c.replica = rng.IntN(3) == 0
	switch rng.IntN(3) {
	case 1:
		c.hasRet, c.retention = true, 0
	case 2:
		c.hasRet, c.retention = true, 36*time.Hour
	}
	c.store = rng.IntN(2) == 0
	c.batcher = rng.IntN(2) == 0
	return c
}

// comboSeeds are the seeds the normal suite runs on every backend: between
// them they draw each feature comboFeatures names (TestComboModel requires
// it, so a change to drawCombo cannot drop one silently).
var comboSeeds = []uint64{4, 6, 7, 11}

// comboFeatures names what the default seeds must cover between them.
var comboFeatures = map[string]func(comboCase) bool{
	"sharded with shadow": func(c comboCase) bool { return c.shadow != nil },
	"hot top":             func(c comboCase) bool { return c.hot > 0 },
	"replica reads":       func(c comboCase) bool { return c.replica },
	"tie-break":           func(c comboCase) bool { return c.tie != 0 },
	"store and Rebuild":   func(c comboCase) bool { return c.store },
	"Batcher":             func(c comboCase) bool { return c.batcher },
	"LowestFirst":         func(c comboCase) bool { return c.order == lb.LowestFirst },
	"Competition":         func(c comboCase) bool { return c.rank == lb.Competition },
	"Accumulate":          func(c comboCase) bool { return c.policy == lb.Accumulate },
	"retention":           func(c comboCase) bool { return c.hasRet },
}

// ---- the model ----

// comboRow is one member of a model period.
type comboRow struct {
	score float64
	s     int64 // the score scaled by the tie-break's Decimals
	slot  int64 // the tie-break's time slot
}

// comboModel holds, per period ("alltime", "daily/2026-01-02"), what the
// board must hold.
type comboModel struct {
	c      comboCase
	boards map[string]map[string]comboRow
	data   map[string]string
	// ids are the submission ids the board must report as duplicates.
	ids map[string]bool
}

func (m *comboModel) board(key string) map[string]comboRow {
	b := m.boards[key]
	if b == nil {
		b = map[string]comboRow{}
		m.boards[key] = b
	}
	return b
}

func (m *comboModel) better(a, b float64) bool {
	if m.c.order == lb.LowestFirst {
		return a < b
	}
	return a > b
}

// before is the board's order: score, then the tie-break's slot, then the
// member's bytes (descending for HighestFirst, as Redis's ZREVRANGE has it).
func (m *comboModel) before(am string, a comboRow, bm string, b comboRow) bool {
	if a.score != b.score {
		return m.better(a.score, b.score)
	}
	if m.c.tie != 0 && a.slot != b.slot {
		return (a.slot > b.slot) == (m.c.tie == 2)
	}
	if m.c.order == lb.LowestFirst {
		return am < bm
	}
	return am > bm
}

func (m *comboModel) sorted(key string) []lb.Entry {
	b := m.boards[key]
	names := make([]string, 0, len(b))
	for name := range b {
		names = append(names, name)
	}
	sort.Slice(names, func(i, j int) bool { return m.before(names[i], b[names[i]], names[j], b[names[j]]) })
	out := make([]lb.Entry, len(names))
	for i, name := range names {
		rank := int64(i + 1)
		if m.c.rank == lb.Competition && i > 0 && out[i-1].Score == b[name].score {
			rank = out[i-1].Rank
		}
		out[i] = lb.Entry{Member: name, Score: b[name].score, Rank: rank}
	}
	return out
}

func (m *comboModel) standing(key, member string) (lb.Standing, bool) {
	es := m.sorted(key)
	i := slices.IndexFunc(es, func(e lb.Entry) bool { return e.Member == member })
	if i < 0 {
		return lb.Standing{}, false
	}
	e, total := es[i], int64(len(es))
	st := lb.Standing{Entry: e, Total: total, Percentile: 100}
	if total > 1 {
		// Competition ranks count the members strictly behind, not the
		// places behind.
		below := total - e.Rank
		if m.c.rank == lb.Competition {
			below = 0
			for _, o := range es[i+1:] {
				if m.better(e.Score, o.Score) {
					below++
				}
			}
		}
		st.Percentile = float64(below) / float64(total-1) * 100
	}
	return st, true
}

func (m *comboModel) scaled(x float64) int64 {
	return int64(math.Round(x * math.Pow10(comboTimeOrder.Decimals)))
}

func (m *comboModel) slot(t time.Time) int64 {
	return int64(t.Truncate(time.Microsecond).Sub(comboTimeOrder.Epoch) / comboTimeOrder.Resolution)
}

// row is what member holds after a write of score at slot.
func (m *comboModel) row(score float64, slot int64) comboRow {
	r := comboRow{score: score, slot: slot}
	if m.c.tie != 0 {
		r.s = m.scaled(score)
	}
	return r
}

// next is what the policy keeps of member's write; ok is false when the
// board must refuse it (a tie-broken total beyond MaxScore).
func (m *comboModel) next(key, member string, score float64, slot int64) (comboRow, bool) {
	old, present := m.board(key)[member]
	row := m.row(score, slot)
	if !present {
		return row, true
	}
	switch m.c.policy {
	case lb.Replace:
		return row, true
	case lb.Accumulate:
		if m.c.tie == 0 {
			row.score = old.score + score
			return row, true
		}
		// Adding zero keeps the old slot: the total did not change.
		if row.s == 0 {
			return old, true
		}
		row.s += old.s
		row.score = float64(row.s) / math.Pow10(comboTimeOrder.Decimals)
		most := m.scaled(comboTimeOrder.MaxScore)
		return row, row.s <= most && row.s >= -most
	}
	if m.better(score, old.score) || (m.c.tie != 0 && score == old.score && slot < old.slot) {
		return row, true
	}
	return old, true
}

func comboDayStart(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

func (m *comboModel) retention() time.Duration {
	if m.c.hasRet {
		return m.c.retention
	}
	return 24 * time.Hour // the default: one period
}

// dayReadable reports whether the day holding t is readable at now.
func (m *comboModel) dayReadable(t, now time.Time) bool {
	end := comboDayStart(t).Add(24 * time.Hour)
	return now.Before(end.Add(m.retention()))
}

// liveKeys are the model periods a write at at goes to: all time, and its
// day ("" when that day has expired, where the board reports it Closed).
func (m *comboModel) liveKeys(at, now time.Time) []string {
	if m.dayReadable(at, now) {
		return []string{"alltime", modelDayKey(at)}
	}
	return []string{"alltime", ""}
}

// readableDays are the days readable at now, newest first.
func (m *comboModel) readableDays(now time.Time) []time.Time {
	var out []time.Time
	for d := range 5 {
		t := comboDayStart(now).Add(-time.Duration(d) * 24 * time.Hour)
		if d == 0 || m.dayReadable(t, now) {
			out = append(out, t)
		}
	}
	return out
}

// snapshot copies the periods, so a batch the board refuses as a whole
// can be undone.
func (m *comboModel) snapshot() map[string]map[string]comboRow { return cloneBoards(m.boards) }

// cloneBoards copies a model's boards.
func cloneBoards(boards map[string]map[string]comboRow) map[string]map[string]comboRow {
	out := make(map[string]map[string]comboRow, len(boards))
	for k, b := range boards {
		out[k] = maps.Clone(b)
	}
	return out
}

// ---- the run ----

// comboRun is one seed's workload on one backend.
type comboRun struct {
	*modelHarness
	b     *testredis.Backend
	c     comboCase
	m     *comboModel
	clock *testClock
	board *lb.Leaderboard
	// swapped is the same board in the second step of a move to the shadow
	// layout (WithShards(shadow), WithShadowShards(bounds)), written and
	// read once FillShadow has filled the shadow.
	swapped *lb.Leaderboard
	batcher *lb.Batcher
	store   *memStore
	name    string
	filled  bool
	idSeq   int
	// usedIDs can be sent again; idMember is the member each was sent for.
	usedIDs  []string
	idMember map[string]string
	// bulk and jump are rationed: two each per run.
	bulks, jumps int
	// stats counts what the workload did, logged at the end.
	stats map[string]int
}

// comboPool holds members that differ only in case, length or digits, so
// the byte order of ties is exercised.
var comboPool = []string{"a", "A", "b", "B", "ab", "aB", "z", "Z", "p:1", "p:10", "p:2", "ü", "0", "00", "x"}

// The boards' clock starts ten minutes before midnight, some two months
// ahead (a real Redis expires keys by its own clock), so the first steps
// cross into the next day; the tie-break's Epoch is two days earlier, so
// submissions dated into the day before are still slotted.
var (
	comboStart     = future.Add(11*time.Hour + 50*time.Minute)
	comboTimeOrder = lb.TimeOrder{Epoch: comboStart.Add(-48 * time.Hour), Resolution: time.Second, MaxScore: 1e6, Decimals: 2}
)

// logf records an operation with the board's clock, which every step moves.
func (r *comboRun) logf(format string, args ...any) {
	r.modelHarness.logf("[%s] %s", r.clock.Now().Format("01-02T15:04:05.000"), fmt.Sprintf(format, args...))
}

// failf fails the run; the harness prints the operations up to here.
func (r *comboRun) failf(format string, args ...any) {
	r.t.Helper()
	r.t.Fatalf("%s %s", r.where(), fmt.Sprintf(format, args...))
}

// score draws a submission: mostly small scores that tie often, at times
// one at the edge of what the board holds (MaxScore for a tie-break).
func (r *comboRun) score() float64 {
	if r.c.tie != 0 {
		if r.rng.IntN(30) == 0 {
			return pick(r.modelHarness, []float64{1e6, -1e6, 999999.99})
		}
		return pick(r.modelHarness, []float64{-5, -3, -1, -0.5, 0, 0, 0.25, 1, 1, 2, 3, 5, 7.5, -0.01, 0.01, 12.34})
	}
	if r.rng.IntN(30) == 0 {
		// Accumulate would sum two of 1e200 past what the model's float
		// adds alike; the others keep them as they are.
		if r.c.policy == lb.Accumulate {
			return pick(r.modelHarness, []float64{1e15, -1e15})
		}
		return pick(r.modelHarness, []float64{1e15, -1e15, 1e200, -1e200})
	}
	return pick(r.modelHarness, []float64{-5, -3, -1, -0.5, 0, 0, 0.25, 1, 1, 2, 3, 5, 7.5, -1e-3, 0.1, 0.2})
}

func (r *comboRun) member() string { return pick(r.modelHarness, comboPool) }

// at draws a submission time: now, a few seconds back (often the day
// before, just after midnight), or late on the day before; withTime is
// false for now, submitted without WithTime.
func (r *comboRun) at() (at time.Time, withTime bool) {
	now := r.clock.Now()
	switch x := r.rng.IntN(10); {
	case x < 4:
		return now, false
	case x < 8:
		return now.Add(-time.Duration(r.rng.IntN(5000)) * time.Millisecond), true
	default:
		return comboDayStart(now).Add(-time.Duration(1+r.rng.IntN(600)) * time.Second), true
	}
}

// sameStanding compares standings, the percentile within rounding.
func sameStanding(a, b lb.Standing) bool {
	return a.Entry == b.Entry && a.Total == b.Total && math.Abs(a.Percentile-b.Percentile) < 1e-9
}

// sameEntries compares entry lists, nil and empty alike.
func sameEntries(want, got []lb.Entry) bool {
	return (len(want) == 0 && len(got) == 0) || reflect.DeepEqual(want, got)
}

// apply applies member's score at at to the model and returns what each
// window of the board's Result must say (closed for an expired day); ok is
// false, and the model unchanged, when the board must refuse it.
func (r *comboRun) apply(member string, score float64, at time.Time) (want []lb.WindowResult, closed []bool, ok bool) {
	keys := r.m.liveKeys(at, r.clock.Now())
	rows := make([]comboRow, len(keys))
	for i, k := range keys {
		if k == "" {
			continue
		}
		if rows[i], ok = r.m.next(k, member, score, r.m.slot(at)); !ok {
			return nil, nil, false
		}
	}
	want, closed = make([]lb.WindowResult, len(keys)), make([]bool, len(keys))
	for i, k := range keys {
		if k == "" {
			closed[i] = true
			continue
		}
		wr := lb.WindowResult{Previous: lb.Entry{Member: member}}
		if st, ok := r.m.standing(k, member); ok {
			wr.Previous = st.Entry
		}
		old, present := r.m.board(k)[member]
		r.m.board(k)[member] = rows[i]
		wr.Changed = !present || old.score != rows[i].score
		wr.Standing, _ = r.m.standing(k, member)
		want[i] = wr
	}
	return want, closed, true
}

// applyMany applies a batch submitted now at once; a board refuses a batch
// as a whole, so when the model refuses one member it is left as it was.
func (r *comboRun) applyMany(batch map[string]float64) bool {
	saved := r.m.snapshot()
	for mem, sc := range batch {
		if _, _, ok := r.apply(mem, sc, r.clock.Now()); !ok {
			r.m.boards = saved
			return false
		}
	}
	return true
}

// compareResult compares a Submit's Result with the model's windows, and
// its top-level fields with the first (default) window's.
func (r *comboRun) compareResult(what string, got lb.Result, want []lb.WindowResult, closed []bool) {
	if len(got.Windows) != len(want) {
		r.failf("%s: %d windows, want %d", what, len(got.Windows), len(want))
	}
	for i, w := range want {
		g := got.Windows[i]
		if g.Closed != closed[i] {
			r.failf("%s window %d Closed=%v, want %v", what, i, g.Closed, closed[i])
		}
		if closed[i] {
			continue
		}
		if g.Previous != w.Previous || !sameStanding(g.Standing, w.Standing) || g.Changed != w.Changed {
			r.failf("%s window %d (%s %s): Previous=%+v Standing=%+v Changed=%v, want %+v %+v %v",
				what, i, g.Window, g.Period, g.Previous, g.Standing, g.Changed, w.Previous, w.Standing, w.Changed)
		}
	}
	if !sameStanding(got.Standing, want[0].Standing) || got.Previous != want[0].Previous || got.Changed != want[0].Changed {
		r.failf("%s: Result %+v/%+v/%v, want the default window's %+v/%+v/%v",
			what, got.Standing, got.Previous, got.Changed, want[0].Standing, want[0].Previous, want[0].Changed)
	}
}

// comboSubmission is one drawn Submit.
type comboSubmission struct {
	member   string
	score    float64
	at       time.Time
	withTime bool
	data, id string
	// board is the board written to: the run's, or its swapped twin.
	board   *lb.Leaderboard
	swapped bool
}

func (s comboSubmission) String() string {
	via := ""
	if s.swapped {
		via = " via the swapped layout"
	}
	return fmt.Sprintf("Submit(%q, %v, at=%s withTime=%v, data=%q, id=%q)%s",
		s.member, s.score, s.at.Format("2006-01-02T15:04:05.000000"), s.withTime, s.data, s.id, via)
}

func (s comboSubmission) options() []lb.SubmitOption {
	var opts []lb.SubmitOption
	if s.withTime {
		opts = append(opts, lb.WithTime(s.at))
	}
	if s.data != "" {
		opts = append(opts, lb.WithData(s.data))
	}
	if s.id != "" {
		opts = append(opts, lb.WithID(s.id))
	}
	return opts
}

func (r *comboRun) drawSubmission() comboSubmission {
	s := comboSubmission{member: r.member(), score: r.score(), board: r.board}
	s.at, s.withTime = r.at()
	if r.rng.IntN(4) == 0 {
		s.data = pick(r.modelHarness, modelData)
	}
	if r.rng.IntN(5) == 0 {
		s.id, s.member = r.drawID(s.member)
	}
	if r.filled && r.swapped != nil && r.rng.IntN(3) == 0 {
		s.board, s.swapped = r.swapped, true
	}
	return s
}

// drawID draws a fresh id or, half the time, one sent before. A sharded
// board without a store remembers ids per partition of members (WithID's
// documentation), so there a retry is sent as the same member.
func (r *comboRun) drawID(member string) (id, as string) {
	if len(r.usedIDs) > 0 && r.rng.IntN(2) == 0 {
		id = pick(r.modelHarness, r.usedIDs)
		if r.c.bounds != nil && !r.c.store {
			member = r.idMember[id]
		}
		return id, member
	}
	r.idSeq++
	return fmt.Sprintf("id-%d", r.idSeq), member
}

func (r *comboRun) submit() {
	s := r.drawSubmission()
	what := s.String()
	r.logf("%s", what)
	got, err := s.board.Submit(r.ctx, s.member, s.score, s.options()...)
	if s.id != "" && r.m.ids[s.id] {
		if err != nil || !got.Duplicate {
			r.failf("%s: a retried id: %+v, %v; want Duplicate", what, got, err)
		}
		r.stats["duplicate"]++
		return
	}
	want, closed, ok := r.apply(s.member, s.score, s.at)
	if !ok {
		if !errors.Is(err, lb.ErrPrecision) {
			r.failf("%s: %v; want ErrPrecision (an Accumulate total beyond MaxScore)", what, err)
		}
		r.stats["refused"]++
		return
	}
	if err != nil || got.Duplicate {
		r.failf("%s: Duplicate=%v, %v", what, got.Duplicate, err)
	}
	if s.id != "" {
		r.m.ids[s.id] = true
		r.usedIDs = append(r.usedIDs, s.id)
		r.idMember[s.id] = s.member
	}
	if s.data != "" {
		r.m.data[s.member] = s.data
	}
	r.compareResult(what, got, want, closed)
	r.stats["submit"]++
}

// submitMany submits a batch of up to five members; with bulk, hundreds
// of members (more than MaxN) over a few scores, for chunked reads, walks
// and RemoveBetween.
func (r *comboRun) submitMany(batch map[string]float64) {
	what := fmt.Sprintf("SubmitMany(%v)", batch)
	if len(batch) > 10 {
		what = fmt.Sprintf("SubmitMany(%d bulk members)", len(batch))
	}
	r.logf("%s", what)
	err := r.board.SubmitMany(r.ctx, batch)
	if !r.applyMany(batch) {
		if !errors.Is(err, lb.ErrPrecision) {
			r.failf("%s: %v; want ErrPrecision", what, err)
		}
		r.stats["refused"]++
		return
	}
	if err != nil {
		r.failf("%s: %v", what, err)
	}
	r.stats["submitMany"]++
}

func (r *comboRun) submitFew() {
	batch := map[string]float64{}
	for range 1 + r.rng.IntN(5) {
		batch[r.member()] = r.score()
	}
	r.submitMany(batch)
}

func (r *comboRun) bulk() {
	if r.bulks >= 2 {
		return
	}
	r.bulks++
	batch := map[string]float64{}
	for i := range 300 + r.rng.IntN(900) {
		batch[fmt.Sprintf("bulk:%04d", r.rng.IntN(1400))] = []float64{-1, 0, 0.25, 1, 3, 7.5}[i%6]
	}
	r.submitMany(batch)
}

// comboBatched is one submission through the Batcher.
type comboBatched struct {
	member   string
	score    float64
	at       time.Time
	withTime bool
}

func (s comboBatched) String() string {
	return fmt.Sprintf("(%q, %v, at=%s withTime=%v)", s.member, s.score, s.at.Format("2006-01-02T15:04:05.000000"), s.withTime)
}

// drawBatch draws distinct members and, half the time, a second
// submission of the first one where the order the Batcher folds them in
// seldom changes the outcome: KeepBest keeps the best whatever the order,
// and Accumulate adds whole numbers at one time, exactly to a whole total
// (batchOrderFree leaves out the batches whose order does matter).
func (r *comboRun) drawBatch() []comboBatched {
	var subs []comboBatched
	seen := map[string]bool{}
	for range 1 + r.rng.IntN(4) {
		s := comboBatched{member: r.member(), score: r.score()}
		if seen[s.member] {
			continue
		}
		seen[s.member] = true
		if math.Abs(s.score) >= 1e6 {
			s.score = 2 // a total beyond MaxScore would make the order matter
		}
		s.at, s.withTime = r.at()
		subs = append(subs, s)
	}
	if r.rng.IntN(2) == 0 && r.c.policy != lb.Replace {
		again := subs[0]
		again.score = float64(r.rng.IntN(7) - 3)
		if r.c.policy == lb.Accumulate {
			subs[0].score = math.Round(subs[0].score)
		} else {
			again.at, again.withTime = r.at()
		}
		subs = append(subs, again)
	}
	return subs
}

// sendBatch submits subs through the Batcher at once, so they share a
// flush.
func (r *comboRun) sendBatch(subs []comboBatched) ([]lb.Result, []error) {
	var wg sync.WaitGroup
	res, errs := make([]lb.Result, len(subs)), make([]error, len(subs))
	for i, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var opts []lb.SubmitOption
			if s.withTime {
				opts = append(opts, lb.WithTime(s.at))
			}
			res[i], errs[i] = r.batcher.Submit(r.ctx, s.member, s.score, opts...)
		}()
	}
	wg.Wait()
	return res, errs
}

func (r *comboRun) batch() {
	if r.batcher == nil {
		return
	}
	subs := r.drawBatch()
	if !r.batchOrderFree(subs) {
		return
	}
	r.logf("Batcher %v", subs)
	res, errs := r.sendBatch(subs)
	var want []lb.WindowResult
	var closed []bool
	for i, s := range subs {
		if errs[i] != nil {
			r.failf("Batcher.Submit%v: %v", s, errs[i])
		}
		want, closed, _ = r.apply(s.member, s.score, s.at)
	}
	// Results of submissions sharing a flush depend on their order; a
	// lone one's is exact.
	if len(subs) == 1 {
		r.compareResult(fmt.Sprintf("Batcher.Submit%v", subs[0]), res[0], want, closed)
	}
	r.stats["batch"]++
}

// batchOrderFree reports whether the model ends the same whichever of a
// member's two submissions in subs applies first, refusing neither: the
// callers submit at once, in no set order. A batch the model would refuse
// in part is not sent (which submission the board refuses would depend on
// the order), nor one whose order changes a total: a second submission
// that takes a total near MaxScore past it only when it comes first, or
// whole numbers added to a total that is not a whole number, which
// float64 rounds differently in each order. The model is left as it was.
func (r *comboRun) batchOrderFree(subs []comboBatched) bool {
	saved := r.m.snapshot()
	defer func() { r.m.boards = saved }()
	orders := [][]comboBatched{subs}
	if n := len(subs); n > 1 && subs[n-1].member == subs[0].member {
		swapped := slices.Clone(subs)
		swapped[0], swapped[n-1] = swapped[n-1], swapped[0]
		orders = append(orders, swapped)
	}
	var ends []map[string]map[string]comboRow
	for _, order := range orders {
		r.m.boards = cloneBoards(saved)
		for _, s := range order {
			if _, _, ok := r.apply(s.member, s.score, s.at); !ok {
				return false
			}
		}
		ends = append(ends, r.m.boards)
	}
	return len(ends) == 1 || reflect.DeepEqual(ends[0], ends[1])
}

// jump moves the clock a day or so ahead: retained periods close.
func (r *comboRun) jump() {
	if r.jumps >= 2 {
		return
	}
	r.jumps++
	d := 20*time.Hour + time.Duration(r.rng.IntN(8*3600))*time.Second
	r.clock.Set(r.clock.Now().Add(d))
	r.logf("clock jumps %v", d)
	// Redis remembers ids for the dedupe window (24h): no retries across a
	// jump.
	r.usedIDs = nil
	r.stats["jump"]++
}

// window draws the window a Set, RemoveBetween or Reset goes to.
func (r *comboRun) window() (key string, q lb.Query, name string) {
	if r.rng.IntN(2) == 0 {
		return modelDayKey(r.clock.Now()), lb.In(lb.Daily()), "daily"
	}
	return "alltime", lb.In(lb.AllTime()), "alltime"
}

func (r *comboRun) set() {
	key, q, wn := r.window()
	mem, sc := r.member(), r.score()
	r.logf("Set(%q, %v, %s)", mem, sc, wn)
	if err := r.board.Set(r.ctx, mem, sc, q); err != nil {
		r.failf("Set(%q, %v, %s): %v", mem, sc, wn, err)
	}
	r.m.board(key)[mem] = r.m.row(sc, r.m.slot(r.clock.Now()))
	r.stats["set"]++
}

// comboBounds are score ranges' ends: the pool's scores, between them,
// and far beyond.
var comboBounds = []float64{math.Inf(-1), -5, -1.5, -0.5, 0, 0.1, 0.25, 1, 2, 3.5, 7.5, 1e15, math.Inf(1), 0.005, -0.015, -1e300, 1e7}

func (r *comboRun) scoreRange() (lo, hi float64) {
	a, b := pick(r.modelHarness, comboBounds), pick(r.modelHarness, comboBounds)
	return min(a, b), max(a, b)
}

func (r *comboRun) removeBetween() {
	key, q, wn := r.window()
	lo, hi := r.scoreRange()
	r.logf("RemoveBetween(%v, %v, %s)", lo, hi, wn)
	n, err := r.board.RemoveBetween(r.ctx, lo, hi, q)
	if err != nil {
		r.failf("RemoveBetween(%v, %v, %s): %v", lo, hi, wn, err)
	}
	var want int64
	b := r.m.board(key)
	for mem, row := range b {
		if row.score >= lo && row.score <= hi {
			delete(b, mem)
			want++
		}
	}
	if n != want {
		r.failf("RemoveBetween(%v, %v, %s) removed %d, want %d", lo, hi, wn, n, want)
	}
	r.stats["removeBetween"]++
}

// remove removes members from every readable period, and their data.
func (r *comboRun) remove() {
	ms := r.members(comboPool, modelUnknown, 3)
	r.logf("Remove(%q)", ms)
	if err := r.board.Remove(r.ctx, ms...); err != nil {
		r.failf("Remove(%q): %v", ms, err)
	}
	keys := []string{"alltime"}
	for _, d := range r.m.readableDays(r.clock.Now()) {
		keys = append(keys, modelDayKey(d))
	}
	for _, mem := range ms {
		for _, k := range keys {
			delete(r.m.board(k), mem)
		}
		delete(r.m.data, mem)
	}
}

func (r *comboRun) reset() {
	key, q, wn := r.window()
	r.logf("Reset(%s)", wn)
	if err := r.board.Reset(r.ctx, q); err != nil {
		r.failf("Reset(%s): %v", wn, err)
	}
	delete(r.m.boards, key)
	r.stats["reset"]++
}

// shadowOp fills the shadow layout (the first step of a move), drops it,
// or checks the layouts, on boards with a shadow.
func (r *comboRun) shadowOp() {
	if r.c.shadow == nil {
		return
	}
	switch r.rng.IntN(4) {
	case 0, 1:
		r.logf("FillShadow")
		rep, err := r.board.FillShadow(r.ctx)
		if err != nil {
			r.failf("FillShadow: %v", err)
		}
		r.logf("FillShadow -> %+v", rep)
		r.filled = true
		r.stats["fill"]++
	case 2:
		r.logf("DropShadow")
		if err := r.board.DropShadow(r.ctx); err != nil {
			r.failf("DropShadow: %v", err)
		}
		r.filled = false
		r.stats["drop"]++
	case 3:
		r.checkLayout()
	}
}

// checkLayout requires Check to find every shard and partition of a
// sharded board clean, the shadow's too once filled (an unfilled shadow
// lacks what was written before it).
func (r *comboRun) checkLayout() {
	if r.c.bounds == nil {
		return
	}
	for _, q := range [][]lb.Query{nil, {lb.In(lb.Daily())}} {
		reps, err := r.board.Check(r.ctx, false, q...)
		if err != nil {
			r.failf("Check%v: %v", q, err)
		}
		for _, rep := range reps {
			if !rep.Clean() && (r.filled || !rep.Shadow) {
				r.failf("Check%v: not clean (shadow filled=%v): %+v", q, r.filled, rep)
			}
		}
	}
}

// rebuild wipes the board's keys, as a Redis restart without persistence
// does, and rebuilds them from the store: every read must match again.
// Rebuild restores standings, not data.
func (r *comboRun) rebuild() {
	if r.store == nil {
		return
	}
	r.logf("wipe + Rebuild")
	r.b.Wipe(r.t, r.name)
	rep, err := r.board.Rebuild(r.ctx)
	if err != nil || len(rep.Refused) > 0 {
		r.failf("Rebuild: %+v, %v", rep, err)
	}
	r.logf("Rebuild -> periods=%d members=%d", rep.Periods, rep.Members)
	r.m.data = map[string]string{}
	r.filled = false
	r.stats["rebuild"]++
	r.checkAll("after Rebuild")
}

// ---- checks ----

// comboView is one way to read the board and the model period it must
// match.
type comboView struct {
	name string
	key  string
	q    []lb.Query
	// full reads every member and page; the checks between steps sample
	// them, which keeps the suite's run short.
	full bool
}

// views are all time, today, and each earlier day still readable; the
// checks between steps read all time and one of the days in turn.
func (r *comboRun) views(full bool) []comboView {
	vs := []comboView{{"default", "alltime", nil, full}}
	for i, d := range r.m.readableDays(r.clock.Now()) {
		if i == 0 {
			vs = append(vs, comboView{"today", modelDayKey(d), []lb.Query{lb.In(lb.Daily())}, full})
			continue
		}
		vs = append(vs, comboView{"day-" + strconv.Itoa(i), modelDayKey(d), []lb.Query{lb.In(lb.Daily()), lb.At(d.Add(3 * time.Hour))}, full})
	}
	if !full {
		return []comboView{vs[0], vs[1+(r.step/comboCheckEvery)%(len(vs)-1)]}
	}
	return vs
}

// checkAll compares board (and the swapped twin, once filled) with the
// model. With replica reads or a hot top a difference is given a few
// seconds to go (replication delay, cache invalidation) before it counts.
// Only the final checks (why "at the end", "after Rebuild") read every
// member and view.
func (r *comboRun) checkAll(why string) {
	r.t.Helper()
	boards := []*lb.Leaderboard{r.board}
	if r.filled && r.swapped != nil {
		boards = append(boards, r.swapped)
	}
	for i, board := range boards {
		deadline := time.Now().Add(4 * time.Second)
		tries := 1
		full := why != "between steps"
		err := r.checkOnce(board, full)
		for err != nil && (r.c.replica || r.c.hot > 0) && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
			tries++
			err = r.checkOnce(board, full)
		}
		if err != nil {
			r.failf("check %s (board %d of %d, swapped=%v, %d tries): %v", why, i+1, len(boards), i == 1, tries, err)
		}
		if tries > 1 {
			r.stats["retried"]++
		}
	}
	r.checkLayout()
}

// checkOnce compares every read of board with the model and returns the
// first difference.
func (r *comboRun) checkOnce(board *lb.Leaderboard, full bool) error {
	if err := r.checkPeriods(board); err != nil {
		return err
	}
	for _, v := range r.views(full) {
		all := r.m.sorted(v.key)
		for _, check := range []func(*lb.Leaderboard, comboView, []lb.Entry) error{
			r.checkTop, r.checkRanks, r.checkRanges, r.checkCutoffs, r.checkAmong,
			r.checkBetween, r.checkAroundScore, r.checkWalk, r.checkAround,
		} {
			if err := check(board, v, all); err != nil {
				return fmt.Errorf("view %s: %w", v.name, err)
			}
		}
	}
	return nil
}

// checkPeriods requires the first expired day to read ErrExpired, and
// Periods to list the readable days with their counts.
func (r *comboRun) checkPeriods(board *lb.Leaderboard) error {
	now := r.clock.Now()
	days := r.m.readableDays(now)
	expired := days[len(days)-1].Add(-21 * time.Hour)
	if _, err := board.Count(r.ctx, lb.In(lb.Daily()), lb.At(expired)); !errors.Is(err, lb.ErrExpired) {
		return fmt.Errorf("Count At(%s), an expired day: %v, want ErrExpired", expired, err)
	}
	ps, err := board.Periods(r.ctx, lb.In(lb.Daily()))
	var want []lb.PeriodInfo
	for _, d := range days {
		want = append(want, lb.PeriodInfo{Period: lb.Daily().Period(d), Members: int64(len(r.m.boards[modelDayKey(d)]))})
	}
	if err != nil || !reflect.DeepEqual(want, ps) {
		return fmt.Errorf("Periods(Daily) = %+v, %v; want %+v", ps, err, want)
	}
	return nil
}

// checkTop reads Count, Top and Top with data.
func (r *comboRun) checkTop(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	if n, err := board.Count(r.ctx, v.q...); err != nil || n != int64(len(all)) {
		return fmt.Errorf("Count = %d, %v; want %d", n, err, len(all))
	}
	for _, k := range []int{1, 2, 3, 5, 1000} {
		got, err := board.Top(r.ctx, k, v.q...)
		if want := all[:min(k, len(all))]; err != nil || !sameEntries(want, got) {
			return fmt.Errorf("Top(%d) = %v, %v;\nwant %v", k, got, err, want)
		}
	}
	want := make([]lb.Entry, min(1000, len(all)))
	for i := range want {
		want[i] = all[i]
		want[i].Data = r.m.data[all[i].Member]
	}
	got, err := board.Top(r.ctx, 1000, append(slices.Clone(v.q), lb.IncludeData())...)
	if err != nil || !sameEntries(want, got) {
		return fmt.Errorf("Top(1000, IncludeData) = %v, %v;\nwant %v", got, err, want)
	}
	return nil
}

// checkRanks reads the Rank of the pool's and unknown members (of a few
// of them between steps), and all of them at once with Ranks (an unranked
// member gets its name and the total).
func (r *comboRun) checkRanks(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	members := append(slices.Clone(comboPool), modelUnknown...)
	one := members
	if !v.full {
		one = r.members(comboPool, modelUnknown, 5)
	}
	for _, mem := range one {
		got, err := board.Rank(r.ctx, mem, v.q...)
		want, ok := r.m.standing(v.key, mem)
		if !ok && !errors.Is(err, lb.ErrNotRanked) {
			return fmt.Errorf("Rank(%q) = %+v, %v; want ErrNotRanked", mem, got, err)
		}
		if ok && (err != nil || !sameStanding(want, got)) {
			return fmt.Errorf("Rank(%q) = %+v, %v; want %+v", mem, got, err, want)
		}
	}
	sts, err := board.Ranks(r.ctx, members, v.q...)
	if err != nil || len(sts) != len(members) {
		return fmt.Errorf("Ranks(%q) = %v, %v", members, sts, err)
	}
	for i, mem := range members {
		want, ok := r.m.standing(v.key, mem)
		if !ok {
			want = lb.Standing{Entry: lb.Entry{Member: mem}, Total: int64(len(all))}
		}
		if !sameStanding(want, sts[i]) {
			return fmt.Errorf("Ranks[%q] = %+v; want %+v", mem, sts[i], want)
		}
	}
	return nil
}

// checkRanges reads Range at the ends and past them, and Page through the
// board (the middle pages sampled: of a long board, or between steps).
func (r *comboRun) checkRanges(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	total := int64(len(all))
	for _, fr := range [][2]int64{{1, 1}, {1, 3}, {2, 5}, {3, total + 2}, {total, total + 1}, {total / 2, total/2 + 999}, {max(1, total-998), total + 1}} {
		if fr[0] < 1 || fr[1] < fr[0] || fr[1]-fr[0]+1 > lb.MaxN {
			continue
		}
		got, err := board.Range(r.ctx, fr[0], fr[1], v.q...)
		want := all[min(fr[0]-1, total):min(fr[1], total)]
		if err != nil || !sameEntries(want, got) {
			return fmt.Errorf("Range(%d, %d) = %v, %v; want %v", fr[0], fr[1], got, err, want)
		}
	}
	for _, size := range []int{1, 2, 4, 333, 1000} {
		pages := (len(all)+size-1)/size + 1
		for num := 1; num <= pages; num++ {
			if (pages > 12 || !v.full) && num > 2 && num < pages-1 && num%37 != 0 {
				continue
			}
			p, err := board.Page(r.ctx, num, size, v.q...)
			lo := min((num-1)*size, len(all))
			want := all[lo:min(lo+size, len(all))]
			if err != nil || p.Total != total || !sameEntries(want, p.Entries) {
				return fmt.Errorf("Page(%d, %d) = %+v, %v; want %v of %d", num, size, p, err, want, total)
			}
		}
	}
	return nil
}

// checkCutoffs reads Cutoff at the suite's percents.
func (r *comboRun) checkCutoffs(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	total := int64(len(all))
	for _, pct := range modelPercents {
		got, err := board.Cutoff(r.ctx, pct, v.q...)
		if total == 0 {
			if !errors.Is(err, lb.ErrNotRanked) {
				return fmt.Errorf("Cutoff(%v) of an empty board = %+v, %v; want ErrNotRanked", pct, got, err)
			}
			continue
		}
		if want := all[cutoffAt(total, pct)-1]; err != nil || got != want {
			return fmt.Errorf("Cutoff(%v) = %+v, %v; want %+v", pct, got, err, want)
		}
	}
	return nil
}

// checkAmong reads a few random groups of members (repeats and unknown
// members too) ranked among themselves.
func (r *comboRun) checkAmong(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	for range 3 {
		ms := r.members(comboPool, modelUnknown, 6)
		got, err := board.Among(r.ctx, ms, v.q...)
		var want []lb.Entry
		for _, e := range all {
			if !slices.Contains(ms, e.Member) {
				continue
			}
			e.Rank = int64(len(want) + 1)
			if r.c.rank == lb.Competition && len(want) > 0 && want[len(want)-1].Score == e.Score {
				e.Rank = want[len(want)-1].Rank
			}
			want = append(want, e)
		}
		if err != nil || !sameEntries(want, got) {
			return fmt.Errorf("Among(%q) = %v, %v; want %v", ms, got, err, want)
		}
	}
	return nil
}

// checkBetween reads Between and CountBetween over random score ranges.
func (r *comboRun) checkBetween(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	for range 4 {
		lo, hi := r.scoreRange()
		var in []lb.Entry
		for _, e := range all {
			if e.Score >= lo && e.Score <= hi {
				in = append(in, e)
			}
		}
		for _, n := range []int{1, 3, lb.MaxN} {
			got, err := board.Between(r.ctx, lo, hi, n, v.q...)
			if want := in[:min(n, len(in))]; err != nil || !sameEntries(want, got) {
				return fmt.Errorf("Between(%v, %v, %d) = %v, %v; want %v", lo, hi, n, got, err, want)
			}
		}
		if c, err := board.CountBetween(r.ctx, lo, hi, v.q...); err != nil || c != int64(len(in)) {
			return fmt.Errorf("CountBetween(%v, %v) = %d, %v; want %d", lo, hi, c, err, len(in))
		}
	}
	return nil
}

// checkAroundScore reads the place a score would take and its
// neighbours.
func (r *comboRun) checkAroundScore(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	for range 3 {
		x := pick(r.modelHarness, []float64{-5, -1, 0, 0.25, 1, 2, 7.5, -2.5, 0.3, 100, -0.01, 0.005, 1e7, -1e7, 1e300})
		better := 0
		for _, e := range all {
			if r.m.better(e.Score, x) {
				better++
			}
		}
		for _, radius := range []int{0, 1, 3, lb.MaxRadius} {
			place, got, err := board.AroundScore(r.ctx, x, radius, v.q...)
			want := all[max(0, better-radius):min(len(all), better+radius)]
			if err != nil || place != int64(better+1) || !sameEntries(want, got) {
				return fmt.Errorf("AroundScore(%v, %d) = %d %v, %v; want %d %v", x, radius, place, got, err, better+1, want)
			}
		}
	}
	return nil
}

// checkWalk walks the whole board with All.
func (r *comboRun) checkWalk(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	var walked []lb.Entry
	for e, err := range board.All(r.ctx, v.q...) {
		if err != nil {
			return fmt.Errorf("All: %v after %d entries", err, len(walked))
		}
		walked = append(walked, e)
	}
	if !sameEntries(all, walked) {
		return fmt.Errorf("All = %v; want %v", walked, all)
	}
	return nil
}

// checkAround reads each member's neighbours: on a short board every
// third member (every one when full), on a long one the ends, the pool's
// members and a sample.
func (r *comboRun) checkAround(board *lb.Leaderboard, v comboView, all []lb.Entry) error {
	if _, err := board.Around(r.ctx, modelUnknown[0], 1, v.q...); !errors.Is(err, lb.ErrNotRanked) {
		return fmt.Errorf("Around(%q) of an unranked member: %v, want ErrNotRanked", modelUnknown[0], err)
	}
	for pos, e := range all {
		if len(all) > 40 {
			if pos > 5 && pos < len(all)-5 && pos%97 != 0 && !slices.Contains(comboPool, e.Member) {
				continue
			}
		} else if !v.full && pos%3 != 0 && pos != len(all)-1 {
			continue
		}
		for _, radius := range []int{0, 1, 2} {
			width := 2*radius + 1
			start := min(max(pos-radius, 0), max(0, len(all)-width))
			want := all[start:min(start+width, len(all))]
			got, err := board.Around(r.ctx, e.Member, radius, v.q...)
			if err != nil || !sameEntries(want, got) {
				return fmt.Errorf("Around(%q, %d) = %v, %v; want %v", e.Member, radius, got, err, want)
			}
		}
	}
	return nil
}

// ---- setup and loop ----

// comboClient is the client a combination's board talks through: with a
// hot top one that caches (rueidis's client-side caching, which the hot
// top reads through), with replica reads one that sends reads to
// replicas. miniredis has neither.
func comboClient(t *testing.T, b *testredis.Backend, c comboCase) rueidis.Client {
	switch {
	case b.Mini != nil || (!c.replica && c.hot == 0):
		return b.Client
	case !c.replica:
		return b.Caching(t)
	case b.Name == "cluster":
		return replicaReadingCluster(t)
	}
	return replicaReadingRedis(t)
}

// replicaReadingRedis is replicaReadingCluster for the standalone Redis
// and its replica (REDIS_REPLICA_ADDR). Without them it skips, or fails
// under CI=true, as testredis does.
func replicaReadingRedis(t *testing.T) rueidis.Client {
	t.Helper()
	opt, err := redisurl.Parse(testredis.URL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	opt.Standalone.ReplicaAddress = []string{testredis.ReplicaAddr()}
	opt.SendToReplicas = func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() }
	c, err := rueidis.NewClient(opt)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = c.Do(ctx, c.B().Get().Key("combo:replica-ping").Build()).Error()
		cancel()
		if rueidis.IsRedisNil(err) {
			err = nil
		}
	}
	if err != nil {
		what := fmt.Sprintf("a replica of %s at %s", redisurl.Redact(testredis.URL()), testredis.ReplicaAddr())
		if testredis.InCI() {
			t.Fatalf("%s is required under CI=true: %v", what, err)
		}
		t.Skipf("no %s (run the test command): %v", what, err)
	}
	t.Cleanup(c.Close)
	return c
}

// comboOptions are a board's options with bounds and shadow as its layout
// (the shadow's step of a move swaps them).
func comboOptions(t *testing.T, c comboCase, clock *testClock, bounds, shadow []float64, store *memStore) []lb.Option {
	opts := []lb.Option{
		lb.WithPolicy(c.policy), lb.WithOrder(c.order), lb.WithRanking(c.rank),
		lb.WithWindows(lb.AllTime(), lb.Daily()), lb.WithClock(clock.Now),
	}
	add := func(on bool, o lb.Option) {
		if on {
			opts = append(opts, o)
		}
	}
	if c.tie != 0 {
		opts = append(opts, lb.WithTieBreak(tieNew(t, c.tie == 2, comboTimeOrder)))
	}
	add(bounds != nil, lb.WithShards(bounds...))
	add(shadow != nil, lb.WithShadowShards(shadow...))
	add(c.hot > 0, lb.WithHotTop(c.hot))
	add(c.replica, lb.WithReplicaReads())
	add(c.hasRet, lb.WithRetention(c.retention))
	if store != nil {
		opts = append(opts, lb.WithStore(store))
	}
	return opts
}

// newComboRun builds the run's board (and its swapped twin and Batcher)
// for seed; a shift of LB_MODEL_SEED draws another combination too.
func newComboRun(t *testing.T, b *testredis.Backend, seed uint64) *comboRun {
	shift := modelSeedShift(t)
	c := drawCombo(seed + shift)
	replay := fmt.Sprintf("LB_COMBO_SEED=%d go test -race -count=1 -run 'TestComboModel/^%s$' .", seed, b.Name)
	if shift != 0 {
		replay = fmt.Sprintf("LB_MODEL_SEED=%d %s", shift, replay)
	}
	clock := &testClock{now: comboStart}
	r := &comboRun{
		modelHarness: newModelHarness(t, fmt.Sprintf("backend=%s seed=%d combo=%s (replay: %s)", b.Name, seed, c, replay), seed, 0xa77ac4),
		b:            b, c: c, clock: clock, name: shardName(t, b), stats: map[string]int{}, idMember: map[string]string{},
		m: &comboModel{c: c, boards: map[string]map[string]comboRow{}, data: map[string]string{}, ids: map[string]bool{}},
	}
	if c.store {
		r.store = newMemStore()
	}
	client := comboClient(t, b, c)
	var err error
	if r.board, err = lb.New(client, r.name, comboOptions(t, c, clock, c.bounds, c.shadow, r.store)...); err != nil {
		r.failf("New: %v", err)
	}
	if c.shadow != nil {
		if r.swapped, err = lb.New(client, r.name, comboOptions(t, c, clock, c.shadow, c.bounds, r.store)...); err != nil {
			r.failf("New with the layouts swapped: %v", err)
		}
	}
	if c.batcher {
		if r.batcher, err = r.board.NewBatcher(lb.WithBatchWindow(3 * time.Millisecond)); err != nil {
			r.failf("NewBatcher: %v", err)
		}
		t.Cleanup(func() { _ = r.batcher.Close(context.Background()) })
	}
	return r
}

// runCombo runs seed's workload on b, checking every comboCheckEvery
// steps and in full at the end (after a last Rebuild with a store).
func runCombo(t *testing.T, b *testredis.Backend, seed uint64, steps int) {
	r := newComboRun(t, b, seed)
	r.run(modelLoop{
		steps: steps, checkEvery: comboCheckEvery,
		// Each step moves the clock up to 12 s, across midnight early on.
		before: func() { r.clock.Set(r.clock.Now().Add(time.Duration(r.rng.IntN(12000)) * time.Millisecond)) },
		ops: []modelOp{
			{50, r.submit}, {8, r.submitFew}, {10, r.batch}, {4, r.set}, {2, r.removeBetween},
			{5, r.remove}, {1, r.reset}, {4, r.shadowOp}, {1, r.rebuild}, {1, r.bulk}, {1, r.jump},
		},
		check: func(last bool) {
			if last {
				r.checkAll("at the end")
				return
			}
			r.checkAll("between steps")
		},
	})
	r.rebuild()
	t.Logf("%s: %v, clock %s", r.label, r.stats, r.clock.Now().Format(time.RFC3339))
}

const comboCheckEvery = 20

// comboEnv reads a whole-number variable (0 when unset).
func comboEnv(t *testing.T, name string) uint64 {
	v := os.Getenv(name)
	if v == "" {
		return 0
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: want a whole number: %v", name, v, err)
	}
	return n
}

// TestComboModel runs, on each backend, a seeded workload on a board with
// a drawn combination of options (see drawCombo) and compares every read
// with a Go model.
//
// By default it runs comboSeeds, in parallel, comboSteps steps each:
// between them they cover each feature comboFeatures names. Variables:
//
//   - LB_COMBO_SECONDS=N soaks: seeds 1, 2, 3, ... one after the other,
//     comboSoakSteps steps each, for N seconds per backend, stopping at
//     the first failure;
//   - LB_COMBO_SEED=N runs seed N alone (the failure message prints the
//     command that replays a failing seed);
//   - LB_MODEL_SEED=N shifts every seed by N, as in the other model tests,
//     so the same seeds draw other combinations and workloads.
func TestComboModel(t *testing.T) {
	if missing := comboUncovered(comboSeeds); len(missing) > 0 {
		t.Fatalf("comboSeeds %v cover no combination with %v: pick seeds that do", comboSeeds, missing)
	}
	soak := time.Duration(comboEnv(t, "LB_COMBO_SECONDS")) * time.Second
	one := comboEnv(t, "LB_COMBO_SEED")
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		switch {
		case one != 0:
			t.Run(fmt.Sprintf("seed%d", one), func(t *testing.T) { runCombo(t, b, one, comboSoakSteps) })
		case soak > 0:
			start := time.Now()
			for seed := uint64(1); time.Since(start) < soak; seed++ {
				if !t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) { runCombo(t, b, seed, comboSoakSteps) }) {
					return
				}
			}
		default:
			for _, seed := range comboSeeds {
				t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
					t.Parallel()
					steps := comboSteps
					if b.Mini != nil {
						steps = comboSteps * 3 / 4 // miniredis's Lua is slow
					}
					runCombo(t, b, seed, steps)
				})
			}
		}
	})
}

// comboSteps keeps the default run within the suite's budget; a soak's
// longer runs let a board grow and periods close.
const (
	comboSteps     = 80
	comboSoakSteps = 160
)

// comboUncovered names the features of comboFeatures that no seed draws.
func comboUncovered(seeds []uint64) []string {
	var missing []string
	for name, has := range comboFeatures {
		if !slices.ContainsFunc(seeds, func(s uint64) bool { return has(drawCombo(s)) }) {
			missing = append(missing, name)
		}
	}
	sort.Strings(missing)
	return missing
}
