package main

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"testing"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestDistributionExtremeScores: scores at both ends of float64, whose
// difference overflows, still chart: 200, every bound finite, every score
// counted once.
func TestDistributionExtremeScores(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b, func(c *config) { c.MinScore, c.MaxScore = -math.MaxFloat64/2, math.MaxFloat64/2 })
		err := f.srv.board.SubmitMany(context.Background(), map[string]float64{
			"lowest": -math.MaxFloat64, "highest": math.MaxFloat64, "zero": 0, "tiny": math.SmallestNonzeroFloat64,
		})
		if err != nil {
			t.Fatal(err)
		}
		rec := f.get("/api/v1/distribution")
		if rec.Code != http.StatusOK {
			t.Fatalf("distribution: %d %s", rec.Code, rec.Body)
		}
		got := decode[distResponse](t, rec)
		n := 0
		for _, b := range got.Bins {
			n += b.Count
		}
		if n != 4 || len(got.Bins) > distBins+1 || got.Bins[0].From > -math.MaxFloat64/2 || got.Bins[len(got.Bins)-1].To < math.MaxFloat64/2 {
			t.Fatalf("bins %+v", got.Bins)
		}
	})
}

// FuzzHistogram: any finite scores give at most n+1 bins of finite,
// ascending bounds that count every score once, in or next to its bin,
// and never panic.
func FuzzHistogram(f *testing.F) {
	f.Add(0.0, 0.0, 0.0, uint8(20))
	f.Add(-math.MaxFloat64, math.MaxFloat64, 0.0, uint8(20))
	f.Add(-math.MaxFloat64, math.MaxFloat64, 1.0, uint8(1))
	f.Add(math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64, uint8(3))
	f.Add(1e300, 1e300+1e284, 1e300, uint8(20))
	f.Add(-3.0, 3.0, 0.5, uint8(3))
	f.Add(5e-324, -5e-324, 0.0, uint8(20))
	f.Add(77.0, -5e-324, 0.0, uint8(20)) // a quotient underflows to -0: the first bin must still reach down
	f.Fuzz(func(t *testing.T, a, b, c float64, n uint8) {
		es := []leaderboard.Entry{}
		for _, s := range []float64{a, b, c} {
			if !math.IsNaN(s) && !math.IsInf(s, 0) {
				es = append(es, leaderboard.Entry{Score: s})
			}
		}
		bins := histogram(es, int(n))
		if len(es) == 0 || n == 0 {
			if len(bins) != 0 {
				t.Fatalf("bins %+v for no scores or no bins", bins)
			}
			return
		}
		if len(bins) < 1 || len(bins) > int(n)+1 {
			t.Fatalf("%d bins for n = %d", len(bins), n)
		}
		if _, err := json.Marshal(bins); err != nil {
			t.Fatalf("bins %+v do not encode: %v", bins, err)
		}
		total := 0
		for i, b := range bins {
			if b.From > b.To || (i > 0 && b.From < bins[i-1].From) {
				t.Fatalf("bin %d of %+v out of order", i, bins)
			}
			total += b.Count
		}
		if total != len(es) {
			t.Fatalf("bins %+v count %d of %d scores", bins, total, len(es))
		}
		if lo, hi := bins[0].From, bins[len(bins)-1].To; minScore(es) < lo || maxScore(es) > hi {
			t.Fatalf("bins [%v, %v] do not cover the scores %+v", lo, hi, es)
		}
	})
}

func minScore(es []leaderboard.Entry) float64 {
	m := es[0].Score
	for _, e := range es {
		m = min(m, e.Score)
	}
	return m
}

func maxScore(es []leaderboard.Entry) float64 {
	m := es[0].Score
	for _, e := range es {
		m = max(m, e.Score)
	}
	return m
}
