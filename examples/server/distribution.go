package main

import (
	"maps"
	"math"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/skiprank/leaderboard"
)

// The distribution chart is drawn from the best distSample entries: one
// bounded read through the SDK, which is the whole board for most games
// and the part that matters for the rest.
const (
	distSample = leaderboard.MaxN
	distBins   = 20
	distTTL    = time.Second
)

type bin struct {
	From  float64 `json:"from"`
	To    float64 `json:"to"` // exclusive, but for the last bin
	Count int     `json:"count"`
}

type distResponse struct {
	Window  string `json:"window"`
	Period  string `json:"period"`
	Total   int64  `json:"total"`   // members in the period
	Sampled int    `json:"sampled"` // of them, the best ones counted in bins
	Bins    []bin  `json:"bins"`
}

// distCache keeps each answer until the board changes (a change message
// arrives) or distTTL passes, so a crowd of open pages costs Redis one read
// per window per change message (at most one per publishEvery), not one per
// page.
type distCache struct {
	mu      sync.Mutex
	entries map[string]distCached
}

type distCached struct {
	at  time.Time
	gen uint64
	res distResponse
}

// handleDistribution is GET /api/v1/distribution?window=&at=.
func (s *server) handleDistribution(w http.ResponseWriter, r *http.Request) {
	v, ok := queryOf(w, r)
	if !ok {
		return
	}
	// In name order, as the board's reads check theirs, so that a query
	// with several faults always gets the same error.
	for _, k := range slices.Sorted(maps.Keys(v)) {
		if k != "window" && k != "at" {
			fe := unknownParam(k)
			writeError(w, http.StatusBadRequest, fe.msg, fe.field)
			return
		}
		if len(v[k]) > 1 {
			writeError(w, http.StatusBadRequest, k+" given more than once", k)
			return
		}
	}
	win, at, fe := s.parseWindow(v)
	if fe != nil {
		writeError(w, http.StatusBadRequest, fe.msg, fe.field)
		return
	}
	q := boardQuery{window: win, at: at}
	period := s.pin(&q) // the cache key, the answer and the read agree
	key := win.Name() + "/" + period
	now, gen := time.Now(), s.hub.gen.Load()
	s.dist.mu.Lock()
	c, ok := s.dist.entries[key]
	s.dist.mu.Unlock()
	if ok && c.gen == gen && now.Sub(c.at) < distTTL {
		writeJSON(w, http.StatusOK, c.res)
		return
	}
	ctx, cancel := s.redisCtx(r)
	defer cancel()
	p, err := s.board.Page(ctx, 1, distSample, q.opts()...)
	if err != nil {
		s.fail(w, r, "distribution", err, "")
		return
	}
	res := distResponse{Window: win.Name(), Period: period, Total: p.Total, Sampled: len(p.Entries), Bins: histogram(p.Entries, distBins)}
	s.dist.mu.Lock()
	if s.dist.entries == nil || len(s.dist.entries) > 100 {
		s.dist.entries = map[string]distCached{} // old periods pile up otherwise
	}
	s.dist.entries[key] = distCached{at: now, gen: gen, res: res}
	s.dist.mu.Unlock()
	writeJSON(w, http.StatusOK, res)
}

// histogram counts scores in at most n+1 bins of a round width (1, 2 or 5
// times a power of ten) starting at a multiple of it, so the chart's labels
// read well. Any finite scores are safe, even -MaxFloat64 and MaxFloat64
// together: no step subtracts two scores, whose difference can overflow.
func histogram(es []leaderboard.Entry, n int) []bin {
	if len(es) == 0 || n < 1 {
		return []bin{}
	}
	lo, hi := es[0].Score, es[0].Score
	for _, e := range es {
		lo, hi = math.Min(lo, e.Score), math.Max(hi, e.Score)
	}
	// Halves subtract without overflow; their difference is at most
	// MaxFloat64.
	width := niceWidth((hi/2 - lo/2) / float64(n) * 2)
	start := math.Floor(lo/width) * width
	if math.IsInf(start, 0) {
		start = lo // rounding down passed -MaxFloat64
	}
	// Positions are counted in widths, from quotients that stay finite.
	at := func(score float64) int {
		i := math.Floor(score/width - start/width)
		return int(max(0, min(i, float64(n))))
	}
	count := at(hi) + 1
	bins := make([]bin, count)
	for i := range bins {
		bins[i] = bin{From: finite(start + float64(i)*width), To: finite(start + float64(i+1)*width)}
	}
	// Where rounding (a quotient that underflows, a clamped position) left
	// the ends short, they stretch to the scores.
	bins[0].From = min(bins[0].From, lo)
	bins[count-1].To = max(bins[count-1].To, hi)
	for _, e := range es {
		bins[at(e.Score)].Count++
	}
	return bins
}

// finite clamps x to the float64 range: JSON has no infinities.
func finite(x float64) float64 { return max(-math.MaxFloat64, min(x, math.MaxFloat64)) }

// niceWidth rounds w up to 1, 2 or 5 times a power of ten; at least 1e-9 so
// that equal scores still make one bin, and at most MaxFloat64.
func niceWidth(w float64) float64 {
	if !(w > 1e-9) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(w)))
	for _, m := range []float64{1, 2, 5, 10} {
		if w <= m*p {
			return finite(m * p)
		}
	}
	return finite(10 * p)
}
