package pgstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// TestAppendBatch loads 100,000 submissions with ids (several INSERT chunks
// in one transaction), with duplicates inside the batch and against earlier
// appends, and 100,000 without ids (COPY), and checks duplicates and the
// append order Replace and Accumulate depend on.
func TestAppendBatch(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	const n, members = 100_000, 1000

	// Ids 0..9 are appended before the batch.
	for i := range 10 {
		dup, err := s.Append(ctx, leaderboard.Submission{Board: "ids", ID: fmt.Sprintf("id-%d", i), Member: "early", Score: 1, At: t0})
		require.NoError(t, err)
		require.False(t, dup)
	}
	subs := make([]leaderboard.Submission, n)
	wantDup := make([]bool, n)
	for i := range subs {
		subs[i] = leaderboard.Submission{
			Board:  "ids",
			ID:     fmt.Sprintf("id-%d", i),
			Member: fmt.Sprintf("m%d", i%members),
			Score:  float64(i),
			At:     t0.Add(time.Duration(i) * time.Microsecond),
		}
		switch {
		case i < 10:
			wantDup[i] = true // appended before
		case i%1000 == 999:
			subs[i].ID = fmt.Sprintf("id-%d", i-500) // repeats an id of this batch
			wantDup[i] = true
		case i%1000 == 998:
			subs[i].ID = "" // no id: never a duplicate
		case i == 30_000:
			subs[i].ID = fmt.Sprintf("id-%d", n+1) // first of a pair spanning two chunks
		case i == 70_001:
			subs[i].ID = fmt.Sprintf("id-%d", n+1)
			wantDup[i] = true
		}
	}
	start := time.Now()
	dups, err := s.AppendBatch(ctx, subs)
	require.NoError(t, err)
	t.Logf("AppendBatch of %d submissions with ids: %v", n, time.Since(start))
	require.Equal(t, wantDup, dups)

	recorded := 10
	for _, d := range wantDup {
		if !d {
			recorded++
		}
	}
	require.Equal(t, recorded, countRows(t, s))

	// The same batch again: every id is a duplicate now.
	again, err := s.AppendBatch(ctx, subs[:5000])
	require.NoError(t, err)
	for i, d := range again {
		require.Equal(t, subs[i].ID != "", d, i)
	}

	// The last submission of a member in the slice is its last appended.
	got := standings(t, s, leaderboard.StandingsQuery{Board: "ids", Policy: leaderboard.Replace})
	lastRecorded := map[string]leaderboard.Submission{}
	for i, sub := range subs {
		if !wantDup[i] {
			lastRecorded[sub.Member] = sub
		}
	}
	for _, sub := range subs[:5000] {
		if sub.ID == "" { // the repeat of the batch appended those again
			lastRecorded[sub.Member] = sub
		}
	}
	require.Equal(t, len(lastRecorded)+1, len(got), "m999 (all duplicates) has none; early has one")
	for member, sub := range lastRecorded {
		require.Equal(t, sub.Score, got[member].Score, member)
		require.True(t, sub.At.Equal(got[member].At), member)
	}

	// Without ids: COPY, in order.
	for i := range subs {
		subs[i].Board, subs[i].ID = "copy", ""
		subs[i].Score = []float64{0.1, 0.2, 0.3, 1e16, 1}[i%5]
	}
	start = time.Now()
	dups, err = s.AppendBatch(ctx, subs)
	require.NoError(t, err)
	t.Logf("AppendBatch of %d submissions without ids: %v", n, time.Since(start))
	require.Equal(t, make([]bool, n), dups)
	want := modelStandings(subs, "copy", leaderboard.Accumulate, leaderboard.HighestFirst, time.Time{}, time.Time{})
	got = standings(t, s, leaderboard.StandingsQuery{Board: "copy", Policy: leaderboard.Accumulate})
	require.Equal(t, len(want), len(got))
	for member, w := range want {
		require.Equal(t, w, got[member], member)
	}
}

// TestAppendBatchIsAtomic: a batch PostgreSQL refuses part of records
// nothing, on both paths.
func TestAppendBatchIsAtomic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	for _, withIDs := range []bool{false, true} {
		subs := make([]leaderboard.Submission, batchChunk+10)
		for i := range subs {
			subs[i] = leaderboard.Submission{Board: "b", Member: fmt.Sprintf("m%d", i), Score: 1, At: t0}
			if withIDs {
				subs[i].ID = fmt.Sprintf("id-%d", i)
			}
		}
		// timestamptz ends in the year 294276.
		subs[len(subs)-1].At = time.Date(300000, 1, 1, 0, 0, 0, 0, time.UTC)
		_, err := s.AppendBatch(ctx, subs)
		require.Error(t, err)
		require.ErrorContains(t, err, "pgstore: append batch: ")
		require.Equal(t, 0, countRows(t, s), "with ids: %v", withIDs)
	}
	dups, err := s.AppendBatch(ctx, nil)
	require.NoError(t, err)
	require.Empty(t, dups)
}

// BenchmarkAppendBatch loads batches of 10,000 submissions to 100,000
// members, with and without ids, without Periods (no standings kept) and
// listing an all-time and a daily period (both kept, KeepBest); rows/s is
// the load rate.
//
//	go test -run '^$' -bench 'AppendBatch$' -benchtime 3s .
func BenchmarkAppendBatch(b *testing.B) {
	day := leaderboard.SubmissionPeriod{Window: "daily", Period: "2026-11-30", Start: t0.Truncate(24 * time.Hour)}
	day.End = day.Start.Add(24 * time.Hour)
	for _, kept := range []bool{false, true} {
		for _, withIDs := range []bool{false, true} {
			name := "copy"
			if withIDs {
				name = "ids"
			}
			var periods []leaderboard.SubmissionPeriod
			if kept {
				name += "-2-periods"
				periods = []leaderboard.SubmissionPeriod{allTime, day}
			}
			b.Run(name, func(b *testing.B) {
				ctx := context.Background()
				s := newStore(b)
				const size = 10_000
				batch := make([]leaderboard.Submission, size)
				next := 0
				for b.Loop() {
					for i := range batch {
						batch[i] = leaderboard.Submission{
							Board:   "bench",
							Member:  fmt.Sprintf("player:%d", next%100_000),
							Score:   float64(next % 7919),
							At:      t0.Add(time.Duration(next%1000) * time.Millisecond),
							Periods: periods,
							// As a board fills it in: the clock at the call.
							Received: t0.Add(time.Duration(next) * time.Microsecond),
						}
						if withIDs {
							batch[i].ID = fmt.Sprintf("req-%d", next)
						}
						next++
					}
					if _, err := s.AppendBatch(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "rows/s")
			})
		}
	}
}
