package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/skiprank/leaderboard"
)

// windowStanding is one window of a submit's answer. The previous rank and
// score are null when the player was not ranked before: 0 is a real score.
type windowStanding struct {
	Period        string   `json:"period"`
	Rank          int64    `json:"rank"`
	Score         float64  `json:"score"`
	PreviousRank  *int64   `json:"previousRank"`
	PreviousScore *float64 `json:"previousScore"`
	NewBest       bool     `json:"newBest"`
	Total         int64    `json:"total"`
	Percentile    float64  `json:"percentile"`
}

type submitResponse struct {
	UserID       string                    `json:"userId"`
	Submitted    float64                   `json:"submitted"`
	Score        float64                   `json:"score"` // the best, which may be an earlier score
	Rank         int64                     `json:"rank"`
	PreviousRank *int64                    `json:"previousRank"` // null: not ranked before
	NewBest      bool                      `json:"newBest"`
	Windows      map[string]windowStanding `json:"windows"`
}

// previous returns an entry from before a submit as JSON wants it: nil
// rank and score when the player was not ranked (the SDK's Rank 0).
func previous(e leaderboard.Entry) (*int64, *float64) {
	if e.Rank == 0 {
		return nil, nil
	}
	rank, score := e.Rank, e.Score
	return &rank, &score
}

// handleSubmit is POST /api/v1/scores. The checks run from the cheapest to
// the dearest, and none of them writes to the board: query string (it
// takes none), size, signature, replay, fields, rate limit; only then the
// submit.
func (s *server) handleSubmit(w http.ResponseWriter, r *http.Request) {
	if fe := paramsFault(r); fe != nil {
		s.refuse(w, outcomeInvalid, http.StatusBadRequest, fe.msg, fe.field)
		return
	}
	body, ok := s.submitBody(w, r)
	if !ok {
		return
	}
	ctx, cancel := s.redisCtx(r)
	defer cancel()
	if err := s.auth.verify(ctx, r, body); err != nil {
		var ae *authError
		if !errors.As(err, &ae) {
			s.fail(w, r, "verify signature", err, "")
			return
		}
		outcome := outcomeUnsigned
		if ae.replay {
			outcome = outcomeReplayed
		}
		w.Header().Set("WWW-Authenticate", `LB-HMAC-SHA256 realm="scores"`)
		s.refuse(w, outcome, http.StatusUnauthorized, ae.reason, ae.header)
		return
	}
	req, fe := decodeSubmit(body, s.cfg.MinScore, s.cfg.MaxScore)
	if fe != nil {
		s.refuse(w, outcomeInvalid, http.StatusBadRequest, fe.msg, fe.field)
		return
	}
	ok, wait, err := s.limiter.allow(ctx, req.UserID)
	if err != nil {
		s.fail(w, r, "rate limit", err, "")
		return
	}
	if !ok {
		secs := int64(math.Ceil(wait.Seconds()))
		w.Header().Set("Retry-After", strconv.FormatInt(max(secs, 1), 10))
		s.refuse(w, outcomeRateLimited, http.StatusTooManyRequests,
			fmt.Sprintf("too many submissions for this user; retry in %v", wait.Round(time.Millisecond)), "userId")
		return
	}
	var opts []leaderboard.SubmitOption
	if req.Name != "" {
		opts = append(opts, leaderboard.WithData(req.Name))
	}
	res, err := s.board.Submit(ctx, req.UserID, req.Score, opts...)
	if err != nil {
		s.fail(w, r, "submit", err, "score")
		return
	}
	if res.Changed {
		s.metrics.submits.WithLabelValues(outcomeNewBest).Inc()
	} else {
		s.metrics.submits.WithLabelValues(outcomeNotBest).Inc()
	}
	s.hub.submitted(req.UserID, req.Score)
	writeJSON(w, http.StatusOK, submitAnswer(req, res))
}

// submitBody reads a submission's body, or answers why not: 400 for what
// the client sent, 499 for a client gone before it was whole.
func (s *server) submitBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	body, err := readBody(w, r)
	var fe *fieldError
	switch {
	case errors.As(err, &fe):
		s.refuse(w, outcomeInvalid, http.StatusBadRequest, fe.msg, fe.field)
		return nil, false
	case err != nil: // the client went away: fail answers 499
		s.fail(w, r, "read body", err, "")
		return nil, false
	}
	return body, true
}

// submitAnswer is the answer to an accepted submission.
func submitAnswer(req submitRequest, res leaderboard.Result) submitResponse {
	out := submitResponse{
		UserID: req.UserID, Submitted: req.Score, Score: res.Score, Rank: res.Rank,
		NewBest: res.Changed, Windows: make(map[string]windowStanding, len(res.Windows)),
	}
	out.PreviousRank, _ = previous(res.Previous)
	for _, wr := range res.Windows {
		ws := windowStanding{
			Period: wr.Period, Rank: wr.Standing.Rank, Score: wr.Standing.Score, NewBest: wr.Changed,
			Total: wr.Standing.Total, Percentile: round2(wr.Standing.Percentile),
		}
		ws.PreviousRank, ws.PreviousScore = previous(wr.Previous)
		out.Windows[wr.Window] = ws
	}
	return out
}

func (s *server) refuse(w http.ResponseWriter, outcome string, status int, msg, field string) {
	s.metrics.submits.WithLabelValues(outcome).Inc()
	writeError(w, status, msg, field)
}

// entry is one row of a board.
type entry struct {
	Rank   int64   `json:"rank"`
	UserID string  `json:"userId"`
	Name   string  `json:"name,omitempty"` // the display name; absent when none was given
	Score  float64 `json:"score"`
}

type boardResponse struct {
	Window  string  `json:"window"`
	Period  string  `json:"period"`
	Entries []entry `json:"entries"`
	Total   int64   `json:"total"`
	Page    int     `json:"page,omitempty"`
	Size    int     `json:"size,omitempty"`
}

type aroundResponse struct {
	Window     string  `json:"window"`
	Period     string  `json:"period"`
	UserID     string  `json:"userId"`
	UserRank   int64   `json:"userRank"`
	UserScore  float64 `json:"userScore"`
	Percentile float64 `json:"percentile"`
	Total      int64   `json:"total"`
	Entries    []entry `json:"entries"`
}

// The reads of GET /api/v1/leaderboard, picked by the parameters given.
const (
	readTop         = "top"
	readPage        = "page"
	readAround      = "around"
	readRange       = "range"
	readBetween     = "between"
	readCutoff      = "cutoff"
	readAroundScore = "aroundScore"
)

// boardQuery is a parsed GET /api/v1/leaderboard.
type boardQuery struct {
	window     leaderboard.Window
	at         time.Time // ?at=, or zero for now until pin sets it
	read       string    // which read: the fields below that it takes are set
	limit      int
	page, size int
	user       string
	radius     int // around's range, aroundScore's radius
	from, to   int
	lo, hi     float64 // ±Inf: an open end
	n          int
	percent    float64
	score      float64
}

// opts are the SDK queries of q; every read takes the players' names, and
// reads the instant q was pinned to.
func (q boardQuery) opts() []leaderboard.Query {
	return []leaderboard.Query{leaderboard.In(q.window), leaderboard.IncludeData(), leaderboard.At(q.at)}
}

// pin sets the instant q reads, now unless ?at= gave one, and returns the
// period it falls in. The answer's period and its entries must come from
// one reading of the clock: were the SDK left to read it again, a read at a
// period's end would label the next period's entries with the old period.
// Reading At the current instant never returns ErrExpired: a period is
// kept a whole period after its end.
func (s *server) pin(q *boardQuery) string {
	if q.at.IsZero() {
		q.at = s.now()
	}
	return q.window.Period(q.at).ID
}

// handleBoard is GET /api/v1/leaderboard: ?limit= for the top, ?page=&size=
// for a page, ?userId=&range= for a player and their neighbours, ?from=&to=
// for positions, ?lo=&hi=&n= for a score bracket, ?percent= for a tier's
// cutoff, ?score=&radius= for where a score would place; each with ?window=
// and ?at=.
func (s *server) handleBoard(w http.ResponseWriter, r *http.Request) {
	v, ok := queryOf(w, r)
	if !ok {
		return
	}
	q, fe := s.parseBoardQuery(v)
	if fe != nil {
		writeError(w, http.StatusBadRequest, fe.msg, fe.field)
		return
	}
	ctx, cancel := s.redisCtx(r)
	defer cancel()
	period := s.pin(&q)
	switch q.read {
	case readAround:
		s.around(ctx, w, r, q, period)
	case readRange:
		s.positions(ctx, w, r, q, period)
	case readBetween:
		s.between(ctx, w, r, q, period)
	case readCutoff:
		s.cutoff(ctx, w, r, q, period)
	case readAroundScore:
		s.aroundScore(ctx, w, r, q, period)
	default:
		s.top(ctx, w, r, q, period)
	}
}

// top answers ?limit= and ?page=&size=.
func (s *server) top(ctx context.Context, w http.ResponseWriter, r *http.Request, q boardQuery, period string) {
	number, size := q.page, q.size
	if q.read == readTop {
		// The top n is page 1 of size n; Page reads the total with the
		// entries in one round trip, so they agree.
		number, size = 1, q.limit
	}
	p, err := s.board.Page(ctx, number, size, q.opts()...)
	if err != nil {
		s.fail(w, r, "page", err, "")
		return
	}
	out := boardResponse{Window: q.window.Name(), Period: period, Entries: entries(p.Entries), Total: p.Total}
	if q.read == readPage {
		out.Page, out.Size = number, size
	}
	writeJSON(w, http.StatusOK, out)
}

// around answers ?userId=: the player's standing and their neighbours. Two
// reads, each atomic: under a stream of submits the neighbours may be a
// moment newer than the standing, which a page refreshing live absorbs.
func (s *server) around(ctx context.Context, w http.ResponseWriter, r *http.Request, q boardQuery, period string) {
	st, err := s.board.Rank(ctx, q.user, q.opts()...)
	if err != nil {
		s.fail(w, r, "rank", err, "userId")
		return
	}
	es, err := s.board.Around(ctx, q.user, q.radius, q.opts()...)
	if err != nil {
		s.fail(w, r, "around", err, "userId")
		return
	}
	writeJSON(w, http.StatusOK, aroundResponse{
		Window: q.window.Name(), Period: period, UserID: q.user,
		UserRank: st.Rank, UserScore: st.Score, Percentile: round2(st.Percentile), Total: st.Total,
		Entries: entries(es),
	})
}

// boardShape is one read of GET /api/v1/leaderboard: any of its lead
// parameters picks it; its other parameters come only with a lead one.
type boardShape struct {
	read  string
	lead  []string
	also  []string
	named string // the lead parameters, as errors name them
	parse func(v url.Values, q *boardQuery) *fieldError
}

// boardShapes are tried in order; the top, the last, is also the read of
// a query with no lead parameter at all.
var boardShapes = []boardShape{
	{readAround, []string{"userId"}, []string{"range"}, "userId", parseAround},
	{readPage, []string{"page", "size"}, nil, "page and size", parsePage},
	{readRange, []string{"from", "to"}, nil, "from and to", parseRange},
	{readBetween, []string{"lo", "hi"}, []string{"n"}, "lo or hi", parseBetween},
	{readCutoff, []string{"percent"}, nil, "percent", parseCutoff},
	{readAroundScore, []string{"score"}, []string{"radius"}, "score", parseAroundScore},
	{readTop, []string{"limit"}, nil, "limit", parseTop},
}

// shapeOf is the shape a parameter belongs to, and whether it leads it;
// nil for window, at and unknown parameters.
func shapeOf(k string) (*boardShape, bool) {
	for i := range boardShapes {
		sh := &boardShapes[i]
		if slices.Contains(sh.lead, k) {
			return sh, true
		}
		if slices.Contains(sh.also, k) {
			return sh, false
		}
	}
	return nil, false
}

// parseBoardQuery picks the read from the parameters given, refuses any
// parameter of another read, then parses the read's own. Parameters are
// looked at in sorted order, so that a query with several faults always
// gets the same error.
func (s *server) parseBoardQuery(v url.Values) (boardQuery, *fieldError) {
	q := boardQuery{}
	keys := slices.Sorted(maps.Keys(v))
	for _, k := range keys {
		if sh, _ := shapeOf(k); sh == nil && k != "window" && k != "at" {
			return q, unknownParam(k)
		}
		if len(v[k]) > 1 {
			return q, badField(k, "%s given more than once", k)
		}
	}
	var fe *fieldError
	if q.window, q.at, fe = s.parseWindow(v); fe != nil {
		return q, fe
	}
	picked := &boardShapes[len(boardShapes)-1]
	for i := range boardShapes {
		if slices.ContainsFunc(boardShapes[i].lead, v.Has) {
			picked = &boardShapes[i]
			break
		}
	}
	for _, k := range keys {
		sh, lead := shapeOf(k)
		switch {
		case sh == nil || sh == picked:
		case !lead:
			return q, badField(k, "%s needs %s", k, sh.named)
		default:
			return q, badField(k, "%s cannot be combined with %s", k, picked.named)
		}
	}
	q.read = picked.read
	return q, picked.parse(v, &q)
}

func parseTop(v url.Values, q *boardQuery) (fe *fieldError) {
	q.limit, fe = intParam(v, "limit", 10, 1, maxLimit)
	return fe
}

func parsePage(v url.Values, q *boardQuery) (fe *fieldError) {
	if q.page, fe = intParam(v, "page", 1, 1, math.MaxInt32); fe != nil {
		return fe
	}
	q.size, fe = intParam(v, "size", 25, 1, maxLimit)
	return fe
}

func parseAround(v url.Values, q *boardQuery) (fe *fieldError) {
	if fe := checkUserID(v.Get("userId")); fe != nil {
		return fe
	}
	q.user = v.Get("userId")
	q.radius, fe = intParam(v, "range", 5, 0, maxRange)
	return fe
}

// parseWindow reads ?window= (default alltime) and ?at=, a date
// (2026-11-23, meaning that day in UTC) or an RFC 3339 time.
func (s *server) parseWindow(v url.Values) (leaderboard.Window, time.Time, *fieldError) {
	name := v.Get("window")
	var win leaderboard.Window
	if name == "" {
		win = windows[0]
	}
	for _, w := range windows {
		if w.Name() == name {
			win = w
		}
	}
	if win == nil {
		return nil, time.Time{}, badField("window", "window must be alltime, daily, weekly or monthly")
	}
	raw := v.Get("at")
	if raw == "" {
		return win, time.Time{}, nil
	}
	at, err := time.Parse(time.DateOnly, raw)
	if err != nil {
		// RFC 3339 (section 5.6) allows "t" and "z" in lower case, which
		// time.Parse does not: its only letters are upper-cased first.
		if at, err = time.Parse(time.RFC3339, strings.ToUpper(raw)); err != nil {
			return nil, time.Time{}, badField("at", "at must be a date (2026-11-23) or an RFC 3339 time")
		}
	}
	if at.After(s.now()) {
		return nil, time.Time{}, badField("at", "at is in the future")
	}
	if at.Before(minAt) {
		// Long past every window's retention, and the SDK refuses the
		// zero time (0001-01-01) that an unset time would be.
		return nil, time.Time{}, badField("at", "at must be from 1970-01-01 on")
	}
	return win, at, nil
}

// minAt is the earliest ?at= a read takes.
var minAt = time.Unix(0, 0)

func intParam(v url.Values, k string, def, lo, hi int) (int, *fieldError) {
	raw, ok := v[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(raw[0])
	if err != nil || n < lo || n > hi {
		return 0, badField(k, "%s must be an integer from %d to %d", k, lo, hi)
	}
	return n, nil
}

func entries(es []leaderboard.Entry) []entry {
	out := make([]entry, len(es))
	for i, e := range es {
		out[i] = entry{Rank: e.Rank, UserID: e.Member, Name: e.Data, Score: e.Score}
	}
	return out
}

func round2(f float64) float64 { return math.Round(f*100) / 100 }
