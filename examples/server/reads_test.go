package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// wantEntries checks a read's entries against the seeded board (see seed:
// p01 (10) .. p30 (300), so position i holds p(31-i) with 10*(31-i)),
// from position first on.
func wantEntries(t *testing.T, what string, got []entry, first, n int) {
	t.Helper()
	if len(got) != n {
		t.Fatalf("%s: %d entries %+v, want %d", what, len(got), got, n)
	}
	for i, e := range got {
		pos := first + i
		if e.Rank != int64(pos) || e.UserID != fmt.Sprintf("p%02d", 31-pos) || e.Score != float64(10*(31-pos)) {
			t.Fatalf("%s: entry %d is %+v, want position %d of the seeded board", what, i, e, pos)
		}
	}
}

func TestLeaderboardRange(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		rec := f.get("/api/v1/leaderboard?from=1&to=3")
		if got := decode[rangeResponse](t, rec); got.Entries == nil || len(got.Entries) != 0 || got.Window != "alltime" {
			t.Fatalf("empty board: %s", rec.Body)
		}
		f.seed(30)
		got := decode[rangeResponse](t, f.get("/api/v1/leaderboard?from=4&to=20&window=weekly"))
		if got.Window != "weekly" || got.From != 4 || got.To != 20 {
			t.Fatalf("4..20: %+v", got)
		}
		wantEntries(t, "4..20", got.Entries, 4, 17)
		wantEntries(t, "7..7", decode[rangeResponse](t, f.get("/api/v1/leaderboard?from=7&to=7")).Entries, 7, 1)
		// Past the end: what exists, possibly none.
		wantEntries(t, "29..40", decode[rangeResponse](t, f.get("/api/v1/leaderboard?from=29&to=40")).Entries, 29, 2)
		rec = f.get("/api/v1/leaderboard?from=31&to=1030")
		if got := decode[rangeResponse](t, rec); got.Entries == nil || len(got.Entries) != 0 {
			t.Fatalf("31..1030: %s", rec.Body)
		}
		got = decode[rangeResponse](t, f.get("/api/v1/leaderboard?from=2147483647&to=2147483647"))
		if len(got.Entries) != 0 {
			t.Fatalf("the last position int32 holds: %+v", got)
		}
	})
}

func TestLeaderboardBetween(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.seed(30)
		got := decode[betweenResponse](t, f.get("/api/v1/leaderboard?lo=100&hi=150"))
		if deref(got.Lo) != 100 || deref(got.Hi) != 150 || got.N != 10 || got.Window != "alltime" {
			t.Fatalf("100..150: %+v", got)
		}
		wantEntries(t, "100..150", got.Entries, 16, 6) // p15 (rank 16) .. p10, both bounds inside
		wantEntries(t, "n=2", decode[betweenResponse](t, f.get("/api/v1/leaderboard?lo=100&hi=150&n=2")).Entries, 16, 2)
		wantEntries(t, "fractions", decode[betweenResponse](t, f.get("/api/v1/leaderboard?lo=99.5&hi=100.5")).Entries, 21, 1)
		// Open ends: empty, absent, or spelled out; null in the answer.
		for _, q := range []string{"lo=&hi=25", "hi=25", "lo=-inf&hi=25", "lo=-1e308&hi=2.5e1"} {
			rec := f.get("/api/v1/leaderboard?" + q)
			wantEntries(t, q, decode[betweenResponse](t, rec).Entries, 29, 2)
			if open := q != "lo=-1e308&hi=2.5e1"; strings.Contains(rec.Body.String(), `"lo":null`) != open {
				t.Fatalf("%s: lo in %s", q, rec.Body)
			}
		}
		for _, q := range []string{"lo=285", "lo=285&hi=", "lo=285&hi=%2Binf", "lo=285&hi=inf"} {
			rec := f.get("/api/v1/leaderboard?" + q)
			wantEntries(t, q, decode[betweenResponse](t, rec).Entries, 1, 2)
			if !strings.Contains(rec.Body.String(), `"hi":null`) {
				t.Fatalf("%s: hi in %s", q, rec.Body)
			}
		}
		wantEntries(t, "everything", decode[betweenResponse](t, f.get("/api/v1/leaderboard?lo=&hi=&n=1000")).Entries, 1, 30)
		for _, q := range []string{"lo=301", "hi=9", "lo=155&hi=159"} {
			rec := f.get("/api/v1/leaderboard?" + q)
			if got := decode[betweenResponse](t, rec); rec.Code != http.StatusOK || got.Entries == nil || len(got.Entries) != 0 {
				t.Fatalf("%s: %d %s, want no entries", q, rec.Code, rec.Body)
			}
		}
	})
}

func TestLeaderboardCutoff(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		// An empty board has no cutoff: answered as a player not ranked.
		e := wantError(t, f.get("/api/v1/leaderboard?percent=10"), http.StatusNotFound, "")
		if e.Error != "not ranked in this window" {
			t.Fatalf("empty board: %+v", e)
		}
		f.seed(30)
		for _, c := range []struct {
			percent string
			pos     int // ceil(30*percent/100), at least 1
		}{{"10", 3}, {"50", 15}, {"100", 30}, {"0.001", 1}, {"3.4", 2}, {"99.99", 30}, {"1e1", 3}} {
			rec := f.get("/api/v1/leaderboard?window=monthly&percent=" + c.percent)
			got := decode[cutoffResponse](t, rec)
			if rec.Code != http.StatusOK || got.Window != "monthly" || fmt.Sprint(got.Percent) != strings.Replace(c.percent, "1e1", "10", 1) {
				t.Fatalf("percent=%s: %d %s", c.percent, rec.Code, rec.Body)
			}
			wantEntries(t, "percent="+c.percent, []entry{got.Entry}, c.pos, 1)
		}
		wantError(t, f.get("/api/v1/leaderboard?percent=10&window=daily&at=2020-01-01"), http.StatusGone, "at")
	})
}

func TestLeaderboardAroundScore(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		got := decode[aroundScoreResponse](t, f.get("/api/v1/leaderboard?score=100"))
		if got.Rank != 1 || got.Entries == nil || len(got.Entries) != 0 {
			t.Fatalf("empty board: %+v", got)
		}
		f.seed(30)
		for _, c := range []struct {
			query       string
			rank        int64 // 1 + the players with a better score
			first, n    int   // the entries: positions rank-radius .. rank+radius-1, clipped
			answerScore float64
		}{
			{"score=155&radius=2", 16, 14, 4, 155},
			{"score=150&radius=2", 16, 14, 4, 150}, // a tie is not better: p15 stays at 16
			{"score=155", 16, 11, 10, 155},         // default radius 5
			{"score=155&radius=0", 16, 0, 0, 155},
			{"score=1e6&radius=3", 1, 1, 3, 1e6},    // the top: nobody is better
			{"score=300&radius=3", 1, 1, 3, 300},    // equal to the best
			{"score=-5&radius=3", 31, 28, 3, -5},    // below everyone
			{"score=10&radius=3", 30, 27, 4, 10},    // equal to the last
			{"score=0.5&radius=500", 31, 1, 30, .5}, // the largest radius
		} {
			rec := f.get("/api/v1/leaderboard?" + c.query)
			got := decode[aroundScoreResponse](t, rec)
			if rec.Code != http.StatusOK || got.Rank != c.rank || got.Score != c.answerScore || got.Window != "alltime" {
				t.Fatalf("%s: %d %s, want rank %d", c.query, rec.Code, rec.Body, c.rank)
			}
			wantEntries(t, c.query, got.Entries, c.first, c.n)
		}
		wantError(t, f.get("/api/v1/leaderboard?score=1&window=weekly&at=2020-01-01"), http.StatusGone, "at")
	})
}

// TestNewReadsNames: the new reads carry display names as the others do.
func TestNewReadsNames(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.submitNamed("p1", 10, "Ana Lima")
		f.submit("p2", 20)
		for _, q := range []string{"from=1&to=2", "lo=5&hi=25", "score=15&radius=1"} {
			rec := f.get("/api/v1/leaderboard?" + q)
			if strings.Count(rec.Body.String(), `"name":"Ana Lima"`) != 1 || strings.Count(rec.Body.String(), `"name"`) != 1 {
				t.Fatalf("%s: %s", q, rec.Body)
			}
		}
		got := decode[cutoffResponse](t, f.get("/api/v1/leaderboard?percent=100"))
		if got.Entry.UserID != "p1" || got.Entry.Name != "Ana Lima" || got.Entry.Rank != 2 {
			t.Fatalf("cutoff: %+v", got)
		}
	})
}

// What the new reads answer to a bad number.
const (
	msgFrom    = "from must be an integer from 1 to 2147483647"
	msgBound   = "must be a finite number, -inf, +inf (%2Binf in a URL), inf or empty"
	msgPercent = "percent must be a number above 0 and at most 100"
	msgScore   = "score must be a finite number"
)

// newReadsBadQueries are bad queries of the new reads: the field and
// the message each must get.
var newReadsBadQueries = []struct{ query, field, msg string }{
	{"from=1", "to", "to is required with from"},
	{"to=5", "from", "from is required with to"},
	{"from=0&to=5", "from", msgFrom},
	{"from=-1&to=5", "from", msgFrom},
	{"from=1.5&to=5", "from", msgFrom},
	{"from=x&to=5", "from", msgFrom},
	{"from=&to=5", "from", msgFrom},
	{"from=99999999999999999999&to=5", "from", msgFrom},
	{"from=2147483648&to=2147483648", "from", msgFrom},
	{"from=5&to=4", "to", "to must be an integer from 5 to 1004"},
	{"from=1&to=1001", "to", "to must be an integer from 1 to 1000"},
	{"from=2147483000&to=2147483648", "to", "to must be an integer from 2147483000 to 2147483647"},
	{"from=1&to=2&from=1", "from", "from given more than once"},
	{"from=1&to=2&limit=3", "limit", "limit cannot be combined with from and to"},
	{"from=1&to=2&userId=p1", "from", "from cannot be combined with userId"},
	{"lo=NaN", "lo", "lo " + msgBound},
	{"lo=nan", "lo", "lo " + msgBound},
	{"hi=Infinity", "hi", "hi " + msgBound},
	{"hi=%20inf", "hi", "hi " + msgBound}, // +inf with its + unescaped
	{"lo=0x10", "lo", "lo " + msgBound},
	{"lo=1_000", "lo", "lo " + msgBound},
	{"lo=1e400", "lo", "lo " + msgBound},
	{"hi=-1e400", "hi", "hi " + msgBound},
	{"lo=1e-400", "lo", "lo " + msgBound},
	{"lo=1,5", "lo", "lo " + msgBound},
	{"lo=%201", "lo", "lo " + msgBound},
	{"lo=5&hi=4", "lo", "lo must not be above hi"},
	{"lo=%2Binf&hi=-inf", "lo", "lo must not be above hi"},
	// An end no score reaches, which the answer could only give as null,
	// an open end.
	{"lo=%2Binf", "lo", "lo must not be +inf: no score is at or above it"},
	{"lo=inf&hi=inf", "lo", "lo must not be +inf: no score is at or above it"},
	{"hi=-inf", "hi", "hi must not be -inf: no score is at or below it"},
	{"lo=-inf&hi=-inf", "hi", "hi must not be -inf: no score is at or below it"},
	{"lo=1&n=0", "n", "n must be an integer from 1 to 1000"},
	{"hi=1&n=1001", "n", "n must be an integer from 1 to 1000"},
	{"lo=1&n=2.5", "n", "n must be an integer from 1 to 1000"},
	{"n=5", "n", "n needs lo or hi"},
	{"lo=1&percent=5", "percent", "percent cannot be combined with lo or hi"},
	{"percent=0", "percent", msgPercent},
	{"percent=-5", "percent", msgPercent},
	{"percent=100.0001", "percent", msgPercent},
	{"percent=NaN", "percent", msgPercent},
	{"percent=inf", "percent", msgPercent},
	{"percent=1e400", "percent", msgPercent},
	{"percent=1e-400", "percent", msgPercent},
	{"percent=", "percent", msgPercent},
	{"percent=ten", "percent", msgPercent},
	{"percent=5&score=1", "score", "score cannot be combined with percent"},
	{"score=", "score", msgScore},
	{"score=NaN", "score", msgScore},
	{"score=inf", "score", msgScore},
	{"score=-inf", "score", msgScore},
	{"score=1e400", "score", msgScore},
	{"score=0x1p3", "score", msgScore},
	{"score=1&radius=-1", "radius", "radius must be an integer from 0 to 500"},
	{"score=1&radius=501", "radius", "radius must be an integer from 0 to 500"},
	{"score=1&radius=1.5", "radius", "radius must be an integer from 0 to 500"},
	{"radius=5", "radius", "radius needs score"},
	{"score=1&range=5", "range", "range needs userId"},
	{"score=1&window=hourly", "window", "window must be alltime, daily, weekly or monthly"},
}

// TestNewReadsBadQueries: every bad parameter of the new reads is a 400
// naming it, with a message saying what is wanted.
func TestNewReadsBadQueries(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.seed(5)
		for _, c := range newReadsBadQueries {
			rec := f.get("/api/v1/leaderboard?" + c.query)
			if rec.Code != http.StatusBadRequest {
				t.Errorf("?%s: %d %s, want 400", c.query, rec.Code, rec.Body)
				continue
			}
			if e := decode[errorBody](t, rec); e.Field != c.field || e.Error != c.msg {
				t.Errorf("?%s: %+v, want field %q and %q", c.query, e, c.field, c.msg)
			}
		}
	})
}

func TestParseDecimal(t *testing.T) {
	for raw, want := range map[string]float64{
		"0": 0, "-0": 0, "+3": 3, "1.5": 1.5, ".5": .5, "5.": 5, "1e3": 1000, "2.5E-3": .0025,
		"1.7976931348623157e308": math.MaxFloat64, "5e-324": 5e-324, "0e999999": 0, "000.000": 0,
	} {
		if got, ok := parseDecimal(raw); !ok || got != want {
			t.Errorf("parseDecimal(%q) = %v, %v; want %v", raw, got, ok, want)
		}
	}
	for _, raw := range []string{
		"", " ", "-", ".", "e5", "1e", "1e+", "1.2.3", "1e400", "-1e400", "1e-400", "2e308",
		"NaN", "nan", "inf", "+Inf", "Infinity", "0x10", "0x1p3", "1_000", "0b1", " 1", "1 ", "1,5", "١",
	} {
		if got, ok := parseDecimal(raw); ok {
			t.Errorf("parseDecimal(%q) = %v, want refused", raw, got)
		}
	}
}

// boundaryClock is a clock that reads first, once after each next(first),
// then later at every reading after it: a request whose handler reads the
// clock at a period's last moment, while anything reading it again reads
// the next period.
type boundaryClock struct {
	mu           sync.Mutex
	first, later time.Time
	pending      bool
}

func (c *boundaryClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending {
		c.pending = false
		return c.first
	}
	return c.later
}

// next makes the next reading first, and every one after it later.
func (c *boundaryClock) next(first, later time.Time) {
	c.mu.Lock()
	c.first, c.later, c.pending = first, later, true
	c.mu.Unlock()
}

// TestReadsOneInstant: every read takes the instant once, and its period
// label and entries (and the distribution's cache key) come from it. A
// request at 23:59:59.999 whose SDK call reads the clock 2ms later still
// answers the day that was ending, with its entries, not the next day's
// entries under the ending day's label.
func TestReadsOneInstant(t *testing.T) {
	b := testredis.Mini(t)
	day1 := time.Now().UTC().Truncate(24 * time.Hour).Add(24*time.Hour - time.Millisecond)
	day2 := day1.Add(2 * time.Millisecond)
	clock := &boundaryClock{later: day2}
	srv, err := newServer(testConfig(b.BoardName(t)), b.Client, slog.New(slog.DiscardHandler), clock.now)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.handler()
	// The ending day holds "early", the next day two others.
	if err := srv.board.SubmitMany(context.Background(), map[string]float64{"late1": 2, "late2": 3}); err != nil {
		t.Fatal(err)
	}
	clock.next(day1, day1)
	if _, err := srv.board.Submit(context.Background(), "early", 1); err != nil {
		t.Fatal(err)
	}
	wantPeriod := leaderboard.Daily().Period(day1).ID
	for _, q := range []string{"limit=5", "page=1&size=5", "userId=early", "from=1&to=5", "lo=0&hi=10", "percent=100", "score=0&radius=5"} {
		clock.next(day1, day2)
		rec := serve(h, httptest.NewRequest(http.MethodGet, "/api/v1/leaderboard?window=daily&"+q, nil))
		var got struct {
			Period  string  `json:"period"`
			Entries []entry `json:"entries"`
			Entry   *entry  `json:"entry"`
		}
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != http.StatusOK || got.Period != wantPeriod {
			t.Errorf("%s: %d %s, want 200 for period %s", q, rec.Code, rec.Body, wantPeriod)
			continue
		}
		if got.Entry != nil {
			got.Entries = append(got.Entries, *got.Entry)
		}
		if len(got.Entries) != 1 || got.Entries[0].UserID != "early" {
			t.Errorf("%s: period %s with entries %+v, want early alone", q, got.Period, got.Entries)
		}
	}
	clock.next(day1, day2)
	got := decode[distResponse](t, serve(h, httptest.NewRequest(http.MethodGet, "/api/v1/distribution?window=daily", nil)))
	if got.Period != wantPeriod || got.Total != 1 {
		t.Errorf("distribution: period %s of %d players, want %s of 1", got.Period, got.Total, wantPeriod)
	}
}
