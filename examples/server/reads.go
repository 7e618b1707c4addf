package main

import (
	"context"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/skiprank/leaderboard"
)

// The reads of GET /api/v1/leaderboard beyond the top, a page and a
// player's neighbours: positions (?from=&to=), a score bracket
// (?lo=&hi=&n=), a tier's cutoff (?percent=) and where a score would place
// (?score=&radius=).

// rangeResponse answers ?from=&to=.
type rangeResponse struct {
	Window  string  `json:"window"`
	Period  string  `json:"period"`
	From    int     `json:"from"`
	To      int     `json:"to"`
	Entries []entry `json:"entries"`
}

// betweenResponse answers ?lo=&hi=&n=. An infinite bound is null: JSON
// has no infinity.
type betweenResponse struct {
	Window  string   `json:"window"`
	Period  string   `json:"period"`
	Lo      *float64 `json:"lo"`
	Hi      *float64 `json:"hi"`
	N       int      `json:"n"`
	Entries []entry  `json:"entries"`
}

// cutoffResponse answers ?percent=: the entry whose score is the one to
// reach to be in the best percent%.
type cutoffResponse struct {
	Window  string  `json:"window"`
	Period  string  `json:"period"`
	Percent float64 `json:"percent"`
	Entry   entry   `json:"entry"`
}

// aroundScoreResponse answers ?score=&radius=. Rank is where the score
// would place: 1 + the players with a strictly better score.
type aroundScoreResponse struct {
	Window  string  `json:"window"`
	Period  string  `json:"period"`
	Score   float64 `json:"score"`
	Rank    int64   `json:"rank"`
	Entries []entry `json:"entries"`
}

// positions answers ?from=&to=: the entries at those board positions.
func (s *server) positions(ctx context.Context, w http.ResponseWriter, r *http.Request, q boardQuery, period string) {
	es, err := s.board.Range(ctx, int64(q.from), int64(q.to), q.opts()...)
	if err != nil {
		s.fail(w, r, "range", err, "")
		return
	}
	writeJSON(w, http.StatusOK, rangeResponse{
		Window: q.window.Name(), Period: period, From: q.from, To: q.to, Entries: entries(es),
	})
}

// between answers ?lo=&hi=&n=: the best n entries with a score in lo..hi.
func (s *server) between(ctx context.Context, w http.ResponseWriter, r *http.Request, q boardQuery, period string) {
	es, err := s.board.Between(ctx, q.lo, q.hi, q.n, q.opts()...)
	if err != nil {
		s.fail(w, r, "between", err, "")
		return
	}
	writeJSON(w, http.StatusOK, betweenResponse{
		Window: q.window.Name(), Period: period, Lo: finiteOrNil(q.lo), Hi: finiteOrNil(q.hi), N: q.n,
		Entries: entries(es),
	})
}

// cutoff answers ?percent=. An empty board has no cutoff: the SDK's
// ErrNotRanked, answered as for a player who is not ranked.
func (s *server) cutoff(ctx context.Context, w http.ResponseWriter, r *http.Request, q boardQuery, period string) {
	e, err := s.board.Cutoff(ctx, q.percent, q.opts()...)
	if err != nil {
		s.fail(w, r, "cutoff", err, "")
		return
	}
	writeJSON(w, http.StatusOK, cutoffResponse{
		Window: q.window.Name(), Period: period, Percent: q.percent, Entry: entries([]leaderboard.Entry{e})[0],
	})
}

// aroundScore answers ?score=&radius=: where score would place, and the
// entries around that place, without submitting anything.
func (s *server) aroundScore(ctx context.Context, w http.ResponseWriter, r *http.Request, q boardQuery, period string) {
	rank, es, err := s.board.AroundScore(ctx, q.score, q.radius, q.opts()...)
	if err != nil {
		s.fail(w, r, "around score", err, "")
		return
	}
	writeJSON(w, http.StatusOK, aroundScoreResponse{
		Window: q.window.Name(), Period: period, Score: q.score, Rank: rank, Entries: entries(es),
	})
}

func parseRange(v url.Values, q *boardQuery) (fe *fieldError) {
	switch {
	case !v.Has("from"):
		return badField("from", "from is required with to")
	case !v.Has("to"):
		return badField("to", "to is required with from")
	}
	if q.from, fe = intParam(v, "from", 0, 1, math.MaxInt32); fe != nil {
		return fe
	}
	// At most maxSpan positions, from..to inclusive; written so that it
	// cannot overflow int on any platform.
	q.to, fe = intParam(v, "to", 0, q.from, q.from+min(maxSpan-1, math.MaxInt32-q.from))
	return fe
}

func parseBetween(v url.Values, q *boardQuery) (fe *fieldError) {
	if q.lo, fe = boundParam(v, "lo", math.Inf(-1)); fe != nil {
		return fe
	}
	if q.hi, fe = boundParam(v, "hi", math.Inf(1)); fe != nil {
		return fe
	}
	switch {
	case q.lo > q.hi:
		return badField("lo", "lo must not be above hi")
	// No score reaches these ends, and the answer could not say them:
	// JSON has no infinity, and null is an open end.
	case math.IsInf(q.lo, 1):
		return badField("lo", "lo must not be +inf: no score is at or above it")
	case math.IsInf(q.hi, -1):
		return badField("hi", "hi must not be -inf: no score is at or below it")
	}
	q.n, fe = intParam(v, "n", 10, 1, maxSpan)
	return fe
}

func parseCutoff(v url.Values, q *boardQuery) *fieldError {
	p, ok := parseDecimal(v.Get("percent"))
	if !ok || !(p > 0 && p <= 100) {
		return badField("percent", "percent must be a number above 0 and at most 100")
	}
	q.percent = p
	return nil
}

func parseAroundScore(v url.Values, q *boardQuery) (fe *fieldError) {
	var ok bool
	if q.score, ok = parseDecimal(v.Get("score")); !ok {
		return badField("score", "score must be a finite number")
	}
	q.radius, fe = intParam(v, "radius", 5, 0, maxScoreRadius)
	return fe
}

// boundParam reads lo or hi: a number, -inf, +inf or inf, or empty (or
// absent) for the open end open. A "+" left unescaped in a query string
// arrives as a space, so inf is taken for +inf.
func boundParam(v url.Values, k string, open float64) (float64, *fieldError) {
	raw := v.Get(k)
	switch raw {
	case "":
		return open, nil
	case "-inf":
		return math.Inf(-1), nil
	case "+inf", "inf":
		return math.Inf(1), nil
	}
	if f, ok := parseDecimal(raw); ok {
		return f, nil
	}
	return 0, badField(k, "%s must be a finite number, -inf, +inf (%%2Binf in a URL), inf or empty", k)
}

// decimal is the only number syntax the read parameters take.
// strconv.ParseFloat alone would also take hex (0x1p4), underscores
// (0x_1p4), and inf, infinity and nan in any case.
var decimal = regexp.MustCompile(`^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$`)

// parseDecimal parses a decimal number that float64 holds: one that
// overflows (1e400) or a non-zero one that rounds to zero (1e-400) is
// refused rather than read as another number.
func parseDecimal(raw string) (float64, bool) {
	if !decimal.MatchString(raw) {
		return 0, false
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	mantissa, _, _ := strings.Cut(strings.ToLower(raw), "e")
	if f == 0 && strings.ContainsAny(mantissa, "123456789") {
		return 0, false
	}
	return f, true
}

// finiteOrNil is f for JSON, which has no infinity: nil when infinite.
func finiteOrNil(f float64) *float64 {
	if math.IsInf(f, 0) {
		return nil
	}
	return &f
}
