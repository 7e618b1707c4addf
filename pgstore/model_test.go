package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// The model test appends a random workload and compares Standings, for every
// policy, order and time range, with a plain Go model that replays the
// submissions in append order, as Redis would have.

// modelScores has ties, values whose float sum depends on the order of
// addition (0.1 + 0.2 + 0.3 != 0.3 + 0.2 + 0.1; 1e16 + 1 + 1 loses both
// ones, 1 + 1 + 1e16 does not), negatives and zero.
var modelScores = []float64{0.1, 0.2, 0.3, 0.7, 1, 3, 1e16, -1e16, -0.1, 0, 2.5, 1e-9}

type standingModel struct {
	score float64
	at    time.Time
	seen  bool
}

// modelStandings replays subs (in append order) through policy and order,
// keeping only the submissions whose time lies in [from, to).
func modelStandings(subs []leaderboard.Submission, board string, policy leaderboard.Policy, order leaderboard.Order, from, to time.Time) map[string]leaderboard.StoredStanding {
	m := map[string]*standingModel{}
	for _, s := range subs {
		if s.Board != board || (!from.IsZero() && s.At.Before(from)) || (!to.IsZero() && !s.At.Before(to)) {
			continue
		}
		st := m[s.Member]
		if st == nil {
			st = &standingModel{}
			m[s.Member] = st
		}
		switch {
		case !st.seen:
			st.score, st.at, st.seen = s.Score, s.At, true
		case policy == leaderboard.Replace:
			st.score, st.at = s.Score, s.At
		case policy == leaderboard.Accumulate:
			st.score += s.Score // sequential float64 addition, as ZINCRBY does
			if s.Score != 0 {   // adding 0 reaches no new total: its time stays
				st.at = s.At
			}
		default: // KeepBest
			better := s.Score > st.score
			if order == leaderboard.LowestFirst {
				better = s.Score < st.score
			}
			if better || (s.Score == st.score && s.At.Before(st.at)) {
				st.score, st.at = s.Score, s.At
			}
		}
	}
	out := map[string]leaderboard.StoredStanding{}
	for member, st := range m {
		out[member] = leaderboard.StoredStanding{Member: member, Score: st.score, At: st.at}
	}
	return out
}

// The model of one period's log under Correct, Remove and DeletePeriod: a
// period's Standings is modelStandings of its log, which these rewrite as
// the store's rules say (other periods' logs are not touched).

// modelCorrect is c applied to a period's log: the member's submissions so
// far become one submission of the corrected score at the correction's
// time (truncated, as stored), which later ones then combine with.
func modelCorrect(log []leaderboard.Submission, c leaderboard.Correction) []leaderboard.Submission {
	log = modelRemove(log, c.Board, c.Member)
	score := c.Score
	if score == 0 {
		score = 0 // -0 is stored as 0
	}
	return append(log, leaderboard.Submission{Board: c.Board, Member: c.Member, Score: score, At: c.At.Truncate(time.Microsecond)})
}

// modelRemove is a removal of member from a period, applied to its log;
// an empty member is a reset of the period.
func modelRemove(log []leaderboard.Submission, board, member string) []leaderboard.Submission {
	return slices.DeleteFunc(slices.Clone(log), func(s leaderboard.Submission) bool {
		return s.Board == board && (member == "" || s.Member == member)
	})
}

func TestStandingsMatchModel(t *testing.T) {
	t.Parallel()
	testModel(t, newStore(t), 3000)
}

func testModel(t *testing.T, s *Store, n int) {
	rng := rand.New(rand.NewPCG(5, 2026))

	// Few members and few distinct times: many submissions per member,
	// equal times, equal scores; times in no particular order.
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	times := make([]time.Time, 12)
	for i := range times {
		times[i] = base.Add(time.Duration(i)*time.Hour + time.Duration(rng.IntN(1000))*time.Nanosecond)
	}
	var subs []leaderboard.Submission
	for range n {
		subs = append(subs, leaderboard.Submission{
			Board:  []string{"arena", "other"}[rng.IntN(4)/3],
			Member: fmt.Sprintf("player:%d", rng.IntN(40)),
			Score:  modelScores[rng.IntN(len(modelScores))],
			At:     times[rng.IntN(len(times))],
		})
	}
	// Append one by one and in batches of every size, with and without ids
	// (the two AppendBatch paths), keeping the append order.
	appendMixed(t, s, subs, rng, 200, false)
	for i := range subs {
		subs[i].At = subs[i].At.Truncate(time.Microsecond) // what the store keeps
	}

	ranges := [][2]time.Time{
		{},
		{times[3], {}},
		{{}, times[7]},
		{times[2], times[9]},
		{times[5], times[5]}, // empty
		{times[5], times[5].Add(time.Microsecond)},
	}
	orderMatters := false
	for _, board := range []string{"arena", "other", "nobody"} {
		for _, policy := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace, leaderboard.Accumulate} {
			for _, order := range []leaderboard.Order{leaderboard.HighestFirst, leaderboard.LowestFirst} {
				for _, r := range ranges {
					q := leaderboard.StandingsQuery{Board: board, Policy: policy, Order: order, From: r[0], To: r[1]}
					want := modelStandings(subs, board, policy, order, r[0], r[1])
					got := standings(t, s, q)
					require.Equal(t, len(want), len(got), "%+v", q)
					for member, w := range want {
						g, ok := got[member]
						require.True(t, ok, "%+v: %s missing", q, member)
						require.True(t, w.Score == g.Score, "%+v: %s score %v, want %v", q, member, g.Score, w.Score)
						require.True(t, w.At.Equal(g.At), "%+v: %s at %v, want %v", q, member, g.At, w.At)
					}
					if policy == leaderboard.Accumulate && board == "arena" && r == ranges[0] {
						orderMatters = orderMatters || sumsDependOnOrder(subs, board, want)
					}
				}
			}
		}
	}
	require.True(t, orderMatters, "the workload should hold sums that differ when added in another order")
}

// sumsDependOnOrder reports whether adding some member's scores in reverse
// append order gives another total than want: the model test then tells
// sequential addition from any other.
func sumsDependOnOrder(subs []leaderboard.Submission, board string, want map[string]leaderboard.StoredStanding) bool {
	rev := map[string]float64{}
	seen := map[string]bool{}
	for i := len(subs) - 1; i >= 0; i-- {
		s := subs[i]
		if s.Board != board {
			continue
		}
		if !seen[s.Member] {
			rev[s.Member], seen[s.Member] = s.Score, true
		} else {
			rev[s.Member] += s.Score
		}
	}
	for member, w := range want {
		if rev[member] != w.Score {
			return true
		}
	}
	return false
}

// TestAccumulateOverflow: sums that overflow float64 (Redis refused the
// submission that overflowed, the store holds it) fail PostgreSQL's float8
// addition; Standings then sums in Go and returns ±Inf for those members.
// appendMixed appends subs in their order, in chunks of 1 to maxChunk: each
// chunk one by one with Append, or at once with AppendBatch without ids or
// with ids "id-<index in subs>" (the store's two batch paths). idsOnAppend
// gives the one-by-one appends such ids too. It returns every id used.
func appendMixed(t *testing.T, s *Store, subs []leaderboard.Submission, rng *rand.Rand, maxChunk int, idsOnAppend bool) map[string]bool {
	t.Helper()
	ctx := context.Background()
	ids := map[string]bool{}
	for i := 0; i < len(subs); {
		n := min(1+rng.IntN(maxChunk), len(subs)-i)
		chunk := subs[i : i+n]
		switch rng.IntN(3) {
		case 0:
			for j, sub := range chunk {
				if idsOnAppend {
					sub.ID = fmt.Sprintf("id-%d", i+j)
					ids[sub.ID] = true
				}
				dup, err := s.Append(ctx, sub)
				require.NoError(t, err)
				require.False(t, dup)
			}
		case 1:
			dups, err := s.AppendBatch(ctx, chunk)
			require.NoError(t, err)
			require.Equal(t, make([]bool, n), dups)
		case 2:
			withIDs := make([]leaderboard.Submission, n)
			for j, sub := range chunk {
				withIDs[j] = sub
				withIDs[j].ID = fmt.Sprintf("id-%d", i+j)
				ids[withIDs[j].ID] = true
			}
			dups, err := s.AppendBatch(ctx, withIDs)
			require.NoError(t, err)
			require.Equal(t, make([]bool, n), dups)
		}
		i += n
	}
	return ids
}

func TestAccumulateOverflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	big := 1.7e308
	var subs []leaderboard.Submission
	add := func(member string, score float64, hour int) {
		subs = append(subs, leaderboard.Submission{Board: "arena", Member: member, Score: score, At: t0.Add(time.Duration(hour) * time.Hour)})
	}
	add("up", big, 0)
	add("fine", 0.1, 0)
	add("up", big, 2) // +Inf from here
	add("down", -big, 1)
	add("fine", 0.2, 1)
	add("down", -big, 3)
	add("up", -big, 4) // stays +Inf
	add("fine", 0.3, 4)
	add("later", big, 5)
	_, err := s.AppendBatch(ctx, subs)
	require.NoError(t, err)

	for _, r := range [][2]time.Time{{}, {t0.Add(time.Hour), {}}, {{}, t0.Add(3 * time.Hour)}, {t0.Add(2 * time.Hour), t0.Add(5 * time.Hour)}} {
		q := leaderboard.StandingsQuery{Board: "arena", Policy: leaderboard.Accumulate, From: r[0], To: r[1]}
		want := modelStandings(subs, "arena", leaderboard.Accumulate, leaderboard.HighestFirst, r[0], r[1])
		got := map[string]leaderboard.StoredStanding{}
		require.NoError(t, s.Standings(ctx, q, func(st leaderboard.StoredStanding) error {
			got[st.Member] = st
			return nil
		}))
		require.Equal(t, want, got, "%v", r)
	}
	got := map[string]leaderboard.StoredStanding{}
	require.NoError(t, s.Standings(ctx, leaderboard.StandingsQuery{Board: "arena", Policy: leaderboard.Accumulate}, func(st leaderboard.StoredStanding) error {
		got[st.Member] = st
		return nil
	}))
	require.True(t, math.IsInf(got["up"].Score, 1))
	require.True(t, math.IsInf(got["down"].Score, -1))
	a, b, c := 0.1, 0.2, 0.3 // variables: constants would add exactly
	require.Equal(t, a+b+c, got["fine"].Score)

	// An error from fn still stops the stream and comes back as it is.
	stop := errors.New("stop")
	calls := 0
	err = s.Standings(ctx, leaderboard.StandingsQuery{Board: "arena", Policy: leaderboard.Accumulate}, func(leaderboard.StoredStanding) error {
		calls++
		return stop
	})
	require.Equal(t, stop, err)
	require.Equal(t, 1, calls)

	// The other policies never add.
	for _, p := range []leaderboard.Policy{leaderboard.KeepBest, leaderboard.Replace} {
		require.Len(t, standings(t, s, leaderboard.StandingsQuery{Board: "arena", Policy: p}), 4)
	}
}
