package pgstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// checkWorkload appends n submissions of members p0..p<members-1> to board
// under policy and order, in all time and 4-hour blocks, and returns them
// as stored (times truncated).
func checkWorkload(t *testing.T, s *Store, rng *rand.Rand, board string, policy leaderboard.Policy, order leaderboard.Order, n, members int) []leaderboard.Submission {
	t.Helper()
	block := blockWindow{name: "block", base: t0}
	subs := make([]leaderboard.Submission, n)
	for i := range subs {
		at := t0.Add(time.Duration(rng.IntN(8*3600)) * time.Second).Add(time.Duration(rng.IntN(1000)))
		subs[i] = leaderboard.Submission{Board: board, Member: fmt.Sprintf("p%d", rng.IntN(members)),
			Score: modelScores[rng.IntN(len(modelScores))], At: at, Policy: policy, Order: order,
			Periods: []leaderboard.SubmissionPeriod{allTime, block.period(at)}}
	}
	appendMixed(t, s, subs, rng, 50, false)
	for i := range subs {
		subs[i].At = subs[i].At.Truncate(time.Microsecond)
	}
	return subs
}

func check(t *testing.T, s *Store, q leaderboard.StandingsQuery, repair bool) leaderboard.StandingsCheck {
	t.Helper()
	c, err := s.CheckStandings(context.Background(), q, repair)
	require.NoError(t, err)
	return c
}

// TestCheckStandingsFindsAndRepairsDrift edits the tables by hand, as a
// bug or an operator would, and checks that CheckStandings names exactly
// the members whose kept standing no longer is the log's aggregation, and
// that repair makes them equal again, for every policy and order.
func TestCheckStandingsFindsAndRepairsDrift(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	rng := rand.New(rand.NewPCG(3, 2026))
	for _, policy := range policies {
		for _, order := range orders {
			board := fmt.Sprintf("check-%v-%v", policy, order)
			subs := checkWorkload(t, s, rng, board, policy, order, 600, 20)
			q := query(board, policy, order, allTime)
			model := modelStandings(subs, board, policy, order, time.Time{}, time.Time{})
			c := check(t, s, q, false)
			require.Equal(t, leaderboard.StandingsCheck{Kept: true, Members: int64(len(model))}, c)

			exec := func(sql string, args ...any) {
				t.Helper()
				_, err := s.pool.Exec(ctx, sql, append([]any{board}, args...)...)
				require.NoError(t, err)
			}
			kept := `UPDATE ` + s.tKept + ` SET `
			where := ` WHERE board = $1 AND "window" = 'alltime' AND member = $2`
			exec(kept+`score = -score - 1`+where, "p1")                                           // a score
			exec(kept+`at = at + interval '1 microsecond'`+where, "p2")                           // a time
			exec(`DELETE FROM `+s.tKept+where, "p3")                                              // missing
			exec(`INSERT INTO `+s.tKept+` VALUES ($1, 'alltime', 'alltime', 'ghost', 1, $2)`, t0) // no submission behind it
			c = check(t, s, q, false)
			require.True(t, c.Kept)
			require.Equal(t, int64(len(model)), c.Members)
			require.Equal(t, []string{"ghost", "p1", "p2", "p3"}, c.Differ)
			require.Equal(t, int64(4), c.DifferCount)
			require.False(t, c.Repaired)
			require.Equal(t, 4, int(check(t, s, q, false).DifferCount), "a check without repair writes nothing")

			c = check(t, s, q, true)
			require.True(t, c.Repaired)
			require.Equal(t, int64(4), c.DifferCount, "what it found before repairing")
			require.Equal(t, leaderboard.StandingsCheck{Kept: true, Members: int64(len(model))}, check(t, s, q, false))
			requireModel(t, s, k, subs, q, true)

			// The example's defect: the log deleted, the kept standings not.
			exec(`DELETE FROM ` + s.tSubs + ` WHERE board = $1`)
			c = check(t, s, q, false)
			require.Equal(t, int64(0), c.Members)
			require.Equal(t, int64(len(model)), c.DifferCount)
			require.True(t, check(t, s, q, true).Repaired)
			require.Equal(t, leaderboard.StandingsCheck{Kept: true}, check(t, s, q, false))
			requireModel(t, s, k, nil, q, true)
		}
	}
}

// TestCheckStandingsNotKept: a period without kept standings (none, not
// complete, or kept under another policy, order or bounds) reports Kept =
// false, and repair writes nothing; bad queries are refused.
func TestCheckStandingsNotKept(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	rng := rand.New(rand.NewPCG(4, 2026))
	subs := checkWorkload(t, s, rng, "nk", leaderboard.KeepBest, leaderboard.HighestFirst, 200, 10)
	block := blockWindow{name: "block", base: t0}
	b0 := block.period(t0)
	q := query("nk", leaderboard.KeepBest, leaderboard.HighestFirst, b0)
	require.True(t, check(t, s, q, false).Kept)
	_, err := s.pool.Exec(ctx, `UPDATE `+s.tKept+` SET score = -score WHERE board = 'nk' AND "window" = 'block'`)
	require.NoError(t, err)
	before := boardSnapshot(t, s, "nk")

	other := func(f func(*leaderboard.StandingsQuery)) leaderboard.StandingsQuery {
		o := q
		f(&o)
		return o
	}
	for _, o := range []leaderboard.StandingsQuery{
		other(func(o *leaderboard.StandingsQuery) { o.Period = "b99" }),
		other(func(o *leaderboard.StandingsQuery) { o.Policy = leaderboard.Replace }),
		other(func(o *leaderboard.StandingsQuery) { o.Order = leaderboard.LowestFirst }),
		other(func(o *leaderboard.StandingsQuery) { o.To = o.To.Add(time.Hour) }),
		other(func(o *leaderboard.StandingsQuery) { o.Board = "nobody" }),
	} {
		for _, repair := range []bool{false, true} {
			require.Equal(t, leaderboard.StandingsCheck{}, check(t, s, o, repair), "%+v", o)
		}
	}
	require.Equal(t, before, boardSnapshot(t, s, "nk"))

	_, err = s.pool.Exec(ctx, `UPDATE `+s.tKeptPeriods+` SET complete = false WHERE board = 'nk' AND "window" = 'block'`)
	require.NoError(t, err)
	before = boardSnapshot(t, s, "nk")
	require.Equal(t, leaderboard.StandingsCheck{}, check(t, s, q, true))
	require.Equal(t, before, boardSnapshot(t, s, "nk"))
	require.Len(t, standings(t, s, q), len(modelStandings(subs, "nk", q.Policy, q.Order, q.From, q.To)))

	for _, bad := range []leaderboard.StandingsQuery{
		other(func(o *leaderboard.StandingsQuery) { o.Window = "" }),
		other(func(o *leaderboard.StandingsQuery) { o.Period = "" }),
		other(func(o *leaderboard.StandingsQuery) { o.Board = "" }),
		other(func(o *leaderboard.StandingsQuery) { o.Period = "\xff" }),
		other(func(o *leaderboard.StandingsQuery) { o.Policy = 7 }),
		other(func(o *leaderboard.StandingsQuery) { o.Order = 7 }),
	} {
		_, err := s.CheckStandings(ctx, bad, true)
		require.ErrorIs(t, err, leaderboard.ErrInvalidArgument, "%+v", bad)
		require.ErrorContains(t, err, "pgstore: check standings: ")
	}
	require.Equal(t, before, boardSnapshot(t, s, "nk"))
}

// TestCheckStandingsManyDiffer: the sample holds VerifySample names, the
// count all of them; past 10,000 a repair rewrites the period whole.
func TestCheckStandingsManyDiffer(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	n := repairTargeted + 50
	subs := make([]leaderboard.Submission, n)
	for i := range subs {
		subs[i] = leaderboard.Submission{Board: "many", Member: fmt.Sprintf("p%05d", i), Score: float64(i), At: t0,
			Policy: leaderboard.Accumulate, Periods: []leaderboard.SubmissionPeriod{allTime}}
	}
	_, err := s.AppendBatch(ctx, subs)
	require.NoError(t, err)
	q := query("many", leaderboard.Accumulate, leaderboard.HighestFirst, allTime)
	_, err = s.pool.Exec(ctx, `UPDATE `+s.tKept+` SET score = score * 2 + 1 WHERE board = 'many'`)
	require.NoError(t, err)
	c := check(t, s, q, false)
	require.Equal(t, int64(n), c.DifferCount)
	require.Len(t, c.Differ, leaderboard.VerifySample)
	require.Equal(t, "p00000", c.Differ[0])
	require.True(t, check(t, s, q, true).Repaired)
	require.Equal(t, leaderboard.StandingsCheck{Kept: true, Members: int64(n)}, check(t, s, q, false))
	k := watch(s)
	requireModel(t, s, k, subs, q, true)
}

// TestCheckStandingsRepairWhileAppending repairs a drifted period while
// other goroutines append to it: the repair holds the board's lock, so the
// kept standings end equal to the log's aggregation of everything appended.
func TestCheckStandingsRepairWhileAppending(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	for _, policy := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Accumulate} {
		board := fmt.Sprintf("busy-%v", policy)
		var mu sync.Mutex
		var subs []leaderboard.Submission
		add := func(g, i int) leaderboard.Submission {
			// Whole numbers, and each member appended to by one goroutine:
			// the aggregation does not depend on the order in which
			// concurrent appends commit (see Standings).
			return leaderboard.Submission{Board: board, Member: fmt.Sprintf("p%d", g+4*(i%7)),
				Score: float64(g + i), At: t0.Add(time.Duration(i) * time.Second), Policy: policy,
				Periods: []leaderboard.SubmissionPeriod{allTime}}
		}
		for i := range 100 {
			subs = append(subs, add(i%4, i))
		}
		_, err := s.AppendBatch(ctx, subs)
		require.NoError(t, err)
		q := query(board, policy, leaderboard.HighestFirst, allTime)
		for round := range 5 {
			_, err := s.pool.Exec(ctx, `UPDATE `+s.tKept+` SET score = score + 7 WHERE board = $1`, board)
			require.NoError(t, err)
			var wg sync.WaitGroup
			for g := range 4 {
				wg.Go(func() {
					for i := range 25 {
						sub := add(g, i+round)
						if _, err := s.Append(ctx, sub); !assertNoError(t, err) {
							return
						}
						mu.Lock()
						subs = append(subs, sub)
						mu.Unlock()
					}
				})
			}
			c, err := s.CheckStandings(ctx, q, true)
			wg.Wait()
			require.NoError(t, err)
			require.True(t, c.Repaired)
			c = check(t, s, q, false)
			require.Zero(t, c.DifferCount, "round %d: %v", round, c.Differ)
			requireModel(t, s, k, subs, q, true)
		}
	}
}
