package pgstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/skiprank/leaderboard"
)

// BenchmarkAppend measures one Append at a time, to 100,000 members of one
// board: without Periods (no standings kept, as before migration 2), and
// listing an all-time and a daily period (two standings kept, as a board
// with those windows does) under each policy. The difference is what
// keeping the standings costs a Submit.
//
//	go test -run '^$' -bench 'Append$' -benchtime 20000x .
func BenchmarkAppend(b *testing.B) {
	day := leaderboard.SubmissionPeriod{Window: "daily", Period: "2026-11-30", Start: t0.Truncate(24 * time.Hour)}
	day.End = day.Start.Add(24 * time.Hour)
	periods := []leaderboard.SubmissionPeriod{allTime, day}
	cases := []struct {
		name    string
		policy  leaderboard.Policy
		periods []leaderboard.SubmissionPeriod
	}{
		{"no-periods", leaderboard.KeepBest, nil},
		{"keepbest-2-periods", leaderboard.KeepBest, periods},
		{"replace-2-periods", leaderboard.Replace, periods},
		{"accumulate-2-periods", leaderboard.Accumulate, periods},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			ctx := context.Background()
			s := newStore(b)
			i := 0
			for b.Loop() {
				_, err := s.Append(ctx, leaderboard.Submission{
					Board: "bench", Member: fmt.Sprintf("player:%d", i*7919%100_000), Score: float64(i % 7919),
					At: t0.Add(time.Duration(i) * time.Millisecond), Received: t0.Add(time.Duration(i) * time.Millisecond),
					Policy: c.policy, Periods: c.periods,
				})
				if err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/append")
		})
	}
}
