package pgstore

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// The kept-standings tests append with Periods, as boards do, and check
// that Standings answers the same from the kept standings as from the
// aggregation (and as the model), and that the store stops trusting a
// period's kept standings whenever it could not follow a submission.

var (
	policies = []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate}
	orders   = []leaderboard.Order{leaderboard.HighestFirst, leaderboard.LowestFirst}
)

// blockWindow is a window of 4-hour periods from base, shifted by offset
// (an offset below a microsecond makes bounds that the stored times, whole
// microseconds, fall on either side of).
type blockWindow struct {
	name   string
	base   time.Time
	offset time.Duration
}

func (w blockWindow) period(t time.Time) leaderboard.SubmissionPeriod {
	start := w.base.Add(w.offset)
	k := int(t.Sub(start) / (4 * time.Hour))
	if t.Before(start) {
		k--
	}
	s := start.Add(time.Duration(k) * 4 * time.Hour)
	return leaderboard.SubmissionPeriod{Window: w.name, Period: fmt.Sprintf("b%d", k), Start: s, End: s.Add(4 * time.Hour)}
}

var allTime = leaderboard.SubmissionPeriod{Window: "alltime", Period: "alltime"}

// keptOn records which way every Standings call of s answered.
type keptOn struct {
	mu  sync.Mutex
	got []bool
}

func watch(s *Store) *keptOn {
	k := &keptOn{}
	s.onStandings = func(kept bool) {
		k.mu.Lock()
		k.got = append(k.got, kept)
		k.mu.Unlock()
	}
	return k
}

func (k *keptOn) last() bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.got[len(k.got)-1]
}

// query is the StandingsQuery of a period, kept or not.
func query(board string, p leaderboard.Policy, o leaderboard.Order, sp leaderboard.SubmissionPeriod) leaderboard.StandingsQuery {
	return leaderboard.StandingsQuery{Board: board, Policy: p, Order: o, From: sp.Start, To: sp.End, Window: sp.Window, Period: sp.Period}
}

// requireModel checks Standings of q against the model of subs, and which
// way it answered.
func requireModel(t *testing.T, s *Store, k *keptOn, subs []leaderboard.Submission, q leaderboard.StandingsQuery, wantKept bool) {
	t.Helper()
	want := modelStandings(subs, q.Board, q.Policy, q.Order, q.From, q.To)
	var got map[string]leaderboard.StoredStanding
	if slices.ContainsFunc(slices.Collect(maps.Values(want)), func(st leaderboard.StoredStanding) bool { return math.IsInf(st.Score, 0) }) {
		got = anyOrder(t, s, q) // overflowed sums come in name order
	} else {
		got = standings(t, s, q)
	}
	require.Equal(t, wantKept, k.last(), "%+v: answered from kept standings", q)
	require.Equal(t, len(want), len(got), "%+v", q)
	for member, w := range want {
		g, ok := got[member]
		require.True(t, ok, "%+v: %s missing", q, member)
		require.True(t, w.Score == g.Score, "%+v: %s score %v, want %v", q, member, g.Score, w.Score)
		require.True(t, w.At.Equal(g.At), "%+v: %s at %v, want %v", q, member, g.At, w.At)
	}
}

// periodState is a period row: exists, complete.
func periodState(t *testing.T, s *Store, board, window, period string) (bool, bool) {
	t.Helper()
	var complete bool
	err := s.pool.QueryRow(context.Background(), `SELECT complete FROM `+s.tKeptPeriods+` WHERE board = $1 AND "window" = $2 AND period = $3`,
		board, window, period).Scan(&complete)
	if err != nil && strings.Contains(err.Error(), "no rows") {
		return false, false
	}
	require.NoError(t, err)
	return true, complete
}

// TestKeptStandingsMatchModel appends the model test's kind of workload to
// one board per policy and order, with Periods (all time, and 4-hour
// blocks twice: once on whole hours, once shifted by 500 ns), one by one
// and in batches of both kinds, with repeated members and repeated ids, and
// checks every period both ways against the model.
func TestKeptStandingsMatchModel(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	k := watch(s)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 2026))
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	times := make([]time.Time, 12)
	for i := range times {
		times[i] = base.Add(time.Duration(i)*time.Hour + time.Duration(rng.IntN(1000))*time.Nanosecond)
	}
	times[5] = base.Add(4*time.Hour + 700*time.Nanosecond) // in the shifted window's second block, stored in its first
	block := blockWindow{name: "block", base: base}
	shifted := blockWindow{name: "shifted", base: base, offset: 500 * time.Nanosecond}

	type entry struct{ member, score, at int }
	var workload []entry
	for range 1500 {
		workload = append(workload, entry{rng.IntN(30), rng.IntN(len(modelScores)), rng.IntN(len(times))})
	}
	for _, policy := range policies {
		for _, order := range orders {
			board := fmt.Sprintf("arena-%v-%v", policy, order)
			var subs []leaderboard.Submission
			for _, e := range workload {
				at := times[e.at]
				subs = append(subs, leaderboard.Submission{
					Board: board, Member: fmt.Sprintf("player:%d", e.member), Score: modelScores[e.score], At: at,
					Policy: policy, Order: order,
					Periods: []leaderboard.SubmissionPeriod{allTime, block.period(at), shifted.period(at)},
				})
			}
			ids := appendMixed(t, s, subs, rng, 150, true)
			// Repeated ids, with other scores: recorded nowhere.
			var again []leaderboard.Submission
			for id := range ids {
				var i int
				_, err := fmt.Sscanf(id, "id-%d", &i)
				require.NoError(t, err)
				sub := subs[i]
				sub.ID, sub.Score = id, 1e9
				if len(again) < 40 {
					dup, err := s.Append(ctx, sub)
					require.NoError(t, err)
					require.True(t, dup)
				}
				sub.Score = -1e9
				again = append(again, sub)
			}
			dups, err := s.AppendBatch(ctx, append(again, again...))
			require.NoError(t, err)
			require.NotContains(t, dups, false)
			for i := range subs {
				subs[i].At = subs[i].At.Truncate(time.Microsecond)
			}
			periods := []leaderboard.SubmissionPeriod{allTime}
			for _, w := range []blockWindow{block, shifted} {
				for _, at := range []time.Time{times[0], times[4], times[8]} {
					periods = append(periods, w.period(at))
				}
				periods = append(periods, w.period(base.Add(-5*time.Hour))) // nobody played
			}
			for _, sp := range periods {
				exists, complete := periodState(t, s, board, sp.Window, sp.Period)
				switch {
				case sp.Period == "b-2":
					require.False(t, exists, "%s/%s", sp.Window, sp.Period)
				case sp.Window == "shifted" && sp.Period == "b0":
					// times[5] lands in it (stored 700 ns earlier) but
					// was listed for b1, where it is not counted.
					require.True(t, exists)
					require.False(t, complete, "%s/%s", sp.Window, sp.Period)
				default:
					require.True(t, exists && complete, "%s/%s", sp.Window, sp.Period)
				}
				kept := exists && complete
				for _, p := range policies {
					for _, o := range orders {
						// The board's own policy and order from the kept
						// standings, every other one aggregated.
						requireModel(t, s, k, subs, query(board, p, o, sp), kept && p == policy && o == order)
						q := query(board, p, o, sp)
						q.Window, q.Period = "", ""
						requireModel(t, s, k, subs, q, false)
					}
				}
			}
		}
	}
}

// TestKeptStandingsConcurrently appends from 8 goroutines at once, one by
// one and in batches that repeat members, to few members, and requires the
// kept standings to equal the aggregation exactly under every policy:
// Replace keeps the last submission and Accumulate the last time by seq,
// which concurrent appends of one member would otherwise upsert in another
// order than they took seq in (see memberBuckets).
func TestKeptStandingsConcurrently(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	k := watch(s)
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	block := blockWindow{name: "block", base: base}
	for _, policy := range policies {
		for _, order := range orders {
			board := fmt.Sprintf("busy-%v-%v", policy, order)
			var mu sync.Mutex
			var subs []leaderboard.Submission
			var wg sync.WaitGroup
			for w := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rng := rand.New(rand.NewPCG(uint64(w), 9))
					sub := func(i int) leaderboard.Submission {
						at := base.Add(time.Duration(rng.IntN(8*3600)) * time.Second)
						return leaderboard.Submission{Board: board, Member: fmt.Sprintf("p%d", rng.IntN(6)),
							Score: float64(rng.IntN(1000) - 500), At: at, Policy: policy, Order: order,
							Periods: []leaderboard.SubmissionPeriod{allTime, block.period(at)}}
					}
					for i := range 60 {
						if i%10 == 9 {
							batch := make([]leaderboard.Submission, 20)
							for j := range batch {
								batch[j] = sub(i)
							}
							_, err := s.AppendBatch(ctx, batch)
							if !assertNoError(t, err) {
								return
							}
							mu.Lock()
							subs = append(subs, batch...)
							mu.Unlock()
							continue
						}
						one := sub(i)
						_, err := s.Append(ctx, one)
						if !assertNoError(t, err) {
							return
						}
						mu.Lock()
						subs = append(subs, one)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			for _, sp := range []leaderboard.SubmissionPeriod{allTime, block.period(base), block.period(base.Add(4 * time.Hour))} {
				exists, complete := periodState(t, s, board, sp.Window, sp.Period)
				require.True(t, exists && complete, "%s/%s", sp.Window, sp.Period)
				q := query(board, policy, order, sp)
				kept := standings(t, s, q)
				require.True(t, k.last())
				q.Window, q.Period = "", ""
				agg := standings(t, s, q)
				require.False(t, k.last())
				require.Equal(t, len(agg), len(kept))
				// Kept and aggregated agree exactly under every policy:
				// Appends of one member are ordered (memberBuckets), so
				// the last submission by seq is the last one kept.
				for member, a := range agg {
					require.Equal(t, a, kept[member], "%s %v/%v %s/%s", member, policy, order, sp.Window, sp.Period)
				}
			}
		}
	}
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Errorf("append: %v", err)
		return false
	}
	return true
}

// TestKeptStandingsIncomplete: every case where the store cannot vouch for
// a period's kept standings clears complete for that period alone, and
// Standings still answers as the model says.
func TestKeptStandingsIncomplete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	block := blockWindow{name: "block", base: base}
	at := base.Add(time.Hour)
	b0, b1 := block.period(at), block.period(at.Add(4*time.Hour))
	sub := func(board, member string, score float64, at time.Time, periods ...leaderboard.SubmissionPeriod) leaderboard.Submission {
		return leaderboard.Submission{Board: board, Member: member, Score: score, At: at,
			Policy: leaderboard.Accumulate, Order: leaderboard.HighestFirst, Periods: periods}
	}
	cases := []struct {
		name string
		// before is appended first (all complete after it, except where
		// said), then after; afterwards the periods in incomplete are
		// incomplete, the others complete.
		before, after []leaderboard.Submission
		batch         bool
		incomplete    []string
	}{
		{
			name:       "without periods",
			before:     []leaderboard.Submission{sub("b", "x", 1, at, allTime, b0), sub("b", "y", 2, at.Add(4*time.Hour), allTime, b1)},
			after:      []leaderboard.Submission{sub("b", "x", 5, at)},
			incomplete: []string{"alltime", b0.Period},
		},
		{
			name:   "another policy",
			before: []leaderboard.Submission{sub("b", "x", 1, at, allTime, b0)},
			after: []leaderboard.Submission{func() leaderboard.Submission {
				s := sub("b", "x", 2, at, allTime, b0)
				s.Policy = leaderboard.Replace
				return s
			}()},
			incomplete: []string{"alltime", b0.Period},
		},
		{
			name:   "another order",
			before: []leaderboard.Submission{sub("b", "x", 1, at, allTime, b0)},
			after: []leaderboard.Submission{func() leaderboard.Submission {
				s := sub("b", "x", 2, at, allTime, b0)
				s.Order = leaderboard.LowestFirst
				return s
			}()},
			incomplete: []string{"alltime", b0.Period},
		},
		{
			name:   "other bounds",
			before: []leaderboard.Submission{sub("b", "x", 1, at, allTime, b0)},
			after: []leaderboard.Submission{func() leaderboard.Submission {
				p := b0
				p.Start = p.Start.Add(-time.Hour)
				return sub("b", "x", 2, at, allTime, p)
			}()},
			incomplete: []string{b0.Period},
		},
		{
			name:       "a period not listed (closed in Redis)",
			before:     []leaderboard.Submission{sub("b", "x", 1, at, allTime, b0), sub("b", "x", 1, at.Add(4*time.Hour), allTime, b1)},
			after:      []leaderboard.Submission{sub("b", "y", 3, at.Add(time.Hour), allTime)},
			incomplete: []string{b0.Period},
		},
		{
			name:       "overflow",
			before:     []leaderboard.Submission{sub("b", "x", 1.7e308, at, allTime, b0), sub("b", "y", 1, at.Add(4*time.Hour), allTime, b1)},
			after:      []leaderboard.Submission{sub("b", "x", 1.7e308, at, allTime, b0), sub("b", "y", 1, at.Add(4*time.Hour), allTime, b1)},
			incomplete: []string{"alltime", b0.Period},
		},
		{
			name:       "earlier submissions",
			before:     []leaderboard.Submission{sub("b", "x", 1, at)},
			after:      []leaderboard.Submission{sub("b", "x", 2, at, allTime, b0), sub("b", "y", 2, at.Add(4*time.Hour), allTime, b1)},
			incomplete: []string{"alltime", b0.Period},
		},
		{
			name: "another board",
			before: []leaderboard.Submission{sub("b", "x", 1, at, allTime, b0), sub("c", "x", 1, at, allTime, b0),
				sub("b", "x", 1, at.Add(4*time.Hour), allTime, b1)},
			after: []leaderboard.Submission{sub("c", "x", 5, at)},
		},
	}
	for _, batch := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/batch=%v", c.name, batch), func(t *testing.T) {
				t.Parallel()
				s := newStore(t)
				k := watch(s)
				appendAll := func(subs []leaderboard.Submission) {
					if batch {
						_, err := s.AppendBatch(ctx, subs)
						require.NoError(t, err)
						return
					}
					for _, sub := range subs {
						_, err := s.Append(ctx, sub)
						require.NoError(t, err)
					}
				}
				appendAll(c.before)
				appendAll(c.after)
				all := append(append([]leaderboard.Submission(nil), c.before...), c.after...)
				for _, sp := range []leaderboard.SubmissionPeriod{allTime, b0, b1} {
					exists, complete := periodState(t, s, "b", sp.Window, sp.Period)
					if !exists {
						continue // "earlier submissions" before b1's first
					}
					require.Equal(t, !slices.Contains(c.incomplete, sp.Period), complete, "%s/%s", sp.Window, sp.Period)
					for _, o := range orders {
						requireModel(t, s, k, all, query("b", leaderboard.Accumulate, o, sp), complete && o == leaderboard.HighestFirst)
					}
				}
			})
		}
	}
}

// TestKeptStandingsAfterOldRows: a database with submissions from before
// migration 2 (version 1 only) keeps the periods those submissions are in
// aggregated, and the new ones kept.
func TestKeptStandingsAfterOldRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStoreUnmigrated(t)
	k := watch(s)
	ms, err := loadMigrations()
	require.NoError(t, err)
	require.NoError(t, s.migrateOne(ctx, ms[0]))
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	block := blockWindow{name: "block", base: base}
	var subs []leaderboard.Submission
	for i := range 20 {
		sub := leaderboard.Submission{Board: "old", Member: fmt.Sprintf("p%d", i%7), Score: float64(i), At: base.Add(time.Duration(i) * time.Minute)}
		_, err := s.pool.Exec(ctx, "INSERT INTO "+s.tSubs+" (board, member, score, at) VALUES ($1, $2, $3, $4)", sub.Board, sub.Member, sub.Score, sub.At)
		require.NoError(t, err)
		subs = append(subs, sub)
	}
	require.NoError(t, s.Migrate(ctx))
	for i := range 20 {
		at := base.Add(time.Duration(3*i) * time.Hour / 10)
		sub := leaderboard.Submission{Board: "old", Member: fmt.Sprintf("p%d", i%5), Score: float64(i), At: at,
			Policy: leaderboard.KeepBest, Periods: []leaderboard.SubmissionPeriod{allTime, block.period(at)}}
		_, err := s.Append(ctx, sub)
		require.NoError(t, err)
		subs = append(subs, sub)
	}
	for _, sp := range []leaderboard.SubmissionPeriod{allTime, block.period(base), block.period(base.Add(4 * time.Hour))} {
		exists, complete := periodState(t, s, "old", sp.Window, sp.Period)
		require.True(t, exists)
		require.Equal(t, sp.Period == "b1", complete, "%s/%s: only b1 has no old rows", sp.Window, sp.Period)
		requireModel(t, s, k, subs, query("old", leaderboard.KeepBest, leaderboard.HighestFirst, sp), complete)
	}
}

// TestKeptStandingsPlan: a period's standings come from an index-only scan
// of standings_best_idx, backward for HighestFirst, with no sort.
func TestKeptStandingsPlan(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	subs := make([]leaderboard.Submission, 20_000)
	for i := range subs {
		subs[i] = leaderboard.Submission{Board: "big", Member: fmt.Sprintf("p%d", i), Score: float64(i * 7919 % 20_000), At: t0,
			Periods: []leaderboard.SubmissionPeriod{allTime}}
	}
	_, err := s.AppendBatch(ctx, subs)
	require.NoError(t, err)
	_, err = s.pool.Exec(ctx, "VACUUM (ANALYZE) "+s.tKept)
	require.NoError(t, err)
	for _, dir := range []string{"DESC", "ASC"} {
		rows, err := s.pool.Query(ctx, `EXPLAIN SELECT member, score, at FROM `+s.tKept+`
WHERE board = $1 AND "window" = $2 AND period = $3 ORDER BY score `+dir+`, at `+dir, "big", "alltime", "alltime")
		require.NoError(t, err)
		var plan []string
		var line string
		_, err = pgxForEach(rows, &line, func() { plan = append(plan, line) })
		require.NoError(t, err)
		text := strings.Join(plan, "\n")
		want := "Index Only Scan using " + s.tKept + "_best_idx"
		if dir == "DESC" {
			want = "Index Only Scan Backward using " + s.tKept + "_best_idx"
		}
		require.Contains(t, text, want)
		require.NotContains(t, text, "Sort")
	}
	got := standings(t, s, query("big", leaderboard.KeepBest, leaderboard.HighestFirst, allTime))
	require.Len(t, got, len(subs))
	require.Equal(t, float64(0), got["p0"].Score)
}

func pgxForEach(rows interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close()
}, dst *string, fn func()) (int, error) {
	defer rows.Close()
	n := 0
	for rows.Next() {
		if err := rows.Scan(dst); err != nil {
			return n, err
		}
		fn()
		n++
	}
	return n, rows.Err()
}

// anyOrder collects Standings by member.
func anyOrder(t *testing.T, s *Store, q leaderboard.StandingsQuery) map[string]leaderboard.StoredStanding {
	t.Helper()
	got := map[string]leaderboard.StoredStanding{}
	require.NoError(t, s.Standings(context.Background(), q, func(st leaderboard.StoredStanding) error {
		got[st.Member] = st
		return nil
	}))
	return got
}

// blockFixture appends to board, on an Accumulate board with all time and
// a block window, x: 1 and y: 2 at at0 and x: 5 at at1, and returns add
// for more, the two times and their block periods b0 and b1.
func blockFixture(t *testing.T, s *Store, board string) (add func(string, float64, time.Time), at0, at1 time.Time, b0, b1 leaderboard.SubmissionPeriod) {
	t.Helper()
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	block := blockWindow{name: "block", base: base}
	at0, at1 = base.Add(time.Hour), base.Add(5*time.Hour)
	b0, b1 = block.period(at0), block.period(at1)
	add = func(member string, score float64, at time.Time) {
		t.Helper()
		_, err := s.Append(context.Background(), leaderboard.Submission{Board: board, Member: member, Score: score, At: at,
			Policy: leaderboard.Accumulate, Periods: []leaderboard.SubmissionPeriod{allTime, block.period(at)}})
		require.NoError(t, err)
	}
	add("x", 1, at0)
	add("y", 2, at0)
	add("x", 5, at1)
	return add, at0, at1, b0, b1
}

// TestRemove: a removal makes Standings of the periods it names count only
// the member's later submissions, kept or aggregated; other periods and
// plain ranges still count everything; a member or period named twice
// counts once.
func TestRemove(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	add, at0, at1, b0, b1 := blockFixture(t, s, "r")

	for _, bad := range []leaderboard.Removal{
		{Board: "r", Members: []string{""}, Periods: []leaderboard.SubmissionPeriod{allTime}},
		{Board: "r", Members: []string{"x", "\xff"}, Periods: []leaderboard.SubmissionPeriod{allTime}},
		{Board: "r", Members: []string{"x"}, Periods: []leaderboard.SubmissionPeriod{allTime, {Window: "block"}}},
		{Board: "", Members: []string{"x"}, Periods: []leaderboard.SubmissionPeriod{allTime}},
	} {
		err := s.Remove(ctx, bad)
		require.Error(t, err)
		require.ErrorContains(t, err, "pgstore: remove: ")
	}
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.tRemovals).Scan(&n))
	require.Zero(t, n, "bad input writes nothing")

	// A member or period named twice counts once (one row a member and
	// period: an upsert of the same row twice fails in PostgreSQL).
	require.NoError(t, s.Remove(ctx, leaderboard.Removal{Board: "r", Members: []string{"x", "nobody", "x"}, At: at1,
		Periods: []leaderboard.SubmissionPeriod{allTime, b0, allTime}}))
	add("x", 7, at0) // after the removal, in b0 (WithTime)

	want := map[string]map[string]float64{
		"alltime": {"x": 7, "y": 2},
		b0.Period: {"x": 7, "y": 2},
		b1.Period: {"x": 5},
	}
	for _, sp := range []leaderboard.SubmissionPeriod{allTime, b0, b1} {
		q := query("r", leaderboard.Accumulate, leaderboard.HighestFirst, sp)
		for _, kept := range []bool{true, false} {
			if !kept {
				q.Policy = leaderboard.Replace // not kept: aggregated
			}
			got := map[string]float64{}
			for m, st := range standings(t, s, q) {
				got[m] = st.Score
			}
			require.Equal(t, kept, k.last())
			if kept {
				require.Equal(t, want[sp.Period], got, "%s/%s kept", sp.Window, sp.Period)
			} else {
				require.Equal(t, len(want[sp.Period]), len(got), "%s/%s aggregated", sp.Window, sp.Period)
			}
		}
		// Accumulate aggregated, as the kept standings say.
		_, err := s.pool.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = false WHERE board = 'r'`)
		require.NoError(t, err)
		q.Policy = leaderboard.Accumulate
		got := map[string]float64{}
		for m, st := range standings(t, s, q) {
			got[m] = st.Score
		}
		require.False(t, k.last())
		require.Equal(t, want[sp.Period], got, "%s/%s aggregated", sp.Window, sp.Period)
		_, err = s.pool.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = true WHERE board = 'r'`)
		require.NoError(t, err)
	}
	// A plain range counts everything.
	got := standings(t, s, leaderboard.StandingsQuery{Board: "r", Policy: leaderboard.Accumulate})
	require.Equal(t, 13.0, got["x"].Score)
}

// TestDeletePeriod: a reset period counts only the submissions appended
// after the reset, kept or aggregated; other periods and plain ranges
// count everything; bad input writes nothing.
func TestDeletePeriod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	add, at0, at1, b0, b1 := blockFixture(t, s, "z")
	for _, bad := range []struct {
		board string
		p     leaderboard.SubmissionPeriod
	}{{"", b0}, {"z", leaderboard.SubmissionPeriod{Window: "block"}}, {"z", leaderboard.SubmissionPeriod{Period: b0.Period}}, {"\xff", b0}} {
		err := s.DeletePeriod(ctx, bad.board, bad.p, at1)
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument)
		require.ErrorContains(t, err, "pgstore: delete period: ")
	}
	var n int
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.tResets).Scan(&n))
	require.Zero(t, n, "bad input writes nothing")

	require.NoError(t, s.DeletePeriod(ctx, "z", b0, at1))
	add("x", 7, at0) // after the reset, in b0 (WithTime)
	want := map[string]map[string]float64{
		"alltime": {"x": 13, "y": 2},
		b0.Period: {"x": 7},
		b1.Period: {"x": 5},
	}
	for _, sp := range []leaderboard.SubmissionPeriod{allTime, b0, b1} {
		q := query("z", leaderboard.Accumulate, leaderboard.HighestFirst, sp)
		for _, kept := range []bool{true, false} {
			if !kept {
				_, err := s.pool.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = false WHERE board = 'z'`)
				require.NoError(t, err)
			}
			got := map[string]float64{}
			for m, st := range standings(t, s, q) {
				got[m] = st.Score
			}
			require.Equal(t, kept, k.last())
			require.Equal(t, want[sp.Period], got, "%s/%s kept=%v", sp.Window, sp.Period, kept)
		}
		_, err := s.pool.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = true WHERE board = 'z'`)
		require.NoError(t, err)
	}
	got := standings(t, s, leaderboard.StandingsQuery{Board: "z", Policy: leaderboard.Accumulate})
	require.Equal(t, 13.0, got["x"].Score, "a plain range counts everything")
	require.NoError(t, s.DeleteBoard(ctx, "z"))
	require.NoError(t, s.pool.QueryRow(ctx, "SELECT count(*) FROM "+s.tResets+" WHERE board = 'z'").Scan(&n))
	require.Zero(t, n, "DeleteBoard deletes the resets")
}
