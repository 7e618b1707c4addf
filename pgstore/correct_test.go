package pgstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// The correction tests check every period both ways, from the kept
// standings and by the aggregation, against the model (modelCorrect), and
// the store's own check of the one against the other.

// aggregated is q's standings by the aggregation, whether the period's
// standings are kept or not.
func aggregated(t *testing.T, s *Store, q leaderboard.StandingsQuery) map[string]leaderboard.StoredStanding {
	t.Helper()
	from, args, err := s.standingsFrom(q)
	require.NoError(t, err)
	query, err := standingsSQL(q, from)
	require.NoError(t, err)
	got := map[string]leaderboard.StoredStanding{}
	_, err = s.stream(context.Background(), s.pool, query, args, func(st leaderboard.StoredStanding) error {
		got[st.Member] = st
		return nil
	})
	require.NoError(t, err)
	return got
}

// requireSame compares standings by value: scores with ==, times with
// Equal.
func requireSame(t *testing.T, want, got map[string]leaderboard.StoredStanding, what string) {
	t.Helper()
	require.Equal(t, len(want), len(got), "%s: %v, want %v", what, got, want)
	for member, w := range want {
		g, ok := got[member]
		require.True(t, ok, "%s: %s missing", what, member)
		require.True(t, w.Score == g.Score && w.At.Equal(g.At), "%s: %s is %v at %v, want %v at %v", what, member, g.Score, g.At, w.Score, w.At)
	}
}

// requireCorrected checks the period q names against the model of its log:
// kept standings, the aggregation, and CheckStandings.
func requireCorrected(t *testing.T, s *Store, k *keptOn, log []leaderboard.Submission, q leaderboard.StandingsQuery) {
	t.Helper()
	requireModel(t, s, k, log, q, true)
	want := modelStandings(log, q.Board, q.Policy, q.Order, q.From, q.To)
	requireSame(t, want, aggregated(t, s, q), fmt.Sprintf("%s/%s aggregated", q.Window, q.Period))
	require.Equal(t, leaderboard.StandingsCheck{Kept: true, Members: int64(len(want))}, check(t, s, q, false), "%s/%s", q.Window, q.Period)
}

// corrections counts board's rows in the corrections table.
func corrections(t *testing.T, s *Store, board string) int {
	t.Helper()
	var n int
	require.NoError(t, s.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+s.tCorrections+" WHERE board = $1", board).Scan(&n))
	return n
}

// TestCorrect walks one board per policy and order through a correction,
// later submissions (one at an earlier time, equal to the correction), a
// second correction, a removal after a correction and a reset after one,
// with the standings of the corrected all-time period written out by hand
// and every period checked against the model.
func TestCorrect(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	k := watch(s)
	for _, policy := range policies {
		for _, order := range orders {
			h := &handBoard{t: t, s: s, k: k, board: fmt.Sprintf("correct-%v-%v", policy, order), policy: policy, order: order,
				b0: blockWindow{name: "block", base: t0}.period(t0), logs: map[string][]leaderboard.Submission{}}
			h.later()
			h.dropped()
		}
	}
}

// handBoard is a board of TestCorrect, with the model's log of its two
// periods: all time, corrected, and the block b0 holding every time.
type handBoard struct {
	t      *testing.T
	s      *Store
	k      *keptOn
	board  string
	policy leaderboard.Policy
	order  leaderboard.Order
	b0     leaderboard.SubmissionPeriod
	logs   map[string][]leaderboard.Submission
}

// byPolicy is x's standing in all time under each policy.
type byPolicy map[leaderboard.Policy]leaderboard.StoredStanding

// at is minute minutes after t0, with a fraction of a microsecond the store
// drops.
func (h *handBoard) at(minute int) time.Time {
	return t0.Add(time.Duration(minute)*time.Minute + 700)
}

// st is a standing as stored.
func (h *handBoard) st(score float64, minute int) leaderboard.StoredStanding {
	return leaderboard.StoredStanding{Score: score, At: h.at(minute).Truncate(time.Microsecond)}
}

// all is st under every policy.
func (h *handBoard) all(score float64, minute int) byPolicy {
	st := h.st(score, minute)
	return byPolicy{leaderboard.KeepBest: st, leaderboard.Replace: st, leaderboard.Accumulate: st}
}

// best is KeepBest's choice under the board's order.
func (h *handBoard) best(high, low leaderboard.StoredStanding) leaderboard.StoredStanding {
	if h.order == leaderboard.LowestFirst {
		return low
	}
	return high
}

func (h *handBoard) add(member string, score float64, minute int) {
	h.t.Helper()
	sub := leaderboard.Submission{Board: h.board, Member: member, Score: score, At: h.at(minute), Policy: h.policy, Order: h.order,
		Periods: []leaderboard.SubmissionPeriod{allTime, h.b0}}
	_, err := h.s.Append(context.Background(), sub)
	require.NoError(h.t, err)
	sub.At = sub.At.Truncate(time.Microsecond)
	for _, p := range []string{allTime.Period, h.b0.Period} {
		h.logs[p] = append(h.logs[p], sub)
	}
}

func (h *handBoard) correct(member string, score float64, minute int) {
	h.t.Helper()
	c := leaderboard.Correction{Board: h.board, Member: member, Score: score, At: h.at(minute), Policy: h.policy, Order: h.order, Period: allTime}
	require.NoError(h.t, h.s.Correct(context.Background(), c))
	h.logs[allTime.Period] = modelCorrect(h.logs[allTime.Period], c)
}

// require checks all time by hand (x under the board's policy, others as
// given), then both periods against the model (b0 was never corrected).
func (h *handBoard) require(x byPolicy, others map[string]leaderboard.StoredStanding) {
	t := h.t
	t.Helper()
	want := map[string]leaderboard.StoredStanding{}
	for m, st := range others {
		st.Member, want[m] = m, st
	}
	if st, ok := x[h.policy]; ok {
		st.Member, want["x"] = "x", st
	}
	q := query(h.board, h.policy, h.order, allTime)
	requireSame(t, want, standings(t, h.s, q), "by hand")
	requireCorrected(t, h.s, h.k, h.logs[allTime.Period], q)
	requireCorrected(t, h.s, h.k, h.logs[h.b0.Period], query(h.board, h.policy, h.order, h.b0))
}

// later: a correction, then later submissions combined with it by the
// policy (KeepBest keeps the earliest time its best was reached), then a
// second correction that replaces the first and everything before.
func (h *handBoard) later() {
	h.t.Helper()
	y := map[string]leaderboard.StoredStanding{"y": h.st(1, 10)}
	h.add("x", 5, 10)
	h.add("x", 3, 20)
	h.add("y", 1, 10)
	h.correct("x", 4, 30)
	h.require(h.all(4, 30), y)
	h.add("x", 4, 25)
	h.require(byPolicy{leaderboard.KeepBest: h.st(4, 25), leaderboard.Replace: h.st(4, 25), leaderboard.Accumulate: h.st(8, 25)}, y)
	h.add("x", 6, 40)
	h.add("x", 2, 50)
	h.require(byPolicy{leaderboard.KeepBest: h.best(h.st(6, 40), h.st(2, 50)), leaderboard.Replace: h.st(2, 50),
		leaderboard.Accumulate: h.st(16, 50)}, y)

	h.correct("x", 1, 60)
	require.Equal(h.t, 1, corrections(h.t, h.s, h.board))
	h.require(h.all(1, 60), y)
	h.add("x", 2, 70)
	h.require(byPolicy{leaderboard.KeepBest: h.best(h.st(2, 70), h.st(1, 60)), leaderboard.Replace: h.st(2, 70),
		leaderboard.Accumulate: h.st(3, 70)}, y)
}

// dropped: a removal after a correction drops it with the rest; a
// correction after the removal counts; a reset after it drops it. A plain
// range counts every submission, corrections aside.
func (h *handBoard) dropped() {
	t, ctx := h.t, context.Background()
	t.Helper()
	y := map[string]leaderboard.StoredStanding{"y": h.st(1, 10)}
	require.NoError(t, h.s.Remove(ctx, leaderboard.Removal{Board: h.board, Members: []string{"x"}, At: h.at(75),
		Periods: []leaderboard.SubmissionPeriod{allTime}}))
	h.logs[allTime.Period] = modelRemove(h.logs[allTime.Period], h.board, "x")
	require.Zero(t, corrections(t, h.s, h.board))
	h.require(nil, y)
	h.add("x", 9, 80)
	h.require(h.all(9, 80), y)

	h.correct("y", 7, 85)
	h.require(h.all(9, 80), map[string]leaderboard.StoredStanding{"y": h.st(7, 85)})
	require.NoError(t, h.s.DeletePeriod(ctx, h.board, allTime, h.at(90)))
	h.logs[allTime.Period] = modelRemove(h.logs[allTime.Period], h.board, "")
	require.Zero(t, corrections(t, h.s, h.board))
	h.require(nil, nil)
	h.add("y", 2, 100)
	h.require(nil, map[string]leaderboard.StoredStanding{"y": h.st(2, 100)})

	q := leaderboard.StandingsQuery{Board: h.board, Policy: h.policy, Order: h.order}
	requireSame(t, modelStandings(h.logs[h.b0.Period], h.board, h.policy, h.order, time.Time{}, time.Time{}), standings(t, h.s, q), "plain range")
}

// TestCorrectMatchesModel runs random appends (one by one and in
// batches), corrections in the all-time period and in 4-hour blocks (now
// and then at a time outside the period corrected), removals, resets and
// retractions on one board per policy and order, and checks every period
// against the model, both ways, as it goes.
func TestCorrectMatchesModel(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	k := watch(s)
	rng := rand.New(rand.NewPCG(13, 2026))
	block := blockWindow{name: "block", base: t0}
	b0, b1 := block.period(t0), block.period(t0.Add(4*time.Hour))
	for _, policy := range policies {
		for _, order := range orders {
			w := &correctWorkload{t: t, s: s, rng: rng, board: fmt.Sprintf("model-%v-%v", policy, order), policy: policy, order: order,
				block: block, periods: []leaderboard.SubmissionPeriod{allTime, b0, b1},
				logs: map[string][]leaderboard.Submission{}, live: map[[2]string]bool{}}
			// A submission in both blocks first: every period is kept
			// from the start.
			w.append(1, b0)
			w.append(1, b1)
			for range 200 {
				switch r := rng.IntN(20); {
				case r < 11:
					w.append(1+rng.IntN(3), w.period())
				case r < 16:
					w.correct()
				case r < 17:
					w.remove()
				case r < 18:
					w.reset()
				case r < 19:
					w.retract()
				default:
					w.check(k)
				}
			}
			w.check(k)
		}
	}
}

// correctWorkload is TestCorrectMatchesModel's board and model: each
// period's log, and the corrections that should still be stored.
type correctWorkload struct {
	t       *testing.T
	s       *Store
	rng     *rand.Rand
	board   string
	policy  leaderboard.Policy
	order   leaderboard.Order
	block   blockWindow
	periods []leaderboard.SubmissionPeriod
	logs    map[string][]leaderboard.Submission // by period
	live    map[[2]string]bool                  // period, member
}

// period is a random period; all time stands for either block.
func (w *correctWorkload) period() leaderboard.SubmissionPeriod {
	return w.periods[w.rng.IntN(len(w.periods))]
}

// at is a random time in p (all time: in either block).
func (w *correctWorkload) at(p leaderboard.SubmissionPeriod) time.Time {
	if p.Start.IsZero() {
		p = w.periods[1+w.rng.IntN(len(w.periods)-1)]
	}
	return p.Start.Add(time.Duration(w.rng.Int64N(int64(p.End.Sub(p.Start)))))
}

func (w *correctWorkload) member() string { return fmt.Sprintf("p%d", w.rng.IntN(6)) }

var correctScores = []float64{1, 2, 0.1, 0.2, 1e16, -3, 0}

// append appends n submissions with times in p, one by one or in a batch.
func (w *correctWorkload) append(n int, p leaderboard.SubmissionPeriod) []leaderboard.Submission {
	t, ctx := w.t, context.Background()
	t.Helper()
	subs := make([]leaderboard.Submission, n)
	for i := range subs {
		at := w.at(p)
		subs[i] = leaderboard.Submission{Board: w.board, Member: w.member(), Score: correctScores[w.rng.IntN(len(correctScores))], At: at,
			Policy: w.policy, Order: w.order, Periods: []leaderboard.SubmissionPeriod{allTime, w.block.period(at)}}
	}
	if n == 1 && w.rng.IntN(2) == 0 {
		_, err := w.s.Append(ctx, subs[0])
		require.NoError(t, err)
	} else {
		_, err := w.s.AppendBatch(ctx, subs)
		require.NoError(t, err)
	}
	for _, sub := range subs {
		sub.At = sub.At.Truncate(time.Microsecond)
		for _, p := range w.periods {
			w.logs[p.Period] = append(w.logs[p.Period], sub)
		}
	}
	return subs
}

// correct corrects a random member in a random period, one time in ten at
// a time outside it (the correction then stands for the member's earlier
// submissions, and counts in no period: nothing of the member counts
// there until it submits again).
func (w *correctWorkload) correct() {
	w.t.Helper()
	p := w.period()
	at := w.at(p)
	if p != allTime && w.rng.IntN(10) == 0 {
		at = w.at(w.periods[3-slices.Index(w.periods, p)]) // the other block
	}
	c := leaderboard.Correction{Board: w.board, Member: w.member(), Score: correctScores[w.rng.IntN(len(correctScores))], At: at,
		Policy: w.policy, Order: w.order, Period: p}
	require.NoError(w.t, w.s.Correct(context.Background(), c))
	w.logs[p.Period] = modelCorrect(w.logs[p.Period], c)
	w.live[[2]string{p.Period, c.Member}] = true
}

// remove removes a random member from a random period, or from all.
func (w *correctWorkload) remove() {
	w.t.Helper()
	ps := []leaderboard.SubmissionPeriod{w.period()}
	if w.rng.IntN(3) == 0 {
		ps = w.periods
	}
	m := w.member()
	require.NoError(w.t, w.s.Remove(context.Background(), leaderboard.Removal{Board: w.board, Members: []string{m}, At: t0, Periods: ps}))
	for _, p := range ps {
		w.logs[p.Period] = modelRemove(w.logs[p.Period], w.board, m)
		delete(w.live, [2]string{p.Period, m})
	}
}

// reset resets a random period.
func (w *correctWorkload) reset() {
	w.t.Helper()
	p := w.period()
	require.NoError(w.t, w.s.DeletePeriod(context.Background(), w.board, p, t0))
	w.logs[p.Period] = modelRemove(w.logs[p.Period], w.board, "")
	for k := range w.live {
		if k[0] == p.Period {
			delete(w.live, k)
		}
	}
}

// retract appends a submission and retracts it, as Submit does when Redis
// refuses it: the kept standings it touched are recomputed, corrections
// included, and the model is as before.
func (w *correctWorkload) retract() {
	w.t.Helper()
	logs := map[string][]leaderboard.Submission{}
	for p, log := range w.logs {
		logs[p] = log
	}
	sub := w.append(1, w.period())
	require.NoError(w.t, w.s.Retract(context.Background(), sub))
	w.logs = logs
}

// check checks every period against the model, and the corrections stored.
func (w *correctWorkload) check(k *keptOn) {
	w.t.Helper()
	for _, p := range w.periods {
		requireCorrected(w.t, w.s, k, w.logs[p.Period], query(w.board, w.policy, w.order, p))
	}
	require.Equal(w.t, len(w.live), corrections(w.t, w.s, w.board))
}

// TestCorrectKeepsPeriods: a correction that is the first write to a
// period (a Set before any Submit in it) keeps the period; one at a time
// outside its period leaves the member nothing there; one in a period
// whose standings are not kept is aggregated, as everything else there.
func TestCorrectKeepsPeriods(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	block := blockWindow{name: "block", base: t0}
	b0, b1 := block.period(t0), block.period(t0.Add(4*time.Hour))
	for _, policy := range policies {
		board := fmt.Sprintf("first-%v", policy)
		c := leaderboard.Correction{Board: board, Member: "x", Score: 3, At: t0.Add(time.Hour), Policy: policy, Period: b0}
		require.NoError(t, s.Correct(ctx, c))
		exists, complete := periodState(t, s, board, b0.Window, b0.Period)
		require.True(t, exists && complete, "the first correction keeps the period")
		log := modelCorrect(nil, c)
		requireCorrected(t, s, k, log, query(board, policy, leaderboard.HighestFirst, b0))
		sub := leaderboard.Submission{Board: board, Member: "x", Score: 2, At: t0.Add(2 * time.Hour), Policy: policy,
			Periods: []leaderboard.SubmissionPeriod{allTime, b0}}
		_, err := s.Append(ctx, sub)
		require.NoError(t, err)
		log = append(log, sub)
		requireCorrected(t, s, k, log, query(board, policy, leaderboard.HighestFirst, b0))

		// Outside its period: x's earlier submissions in b0 stop counting,
		// and so does the correction.
		c.At, c.Score = t0.Add(5*time.Hour), 8
		require.NoError(t, s.Correct(ctx, c))
		log = modelCorrect(log, c)
		requireCorrected(t, s, k, log, query(board, policy, leaderboard.HighestFirst, b0))
		require.Empty(t, standings(t, s, query(board, policy, leaderboard.HighestFirst, b0)))

		// A period never written to, corrected outside it: not kept (it
		// was not created), and the correction makes it start incomplete.
		c.Period = b1
		c.At = t0.Add(time.Hour)
		require.NoError(t, s.Correct(ctx, c))
		exists, _ = periodState(t, s, board, b1.Window, b1.Period)
		require.False(t, exists)
		sub.At = t0.Add(6 * time.Hour)
		sub.Periods = []leaderboard.SubmissionPeriod{allTime, b1}
		_, err = s.Append(ctx, sub)
		require.NoError(t, err)
		exists, complete = periodState(t, s, board, b1.Window, b1.Period)
		require.True(t, exists)
		require.False(t, complete)
		requireModel(t, s, k, []leaderboard.Submission{sub}, query(board, policy, leaderboard.HighestFirst, b1), false)
	}

	// Under another policy than the period's: the correction alone is the
	// standing whatever the policy, so the period stays kept.
	board := "other-policy"
	sub := leaderboard.Submission{Board: board, Member: "x", Score: 2, At: t0, Policy: leaderboard.Accumulate,
		Periods: []leaderboard.SubmissionPeriod{allTime}}
	_, err := s.Append(ctx, sub)
	require.NoError(t, err)
	c := leaderboard.Correction{Board: board, Member: "x", Score: 5, At: t0, Policy: leaderboard.KeepBest, Period: allTime}
	require.NoError(t, s.Correct(ctx, c))
	requireCorrected(t, s, k, modelCorrect([]leaderboard.Submission{sub}, c), query(board, leaderboard.Accumulate, leaderboard.HighestFirst, allTime))
}

// TestCorrectAccumulateOverflow: totals that overflowed before a
// correction no longer count; after it, an overflowing total is summed in
// Go (Standings' fallback), correction first.
func TestCorrectAccumulateOverflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	big := 1.7e308
	add := func(member string, score float64) {
		_, err := s.Append(ctx, leaderboard.Submission{Board: "o", Member: member, Score: score, At: t0, Policy: leaderboard.Accumulate,
			Periods: []leaderboard.SubmissionPeriod{allTime}})
		require.NoError(t, err)
	}
	add("x", big)
	add("x", big)
	add("y", 1)
	q := query("o", leaderboard.Accumulate, leaderboard.HighestFirst, allTime)
	require.True(t, math.IsInf(anyOrder(t, s, q)["x"].Score, 1))
	require.NoError(t, s.Correct(ctx, leaderboard.Correction{Board: "o", Member: "x", Score: 2, At: t0, Policy: leaderboard.Accumulate, Period: allTime}))
	require.Equal(t, 2.0, standings(t, s, q)["x"].Score)
	add("x", big)
	add("x", big)
	got := anyOrder(t, s, q)
	require.True(t, math.IsInf(got["x"].Score, 1))
	require.Equal(t, 1.0, got["y"].Score)
	require.NoError(t, s.Correct(ctx, leaderboard.Correction{Board: "o", Member: "x", Score: -big, At: t0, Policy: leaderboard.Accumulate, Period: allTime}))
	add("x", -big)
	add("x", big)
	// -big - big overflows, then stays -Inf: added last, the correction
	// would have made it -big.
	require.True(t, math.IsInf(anyOrder(t, s, q)["x"].Score, -1), "the correction is added first")
}

// TestCorrectConcurrently corrects members while others append to them:
// every Append is before the correction or after it, in the log and in the
// kept standings alike, so the check is clean.
func TestCorrectConcurrently(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	for _, policy := range policies {
		board := fmt.Sprintf("conc-%v", policy)
		var wg sync.WaitGroup
		for g := range 5 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 40 {
					m := fmt.Sprintf("p%d", (g+i)%4)
					at := t0.Add(time.Duration(i) * time.Second)
					var err error
					if g == 0 && i%2 == 0 {
						err = s.Correct(ctx, leaderboard.Correction{Board: board, Member: m, Score: float64(i), At: at, Policy: policy, Period: allTime})
					} else {
						_, err = s.Append(ctx, leaderboard.Submission{Board: board, Member: m, Score: float64(g*100 + i), At: at, Policy: policy,
							Periods: []leaderboard.SubmissionPeriod{allTime}})
					}
					if !assertNoError(t, err) {
						return
					}
				}
			}()
		}
		wg.Wait()
		q := query(board, policy, leaderboard.HighestFirst, allTime)
		c := check(t, s, q, false)
		require.True(t, c.Kept)
		require.Zero(t, c.DifferCount, "%v", c.Differ)
		requireSame(t, aggregated(t, s, q), standings(t, s, q), "kept against aggregated")
	}
}

// TestCorrectRefusesBadInput: bad input returns a typed error and writes
// nothing, not even the period's row.
func TestCorrectRefusesBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	_, err := s.Append(ctx, leaderboard.Submission{Board: "bad", Member: "m", Score: 2, At: t0, Periods: []leaderboard.SubmissionPeriod{allTime}})
	require.NoError(t, err)
	before := boardSnapshot(t, s, "bad")
	good := leaderboard.Correction{Board: "bad", Member: "m", Score: 1, At: t0, Period: leaderboard.SubmissionPeriod{Window: "daily", Period: "d1"}}
	for _, tc := range []struct {
		edit     func(*leaderboard.Correction)
		sentinel error
	}{
		{func(c *leaderboard.Correction) { c.Member = "" }, leaderboard.ErrInvalidMember},
		{func(c *leaderboard.Correction) { c.Member = "\xff" }, leaderboard.ErrInvalidMember},
		{func(c *leaderboard.Correction) { c.Board = "" }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Board = "a\x00b" }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Score = math.NaN() }, leaderboard.ErrInvalidScore},
		{func(c *leaderboard.Correction) { c.Score = math.Inf(-1) }, leaderboard.ErrInvalidScore},
		{func(c *leaderboard.Correction) { c.Period = leaderboard.SubmissionPeriod{} }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Period.Period = "" }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Period.Window = "\xff" }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Period.Start, c.Period.End = t0, t0 }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Policy = 9 }, leaderboard.ErrInvalidArgument},
		{func(c *leaderboard.Correction) { c.Order = 9 }, leaderboard.ErrInvalidArgument},
	} {
		c := good
		tc.edit(&c)
		err := s.Correct(ctx, c)
		require.ErrorIs(t, err, tc.sentinel, "%+v", c)
		require.ErrorContains(t, err, "pgstore: correct: ")
	}
	require.Equal(t, before, boardSnapshot(t, s, "bad"), "bad input writes nothing")
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT (SELECT count(*) FROM "+s.tCorrections+") + (SELECT count(*) FROM "+s.tKeptPeriods+")").Scan(&n))
	require.Equal(t, 1, n, "no correction, and no period row but all time's")

	require.NoError(t, s.Correct(ctx, good))
	got := standings(t, s, leaderboard.StandingsQuery{Board: "bad", Policy: leaderboard.KeepBest, Window: "daily", Period: "d1"})
	require.Equal(t, 1.0, got["m"].Score)
}
