package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// TestRetractMatchesModel appends a workload one by one and in batches,
// with and without ids, and retracts some of what it just appended (as
// Submit and SubmitMany do when Redis refuses), sometimes with other
// appends in between; the model is the workload without the retracted
// submissions. After every retraction the period's kept standings must
// still be complete and equal the model, the store's check clean, and a
// retracted id free again.
func TestRetractMatchesModel(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	k := watch(s)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(11, 2026))
	base := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	block := blockWindow{name: "block", base: base}
	// Few members, scores, times and receipt times: rows that match a
	// retracted one in everything but seq are common.
	times := []time.Time{base.Add(time.Hour + 300), base.Add(3 * time.Hour), base.Add(5 * time.Hour)}
	received := []time.Time{{}, base.Add(6*time.Hour + 1500), base.Add(7 * time.Hour)}
	scores := []float64{1, 2, 0.1, 0.2, 1e16, -3}
	for _, policy := range policies {
		for _, order := range orders {
			board := fmt.Sprintf("retract-%v-%v", policy, order)
			newSub := func() leaderboard.Submission {
				at := times[rng.IntN(len(times))]
				return leaderboard.Submission{Board: board, Member: fmt.Sprintf("p%d", rng.IntN(6)),
					Score: scores[rng.IntN(len(scores))], At: at, Received: received[rng.IntN(len(received))],
					Policy: policy, Order: order, Periods: []leaderboard.SubmissionPeriod{allTime, block.period(at)}}
			}
			var model []leaderboard.Submission // in append order
			nextID := 0
			for step := range 120 {
				chunk := make([]leaderboard.Submission, 1+rng.IntN(5))
				for i := range chunk {
					chunk[i] = newSub()
					if rng.IntN(2) == 0 {
						chunk[i].ID = fmt.Sprintf("id-%d", nextID)
						nextID++
					}
				}
				if len(chunk) == 1 {
					dup, err := s.Append(ctx, chunk[0])
					require.NoError(t, err)
					require.False(t, dup)
				} else {
					dups, err := s.AppendBatch(ctx, chunk)
					require.NoError(t, err)
					require.Equal(t, make([]bool, len(chunk)), dups)
				}
				model = append(model, chunk...)
				if step%3 == 0 && len(model) > 8 {
					// Others append before the retraction.
					other := newSub()
					_, err := s.Append(ctx, other)
					require.NoError(t, err)
					model = append(model, other)
				}
				if rng.IntN(2) == 0 {
					continue
				}
				// Retract all of the chunk (SubmitMany) or one (Submit).
				retract := chunk
				if rng.IntN(2) == 0 {
					retract = chunk[rng.IntN(len(chunk)):][:1]
				}
				require.NoError(t, s.Retract(ctx, retract))
				for _, r := range retract {
					model = withoutLast(model, r)
				}
				requireRetracted(t, s, k, model, board, policy, order, block)
				// A retracted id is free: the retry is appended as new.
				for _, r := range retract {
					if r.ID != "" && rng.IntN(2) == 0 {
						r.Score = scores[rng.IntN(len(scores))]
						dup, err := s.Append(ctx, r)
						require.NoError(t, err)
						require.False(t, dup, "retried id %s", r.ID)
						model = append(model, r)
					}
				}
			}
			requireRetracted(t, s, k, model, board, policy, order, block)
			require.Equal(t, len(model), boardRows(t, s, board), "rows")
		}
	}
}

// withoutLast removes from subs the last submission r names, as Retract
// does: by board and id, or for no id by its content.
func withoutLast(subs []leaderboard.Submission, r leaderboard.Submission) []leaderboard.Submission {
	r, _ = prepareSub(r)
	for i := len(subs) - 1; i >= 0; i-- {
		s, _ := prepareSub(subs[i])
		same := s.Board == r.Board && s.ID == r.ID
		if r.ID == "" {
			same = same && s.Member == r.Member && s.Score == r.Score && s.At.Equal(r.At) && s.Received.Equal(r.Received)
		}
		if same {
			return append(subs[:i:i], subs[i+1:]...)
		}
	}
	return subs
}

// requireRetracted checks every period of the board: kept, equal to the
// model, and clean by the store's own check.
func requireRetracted(t *testing.T, s *Store, k *keptOn, model []leaderboard.Submission, board string, policy leaderboard.Policy, order leaderboard.Order, block blockWindow) {
	t.Helper()
	truncated := make([]leaderboard.Submission, len(model))
	for i, sub := range model {
		truncated[i], _ = prepareSub(sub)
	}
	base := block.base
	for _, sp := range []leaderboard.SubmissionPeriod{allTime, block.period(base), block.period(base.Add(4 * time.Hour))} {
		q := query(board, policy, order, sp)
		requireModel(t, s, k, truncated, q, true)
		c, err := s.CheckStandings(context.Background(), q, false)
		require.NoError(t, err)
		require.True(t, c.Kept)
		require.Zero(t, c.DifferCount, "%s/%s: %v", sp.Window, sp.Period, c.Differ)
	}
}

func boardRows(tb testing.TB, s *Store, board string) int {
	tb.Helper()
	var n int
	require.NoError(tb, s.pool.QueryRow(context.Background(), "SELECT count(*) FROM "+s.tSubs+" WHERE board = $1", board).Scan(&n))
	return n
}

// TestRetractOverflow: an Accumulate submission whose total overflows
// (which Redis refuses) made the store stop keeping the period; after its
// retraction Standings aggregates the period, exactly, and its row is gone.
// A refusal that kept the period (a total past a tie-break's MaxScore)
// leaves it kept.
func TestRetractOverflow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	k := watch(s)
	sub := func(member string, score float64) leaderboard.Submission {
		return leaderboard.Submission{Board: "ovf", Member: member, Score: score, At: t0, Received: t0,
			Policy: leaderboard.Accumulate, Periods: []leaderboard.SubmissionPeriod{allTime}}
	}
	kept := []leaderboard.Submission{sub("a", 1.5e308), sub("b", 3)}
	_, err := s.AppendBatch(ctx, kept)
	require.NoError(t, err)
	q := query("ovf", leaderboard.Accumulate, leaderboard.HighestFirst, allTime)
	requireModel(t, s, k, kept, q, true)

	refused := sub("b", 1e15) // past a tie-break's MaxScore: still kept
	_, err = s.Append(ctx, refused)
	require.NoError(t, err)
	require.NoError(t, s.Retract(ctx, []leaderboard.Submission{refused}))
	requireModel(t, s, k, kept, q, true)

	refused = sub("a", 1.5e308) // the total overflows
	_, err = s.Append(ctx, refused)
	require.NoError(t, err)
	require.NoError(t, s.Retract(ctx, []leaderboard.Submission{refused}))
	requireModel(t, s, k, kept, q, false)
	require.Equal(t, 2, boardRows(t, s, "ovf"))
	c, err := s.CheckStandings(ctx, q, false)
	require.NoError(t, err)
	require.False(t, c.Kept)
}

// TestRetractRefusesBadInput: a list with one bad submission retracts
// nothing; a submission the store does not hold is ignored.
func TestRetractRefusesBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	good := leaderboard.Submission{Board: "bad", Member: "m", Score: 1, At: t0, Periods: []leaderboard.SubmissionPeriod{allTime}}
	_, err := s.Append(ctx, good)
	require.NoError(t, err)
	for _, bad := range []leaderboard.Submission{
		{Board: "bad", Member: "\xff", Score: 1, At: t0},
		{Board: "", Member: "m", Score: 1, At: t0},
		{Board: "bad", ID: "a\x00b", Member: "m", Score: 1, At: t0},
		{Board: "bad", Member: "m", Score: math.Inf(1), At: t0},
	} {
		err := s.Retract(ctx, []leaderboard.Submission{good, bad})
		require.Error(t, err)
		require.ErrorContains(t, err, "pgstore: retract: submission 1: ")
		require.True(t, isTyped(err), "%v", err)
	}
	require.Equal(t, 1, boardRows(t, s, "bad"))
	other := good
	other.Score = 2
	require.NoError(t, s.Retract(ctx, []leaderboard.Submission{other, {Board: "bad", ID: "never", Member: "m", At: t0}}))
	require.NoError(t, s.Retract(ctx, nil))
	require.Equal(t, 1, boardRows(t, s, "bad"))
}

// isTyped reports an error that matches one of leaderboard's sentinels for
// bad input.
func isTyped(err error) bool {
	for _, sentinel := range []error{leaderboard.ErrInvalidArgument, leaderboard.ErrInvalidMember, leaderboard.ErrInvalidScore} {
		if errors.Is(err, sentinel) {
			return true
		}
	}
	return false
}
