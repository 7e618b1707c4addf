package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

func TestSubmit(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		clock := fixedClock()
		f := newFixtureAt(t, b, clock)
		now := clock()

		r := f.submit("player-42", 8500)
		if r.UserID != "player-42" || r.Score != 8500 || r.Submitted != 8500 || r.Rank != 1 || r.PreviousRank != nil || !r.NewBest {
			t.Fatalf("first submit: %+v", r)
		}
		want := map[string]string{
			"alltime": "alltime",
			"daily":   now.Format(time.DateOnly),
			"weekly":  leaderboard.Weekly().Period(now).ID,
			"monthly": now.Format("2006-01"),
		}
		if len(r.Windows) != len(want) {
			t.Fatalf("windows %v, want %v", r.Windows, want)
		}
		for name, period := range want {
			w := r.Windows[name]
			if w.Period != period || w.Rank != 1 || w.Score != 8500 || !w.NewBest || w.Total != 1 || w.Percentile != 100 ||
				w.PreviousRank != nil || w.PreviousScore != nil {
				t.Fatalf("window %s: %+v, want period %s, rank 1 of 1, not ranked before", name, w, period)
			}
		}

		f.submit("player-7", 9000)
		r = f.submit("player-42", 8000) // not a new best: keeps 8500
		if r.Score != 8500 || r.Submitted != 8000 || r.Rank != 2 || deref(r.PreviousRank) != 2 || r.NewBest {
			t.Fatalf("lower submit: %+v", r)
		}
		r = f.submit("player-42", 9500)
		if r.Score != 9500 || r.Rank != 1 || deref(r.PreviousRank) != 2 || !r.NewBest {
			t.Fatalf("better submit: %+v", r)
		}
		if w := r.Windows["weekly"]; deref(w.PreviousScore) != 8500 || w.Total != 2 || w.Percentile != 100 {
			t.Fatalf("weekly after a new best: %+v", w)
		}
		// Scores with fractions and at the configured bounds are taken.
		f.submit("edge-low", 0)
		f.submit("edge-high", 1e6)
		f.submit("fraction", 12.75)
	})
}

func TestSubmitUnauthorized(t *testing.T) {
	old := strconv.FormatInt(time.Now().Add(-2*time.Minute).Unix(), 10)
	future := strconv.FormatInt(time.Now().Add(2*time.Minute).Unix(), 10)
	body := `{"userId":"mallory","score":999}`
	cases := []struct {
		name  string
		edit  func(s *signedReq) // before signing
		after func(r *http.Request)
		field string
	}{
		{name: "no signature", after: func(r *http.Request) { r.Header.Del(headerSignature) }, field: headerSignature},
		{name: "no headers at all", after: func(r *http.Request) {
			for _, h := range []string{headerKeyID, headerTimestamp, headerNonce, headerSignature} {
				r.Header.Del(h)
			}
		}, field: headerSignature},
		{name: "no key id", after: func(r *http.Request) { r.Header.Del(headerKeyID) }, field: headerKeyID},
		{name: "unknown key id", edit: func(s *signedReq) { s.keyID = "gs9" }, field: headerKeyID},
		{name: "no timestamp", after: func(r *http.Request) { r.Header.Del(headerTimestamp) }, field: headerTimestamp},
		{name: "timestamp not a number", edit: func(s *signedReq) { s.ts = "yesterday" }, field: headerTimestamp},
		{name: "timestamp huge", edit: func(s *signedReq) { s.ts = "99999999999999999999" }, field: headerTimestamp},
		// now - ts overflows int64 for these: none may pass the skew check.
		{name: "timestamp now-2^63", edit: func(s *signedReq) { s.ts = strconv.FormatInt(time.Now().Unix()+math.MinInt64, 10) }, field: headerTimestamp},
		{name: "timestamp now-2^63+1", edit: func(s *signedReq) { s.ts = strconv.FormatInt(time.Now().Unix()+math.MinInt64+1, 10) }, field: headerTimestamp},
		{name: "timestamp MinInt64", edit: func(s *signedReq) { s.ts = strconv.FormatInt(math.MinInt64, 10) }, field: headerTimestamp},
		{name: "timestamp MaxInt64", edit: func(s *signedReq) { s.ts = strconv.FormatInt(math.MaxInt64, 10) }, field: headerTimestamp},
		{name: "expired", edit: func(s *signedReq) { s.ts = old }, field: headerTimestamp},
		{name: "from the future", edit: func(s *signedReq) { s.ts = future }, field: headerTimestamp},
		{name: "no nonce", after: func(r *http.Request) { r.Header.Del(headerNonce) }, field: headerNonce},
		{name: "short nonce", edit: func(s *signedReq) { s.nonce = "abc" }, field: headerNonce},
		{name: "signature not hex", after: func(r *http.Request) { r.Header.Set(headerSignature, "zz") }, field: headerSignature},
		{name: "signature too short", after: func(r *http.Request) { r.Header.Set(headerSignature, "abcd") }, field: headerSignature},
		{name: "wrong secret", edit: func(s *signedReq) { s.secret = []byte("not-the-secret-0123456789abcdef0123") }, field: headerSignature},
		{name: "other key's secret", edit: func(s *signedReq) { s.secret = testKeys["gs2"] }, field: headerSignature},
		{name: "body changed", after: func(r *http.Request) {
			r.Body = ioNopCloser(`{"userId":"mallory","score":1000000}`)
		}, field: headerSignature},
		{name: "signed for another path", edit: func(s *signedReq) { s.uri = "/api/v1/other" }, after: func(r *http.Request) {
			r.URL.Path, r.RequestURI = "/api/v1/scores", "/api/v1/scores"
		}, field: headerSignature},
		{name: "signed for another method", edit: func(s *signedReq) { s.method = http.MethodPut }, after: func(r *http.Request) {
			r.Method = http.MethodPost
		}, field: headerSignature},
		{name: "timestamp changed after signing", after: func(r *http.Request) {
			ts, _ := strconv.ParseInt(r.Header.Get(headerTimestamp), 10, 64)
			r.Header.Set(headerTimestamp, strconv.FormatInt(ts-1, 10))
		}, field: headerSignature},
		{name: "nonce changed after signing", after: func(r *http.Request) { r.Header.Set(headerNonce, newNonce()) }, field: headerSignature},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.submit("someone", 5) // the board exists, so "unchanged" compares real keys
		before := b.Snapshot(t, f.board)
		for _, c := range cases {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				s := newSigned(body)
				if c.edit != nil {
					c.edit(s)
				}
				r := s.request()
				if c.after != nil {
					c.after(r)
				}
				rec := f.do(r)
				wantError(t, rec, http.StatusUnauthorized, c.field)
				if rec.Header().Get("WWW-Authenticate") == "" {
					t.Fatal("401 without WWW-Authenticate")
				}
				f.unchanged(before)
			})
		}
		// A forged request never reaches Redis: no nonce was remembered.
		if ks := b.Keys(t, "lbsrv:"+f.board+":nonce:*"); len(ks) != 1 {
			t.Fatalf("nonce keys %v, want only the one of the accepted submit", ks)
		}
	})
}

func TestReplayRejected(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		s := newSigned(`{"userId":"player-1","score":100}`)
		if rec := f.do(s.request()); rec.Code != http.StatusOK {
			t.Fatalf("first: %d %s", rec.Code, rec.Body)
		}
		before := b.Snapshot(t, f.board)
		e := wantError(t, f.do(s.request()), http.StatusUnauthorized, headerNonce)
		if !strings.Contains(e.Error, "replay") {
			t.Fatalf("error %q, want it to say replayed", e.Error)
		}
		f.unchanged(before)
		// The same nonce under the other key is another request.
		s2 := newSigned(`{"userId":"player-1","score":100}`)
		s2.nonce, s2.keyID, s2.secret = s.nonce, "gs2", testKeys["gs2"]
		if rec := f.do(s2.request()); rec.Code != http.StatusOK {
			t.Fatalf("same nonce, other key: %d %s", rec.Code, rec.Body)
		}
		// Identical bodies with fresh nonces are separate submissions.
		f.submit("player-1", 100)
		f.submit("player-1", 100)
		ttl, err := b.Client.Do(context.Background(), b.Client.B().Ttl().Key("lbsrv:"+f.board+":nonce:gs1:"+s.nonce).Build()).AsInt64()
		if err != nil || ttl <= 60 || ttl > 121 {
			t.Fatalf("nonce TTL %d (%v), want within (skew, 2*skew + 1s]", ttl, err)
		}
	})
}

// TestSubmitNames: a name given with a score shows beside it in every
// read, kept by later submissions without one, replaced by the next one,
// and per player; the JSON omits it for a player who never gave one.
func TestSubmitNames(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.submitNamed("p1", 10, "Ana Lima")
		f.submit("p2", 20)
		f.submit("p1", 5) // no new best, no name: the name stays
		top := decode[boardResponse](t, f.get("/api/v1/leaderboard?limit=10"))
		if len(top.Entries) != 2 || top.Entries[0].Name != "" || top.Entries[1].Name != "Ana Lima" {
			t.Fatalf("top: %+v", top)
		}
		f.submitNamed("p1", 1, "Ana 名前 ✓") // no new best, a new name
		around := decode[aroundResponse](t, f.get("/api/v1/leaderboard?userId=p1&range=1"))
		if len(around.Entries) != 2 || around.Entries[1].Name != "Ana 名前 ✓" || around.Entries[1].Score != 10 {
			t.Fatalf("around: %+v", around)
		}
		rec := f.get("/api/v1/leaderboard?page=1&size=5")
		if strings.Count(rec.Body.String(), `"name"`) != 1 {
			t.Fatalf("name where none was given: %s", rec.Body)
		}
	})
}

func TestSubmitBadRequests(t *testing.T) {
	long := strings.Repeat("x", maxUserID+1)
	cases := []struct {
		name, body, field string
	}{
		{"body over 4 KiB", `{"userId":"a","score":1,"pad":"` + strings.Repeat("x", maxBody) + `"}`, "body"},
		{"empty body", ``, "body"},
		{"not JSON", `userId=a&score=1`, "body"},
		{"array", `[{"userId":"a","score":1}]`, "body"},
		{"string", `"hello"`, "body"},
		{"truncated", `{"userId":"a","score":1`, "body"},
		{"trailing data", `{"userId":"a","score":1}{}`, "body"},
		{"unknown field", `{"userId":"a","score":1,"admin":true}`, "admin"},
		{"field in other case", `{"userid":"a","score":1}`, "userid"},
		{"userId twice", `{"userId":"a","userId":"b","score":1}`, "userId"},
		{"score twice", `{"userId":"a","score":1,"score":2}`, "score"},
		{"userId missing", `{"score":1}`, "userId"},
		{"userId empty", `{"userId":"","score":1}`, "userId"},
		{"userId too long", `{"userId":"` + long + `","score":1}`, "userId"},
		{"userId a number", `{"userId":42,"score":1}`, "userId"},
		{"userId null", `{"userId":null,"score":1}`, "userId"},
		{"userId with a space", `{"userId":"a b","score":1}`, "userId"},
		{"userId with a newline", `{"userId":"a\nb","score":1}`, "userId"},
		{"userId with a control character", `{"userId":"a\u0000b","score":1}`, "userId"},
		{"userId with a lone surrogate", `{"userId":"p\ud800","score":1}`, "userId"},
		{"score missing", `{"userId":"a"}`, "score"},
		{"score a string", `{"userId":"a","score":"8500"}`, "score"},
		{"score null", `{"userId":"a","score":null}`, "score"},
		{"score a bool", `{"userId":"a","score":true}`, "score"},
		{"score an object", `{"userId":"a","score":{}}`, "score"},
		{"score NaN", `{"userId":"a","score":NaN}`, "score"},
		{"score Infinity", `{"userId":"a","score":Infinity}`, "score"},
		{"score hex", `{"userId":"a","score":0x10}`, "score"},
		{"score overflows", `{"userId":"a","score":1e400}`, "score"},
		{"score underflows to zero", `{"userId":"a","score":1e-400}`, "score"},
		{"score below the minimum", `{"userId":"a","score":-1}`, "score"},
		{"score above the maximum", `{"userId":"a","score":1000000.5}`, "score"},
		{"name empty", `{"userId":"a","score":1,"name":""}`, "name"},
		{"name too long", `{"userId":"a","score":1,"name":"` + strings.Repeat("n", maxName+1) + `"}`, "name"},
		{"name a number", `{"userId":"a","score":1,"name":7}`, "name"},
		{"name null", `{"userId":"a","score":1,"name":null}`, "name"},
		{"name with a newline", `{"userId":"a","score":1,"name":"A\nB"}`, "name"},
		{"name padded", `{"userId":"a","score":1,"name":" Ana"}`, "name"},
		{"name not UTF-8", "{\"userId\":\"a\",\"score\":1,\"name\":\"\xff\"}", "name"},
		{"name with a lone surrogate", `{"userId":"a","score":1,"name":"Ana \udc00"}`, "name"},
		{"name twice", `{"userId":"a","score":1,"name":"A","name":"B"}`, "name"},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.submit("someone", 5)
		before := b.Snapshot(t, f.board)
		for _, c := range cases {
			t.Run(strings.ReplaceAll(c.name, " ", "_"), func(t *testing.T) {
				// Correctly signed: only the content is wrong.
				wantError(t, f.do(newSigned(c.body).request()), http.StatusBadRequest, c.field)
				f.unchanged(before)
			})
		}
		// Too big a body is refused before the signature is even looked at.
		r := httptest.NewRequest(http.MethodPost, "/api/v1/scores", strings.NewReader(strings.Repeat(" ", maxBody+1)))
		wantError(t, f.do(r), http.StatusBadRequest, "body")
		f.unchanged(before)
	})
}

func TestRateLimit(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		// Two at once, then one a second.
		f := newFixture(t, b, func(c *config) { c.Rate, c.Burst = 1, 2 })
		clock := newLimiterClock(t, b)
		// The limiter's clock is Redis's (TIME). On miniredis it stands
		// still until moved; a real Redis's runs on while the test works,
		// and on a loaded machine the steps of one attempt may take longer
		// than a refill: such an attempt proves nothing either way, and
		// is run again with a player of its own. Each check is made only
		// when Redis's own clock shows that its answer is decided.
		for attempt := 1; !rateLimitOnce(t, f, clock, fmt.Sprintf("fast%d", attempt)); attempt++ {
			if attempt == 5 {
				t.Fatalf("%d attempts, each slower than the bucket's refill by Redis's clock", attempt)
			}
		}
	})
}

// rateLimitOnce runs TestRateLimit's steps for one player (rate 1, burst
// 2) and reports false, having checked only what was decided, when Redis's
// clock shows that they took too long to decide the rest.
func rateLimitOnce(t *testing.T, f *fixture, clock *limiterClock, user string) bool {
	t.Helper()
	body := func(score int) string { return fmt.Sprintf(`{"userId":%q,"score":%d}`, user, score) }
	// The bucket is created full at the first submission, at t0 or after
	// by the limiter's clock; its tokens then come back at one a second.
	t0 := clock.now()
	f.submit(user, 1)
	f.submit(user, 2)
	before := f.b.Snapshot(t, f.board)
	rec := f.do(newSigned(body(3)).request())
	if t3 := clock.now(); t3-t0 >= 1000 {
		t.Logf("%s: the third submission came %d ms after the first by Redis's clock: a token may be back; again", user, t3-t0)
		return false
	}
	wantError(t, rec, http.StatusTooManyRequests, "userId")
	if ra := rec.Header().Get("Retry-After"); ra != "1" {
		t.Fatalf("Retry-After %q, want 1 (seconds, rounded up)", ra)
	}
	f.unchanged(before)
	// Another player has a bucket of their own.
	f.submit("slow-"+user, 1)

	// A token comes back after 1/rate: one, not two. The first was taken
	// no later than now: wait by the limiter's clock until a second and a
	// tenth after that.
	clock.advance(clock.now() + 1100)
	f.submit(user, 3)
	rec = f.do(newSigned(body(4)).request())
	ttl, err := f.b.Client.Do(context.Background(), f.b.Client.B().Pttl().Key("lbsrv:"+f.board+":rate:"+user).Build()).AsInt64()
	if t5 := clock.now(); t5-t0 >= 2000 {
		t.Logf("%s: the fifth submission came %d ms after the first by Redis's clock: two tokens may be back; again", user, t5-t0)
		return false
	}
	if rec.Code != http.StatusTooManyRequests {
		t.Fatalf("after one refill: %d, want 429", rec.Code)
	}
	// The bucket's key goes away once it would be full again: under
	// 2 tokens * 1s + 1s.
	if err != nil || ttl <= 0 || ttl > 3000 {
		t.Fatalf("bucket PTTL %d (%v), want (0, 3000] ms", ttl, err)
	}
	return true
}

// limiterClock is the rate limiter's clock, Redis's TIME, in unix ms: on
// miniredis one the test moves, on a real Redis or Cluster (whose nodes
// share this machine's clock) the server's, which the test waits on.
type limiterClock struct {
	t  *testing.T
	b  *testredis.Backend
	at time.Time // miniredis: the time it is set to
}

func newLimiterClock(t *testing.T, b *testredis.Backend) *limiterClock {
	c := &limiterClock{t: t, b: b}
	if b.Mini != nil {
		c.at = time.Now().Truncate(time.Millisecond)
		b.Mini.SetTime(c.at) // the script reads Redis' TIME, which miniredis holds still
	}
	return c
}

func (c *limiterClock) now() int64 {
	c.t.Helper()
	if c.b.Mini != nil {
		return c.at.UnixMilli()
	}
	tm, err := c.b.Client.Do(context.Background(), c.b.Client.B().Time().Build()).AsStrSlice()
	if err != nil || len(tm) != 2 {
		c.t.Fatalf("TIME: %v %v", tm, err)
	}
	secs, err1 := strconv.ParseInt(tm[0], 10, 64)
	micros, err2 := strconv.ParseInt(tm[1], 10, 64)
	if err1 != nil || err2 != nil {
		c.t.Fatalf("TIME: %v", tm)
	}
	return secs*1000 + micros/1000
}

// advance moves miniredis's clock to ms, or waits until Redis's reaches it.
func (c *limiterClock) advance(ms int64) {
	c.t.Helper()
	if c.b.Mini != nil {
		c.at = time.UnixMilli(ms)
		c.b.Mini.SetTime(c.at)
		return
	}
	for deadline := time.Now().Add(10 * time.Second); ; {
		left := ms - c.now()
		if left <= 0 {
			return
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("Redis's clock did not reach %d ms within 10s", ms)
		}
		time.Sleep(time.Duration(min(left, 20)) * time.Millisecond)
	}
}

// seed fills the board directly: 30 players, p01 (10) .. p30 (300).
func (f *fixture) seed(n int) {
	f.t.Helper()
	scores := map[string]float64{}
	for i := 1; i <= n; i++ {
		scores[fmt.Sprintf("p%02d", i)] = float64(10 * i)
	}
	if err := f.srv.board.SubmitMany(context.Background(), scores); err != nil {
		f.t.Fatal(err)
	}
}

func TestLeaderboardTop(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		clock := fixedClock()
		f := newFixtureAt(t, b, clock)
		rec := f.get("/api/v1/leaderboard")
		if got := decode[boardResponse](t, rec); got.Window != "alltime" || got.Total != 0 || got.Entries == nil || len(got.Entries) != 0 {
			t.Fatalf("empty board: %+v (%s)", got, rec.Body)
		}
		f.seed(30)
		for _, w := range []string{"", "alltime", "daily", "weekly", "monthly"} {
			rec := f.get("/api/v1/leaderboard?window=" + w + "&limit=10")
			if rec.Code != http.StatusOK {
				t.Fatalf("window %q: %d %s", w, rec.Code, rec.Body)
			}
			got := decode[boardResponse](t, rec)
			if len(got.Entries) != 10 || got.Total != 30 {
				t.Fatalf("window %q: %+v", w, got)
			}
			for i, e := range got.Entries {
				if e.Rank != int64(i+1) || e.UserID != fmt.Sprintf("p%02d", 30-i) || e.Score != float64(300-10*i) {
					t.Fatalf("window %q entry %d: %+v", w, i, e)
				}
			}
		}
		if got := decode[boardResponse](t, f.get("/api/v1/leaderboard")); len(got.Entries) != 10 {
			t.Fatalf("default limit: %d entries", len(got.Entries))
		}
		if got := decode[boardResponse](t, f.get("/api/v1/leaderboard?window=weekly&limit=3")); got.Period != leaderboard.Weekly().Period(clock()).ID || len(got.Entries) != 3 {
			t.Fatalf("weekly top 3: %+v", got)
		}
	})
}

func TestLeaderboardPage(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.seed(30)
		got := decode[boardResponse](t, f.get("/api/v1/leaderboard?window=daily&page=3&size=5"))
		if got.Page != 3 || got.Size != 5 || got.Total != 30 || len(got.Entries) != 5 || got.Entries[0].Rank != 11 || got.Entries[0].UserID != "p20" {
			t.Fatalf("page 3: %+v", got)
		}
		got = decode[boardResponse](t, f.get("/api/v1/leaderboard?page=4&size=8"))
		if len(got.Entries) != 6 || got.Entries[5].Rank != 30 {
			t.Fatalf("last page: %+v", got)
		}
		rec := f.get("/api/v1/leaderboard?page=9&size=25")
		if got := decode[boardResponse](t, rec); got.Entries == nil || len(got.Entries) != 0 || got.Total != 30 {
			t.Fatalf("past the end: %s", rec.Body)
		}
		if got := decode[boardResponse](t, f.get("/api/v1/leaderboard?page=2")); got.Size != 25 || len(got.Entries) != 5 {
			t.Fatalf("default size: %+v", got)
		}
	})
}

func TestLeaderboardAround(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		f.seed(30)
		got := decode[aroundResponse](t, f.get("/api/v1/leaderboard?userId=p15&range=2"))
		// p15 is rank 16 of 30: 14 of the other 29 are below.
		if got.UserID != "p15" || got.UserRank != 16 || got.UserScore != 150 || got.Total != 30 || got.Percentile != 48.28 || len(got.Entries) != 5 {
			t.Fatalf("around p15: %+v", got)
		}
		for i, e := range got.Entries {
			if e.Rank != int64(14+i) {
				t.Fatalf("entry %d: %+v", i, e)
			}
		}
		got = decode[aroundResponse](t, f.get("/api/v1/leaderboard?window=monthly&userId=p30"))
		if got.UserRank != 1 || len(got.Entries) != 11 || got.Entries[0].UserID != "p30" {
			t.Fatalf("around the top, default range: %+v", got)
		}
		wantError(t, f.get("/api/v1/leaderboard?userId=nobody"), http.StatusNotFound, "userId")
		wantError(t, f.get("/api/v1/leaderboard?userId=p15&at=2020-01-01&window=daily"), http.StatusGone, "at")
	})
}

func TestLeaderboardPastPeriod(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		ctx := context.Background()
		lastWeek := time.Now().UTC().AddDate(0, 0, -7)
		if _, err := f.srv.board.Submit(ctx, "veteran", 700, leaderboard.WithTime(lastWeek)); err != nil {
			t.Fatal(err)
		}
		f.submit("rookie", 100)
		at := lastWeek.Format(time.DateOnly)
		got := decode[boardResponse](t, f.get("/api/v1/leaderboard?window=weekly&at="+at))
		if got.Period != leaderboard.Weekly().Period(lastWeek).ID || len(got.Entries) != 1 || got.Entries[0].UserID != "veteran" {
			t.Fatalf("last week: %+v", got)
		}
		got = decode[boardResponse](t, f.get("/api/v1/leaderboard?window=weekly"))
		if len(got.Entries) != 1 || got.Entries[0].UserID != "rookie" {
			t.Fatalf("this week: %+v", got)
		}
		got = decode[boardResponse](t, f.get("/api/v1/leaderboard?window=weekly&at="+lastWeek.Format(time.RFC3339)))
		if len(got.Entries) != 1 || got.Entries[0].UserID != "veteran" {
			t.Fatalf("last week by RFC 3339 time: %+v", got)
		}
		// RFC 3339 allows "t" and "z" in lower case.
		got = decode[boardResponse](t, f.get("/api/v1/leaderboard?window=weekly&at="+lastWeek.Format("2006-01-02t15:04:05z")))
		if len(got.Entries) != 1 || got.Entries[0].UserID != "veteran" {
			t.Fatalf("last week by RFC 3339 time in lower case: %+v", got)
		}
		around := decode[aroundResponse](t, f.get("/api/v1/leaderboard?window=weekly&userId=veteran&at="+at))
		if around.UserRank != 1 || around.UserScore != 700 {
			t.Fatalf("veteran last week: %+v", around)
		}
		// All time holds both.
		if got := decode[boardResponse](t, f.get("/api/v1/leaderboard?at="+at)); got.Total != 2 {
			t.Fatalf("all time: %+v", got)
		}
	})
}

func TestLeaderboardBadQueries(t *testing.T) {
	tomorrow := time.Now().UTC().AddDate(0, 0, 2).Format(time.DateOnly)
	cases := []struct{ query, field string }{
		{"window=yearly", "window"},
		{"window=Weekly", "window"},
		{"limit=0", "limit"},
		{"limit=101", "limit"},
		{"limit=ten", "limit"},
		{"limit=1.5", "limit"},
		{"limit=1&limit=2", "limit"},
		{"page=0", "page"},
		{"page=-1&size=5", "page"},
		{"page=99999999999999999999", "page"},
		{"size=0", "size"},
		{"size=101", "size"},
		{"page=1&size=5&limit=5", "limit"},
		{"userId=p1&limit=5", "limit"},
		{"userId=p1&page=2", "page"},
		{"userId=p1&size=2", "size"},
		{"userId=", "userId"},
		{"userId=" + strings.Repeat("x", maxUserID+1), "userId"},
		{"userId=a%20b", "userId"},
		{"userId=p1&range=-1", "range"},
		{"userId=p1&range=51", "range"},
		{"range=5", "range"},
		{"page=2&range=5", "range"},
		{"at=yesterday", "at"},
		{"at=2026-13-01", "at"},
		{"at=" + tomorrow, "at"},
		{"sort=asc", "sort"},
	}
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		for _, c := range cases {
			rec := f.get("/api/v1/leaderboard?" + c.query)
			if rec.Code != http.StatusBadRequest || decode[errorBody](t, rec).Field != c.field {
				t.Errorf("?%s: %d %s, want 400 naming %q", c.query, rec.Code, rec.Body, c.field)
			}
		}
		wantError(t, f.get("/api/v1/distribution?window=hourly"), http.StatusBadRequest, "window")
		wantError(t, f.get("/api/v1/distribution?bins=3"), http.StatusBadRequest, "bins")
	})
}

// TestMalformedQueryString: a query string that does not parse (a bad
// %-escape, a ';' separator) is a 400 naming "query" on every endpoint that
// reads one, not a 200 for the parameters that happened to parse.
func TestMalformedQueryString(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	for _, path := range []string{"/api/v1/leaderboard", "/api/v1/distribution", "/api/v1/events"} {
		// "=5": a parameter without a name has none to give the field.
		for _, query := range []string{"window=%zz", "limit=5;window=daily", "userId=%zzbob", "window=daily&at=%", ";", "=5", "window=daily&=5"} {
			// An event stream the old code opened ends with this context.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			rec := f.do(httptest.NewRequest(http.MethodGet, path+"?"+query, nil).WithContext(ctx))
			cancel()
			if rec.Code != http.StatusBadRequest || decode[errorBody](t, rec).Field != "query" {
				t.Errorf("%s?%s: %d %s, want 400 naming query", path, query, rec.Code, rec.Body)
			}
		}
	}
}

func TestDistribution(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		got := decode[distResponse](t, f.get("/api/v1/distribution?window=daily"))
		if got.Total != 0 || got.Sampled != 0 || got.Bins == nil || len(got.Bins) != 0 {
			t.Fatalf("empty: %+v", got)
		}
		f.seed(30) // 10..300
		got = decode[distResponse](t, f.get("/api/v1/distribution?window=weekly"))
		n := 0
		for _, b := range got.Bins {
			n += b.Count
		}
		if got.Total != 30 || got.Sampled != 30 || n != 30 || len(got.Bins) < 10 || len(got.Bins) > distBins+1 {
			t.Fatalf("seeded: %+v", got)
		}
		if got.Bins[0].From > 10 || got.Bins[len(got.Bins)-1].To <= 300 {
			t.Fatalf("bins %+v do not cover 10..300", got.Bins)
		}
	})
}

func TestHistogram(t *testing.T) {
	es := func(scores ...float64) []leaderboard.Entry {
		out := make([]leaderboard.Entry, len(scores))
		for i, s := range scores {
			out[i] = leaderboard.Entry{Score: s}
		}
		return out
	}
	if got := histogram(es(5, 5, 5), 20); len(got) != 1 || got[0].Count != 3 || got[0].From != 5 {
		t.Fatalf("equal scores: %+v", got)
	}
	got := histogram(es(9000, 1000, 4999.5, 5000, 0.25), 20)
	if len(got) != 19 || got[0].From != 0 || got[0].To != 500 || got[9].Count != 1 || got[10].Count != 1 || got[18].Count != 1 {
		t.Fatalf("0..9000: %+v", got)
	}
	if got := histogram(es(-3, 3), 3); got[0].From != -4 || got[len(got)-1].To < 3 {
		t.Fatalf("negative: %+v", got)
	}
}

func TestHealthAndMetrics(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b, func(c *config) { c.Burst, c.Rate = 1, 0.001 })
		rec := f.get("/healthz")
		if rec.Code != http.StatusOK || decode[map[string]string](t, rec)["status"] != "ok" {
			t.Fatalf("healthz: %d %s", rec.Code, rec.Body)
		}
		f.submit("m", 1)
		f.do(newSigned(`{"userId":"m","score":2}`).request())                           // 429
		f.do(newSigned(`{"userId":"m","score":2,"x":1}`).request())                     // 400
		f.do(httptest.NewRequest(http.MethodPost, "/api/v1/scores", nil))               // 400: empty
		f.do(httptest.NewRequest(http.MethodPost, "/api/v1/scores", ioNopCloser(`{}`))) // 401
		f.get("/api/v1/leaderboard?limit=3")
		f.get("/nowhere")

		rec = f.get("/metrics")
		if rec.Code != http.StatusOK {
			t.Fatalf("metrics: %d", rec.Code)
		}
		text := rec.Body.String()
		for _, want := range []string{
			`leaderboard_http_requests_total{code="200",method="POST",route="POST /api/v1/scores"} 1`,
			`leaderboard_http_requests_total{code="429",method="POST",route="POST /api/v1/scores"} 1`,
			`leaderboard_http_requests_total{code="400",method="POST",route="POST /api/v1/scores"} 2`,
			`leaderboard_http_requests_total{code="401",method="POST",route="POST /api/v1/scores"} 1`,
			`leaderboard_http_requests_total{code="200",method="GET",route="GET /api/v1/leaderboard"} 1`,
			`leaderboard_http_requests_total{code="404",method="GET",route="unmatched"} 1`,
			`leaderboard_http_request_duration_seconds_count{method="GET",route="GET /api/v1/leaderboard"} 1`,
			`leaderboard_http_request_duration_seconds_bucket{method="POST",route="POST /api/v1/scores",le="+Inf"} 5`,
			`leaderboard_submits_total{outcome="new_best"} 1`,
			`leaderboard_submits_total{outcome="rate_limited"} 1`,
			`leaderboard_submits_total{outcome="invalid"} 2`,
			`leaderboard_submits_total{outcome="unauthorized"} 1`,
			`leaderboard_submits_total{outcome="replayed"} 0`,
			`leaderboard_event_streams 0`,
			`go_goroutines `,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("metrics lack %q", want)
			}
		}
	})
}

func TestHealthRedisDown(t *testing.T) {
	b := testredis.Mini(t)
	f := newFixture(t, b)
	b.Mini.Close()
	rec := f.get("/healthz")
	if rec.Code != http.StatusServiceUnavailable || decode[map[string]string](t, rec)["status"] != "unavailable" {
		t.Fatalf("healthz with Redis down: %d %s", rec.Code, rec.Body)
	}
	// A submit that passes every check but cannot reach Redis is a 503,
	// never a 200 or a 500 with details.
	rec = f.do(newSigned(`{"userId":"a","score":1}`).request())
	wantError(t, rec, http.StatusServiceUnavailable, "")
	b.Mini.Restart() // lets the fixture's cleanup scan the keys
}

func TestRoutes(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	wantError(t, f.get("/api/v1/nothing"), http.StatusNotFound, "")
	rec := f.do(httptest.NewRequest(http.MethodGet, "/api/v1/scores", nil))
	wantError(t, rec, http.StatusMethodNotAllowed, "")
	if rec.Header().Get("Allow") != "POST" {
		t.Fatalf("Allow %q", rec.Header().Get("Allow"))
	}
	rec = f.do(httptest.NewRequest(http.MethodDelete, "/api/v1/leaderboard", nil))
	wantError(t, rec, http.StatusMethodNotAllowed, "")

	rec = f.get("/")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "<title>Leaderboard</title>") ||
		!strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
		t.Fatalf("page: %d %q", rec.Code, rec.Header().Get("Content-Type"))
	}
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") {
		t.Fatalf("CSP %q", csp)
	}
	for path, ct := range map[string]string{"/static/app.js": "text/javascript", "/static/style.css": "text/css"} {
		rec := f.get(path)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), ct) {
			t.Fatalf("%s: %d %q", path, rec.Code, rec.Header().Get("Content-Type"))
		}
	}
	for _, path := range []string{"/static/", "/static/nothing.js", "/index.html/x", "/other"} {
		if rec := f.get(path); rec.Code != http.StatusNotFound {
			t.Fatalf("%s: %d, want 404", path, rec.Code)
		}
	}
}

// TestErrorsAreJSON: an unknown path, a method a path does not take, and a
// page file that does not exist are JSON errors on every path, not the
// mux's or the file server's plain text, and a page file is served whole
// whatever range or precondition the request holds.
func TestErrorsAreJSON(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	for _, c := range []struct {
		method, path string
		status       int
		allow        string
	}{
		{http.MethodPost, "/healthz", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodDelete, "/metrics", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPost, "/", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodPut, "/static/app.js", http.StatusMethodNotAllowed, "GET, HEAD"},
		{http.MethodGet, "/api/v1/scores", http.StatusMethodNotAllowed, "POST"},
		{http.MethodGet, "/healthz/x", http.StatusNotFound, ""},
		{http.MethodGet, "/other", http.StatusNotFound, ""},
		{http.MethodPost, "/other", http.StatusNotFound, ""},
		{http.MethodGet, "/api/v1/nothing", http.StatusNotFound, ""},
		{http.MethodGet, "/index.html/x", http.StatusNotFound, ""},
		{http.MethodGet, "/static/", http.StatusNotFound, ""},
		{http.MethodGet, "/static/nothing.js", http.StatusNotFound, ""},
		{http.MethodGet, "/static/app.js/", http.StatusNotFound, ""},
	} {
		rec := f.do(httptest.NewRequest(c.method, c.path, nil))
		if ct := rec.Header().Get("Content-Type"); rec.Code != c.status || !strings.HasPrefix(ct, "application/json") {
			t.Errorf("%s %s: %d %q %q, want %d in JSON", c.method, c.path, rec.Code, ct, rec.Body, c.status)
			continue
		}
		wantError(t, rec, c.status, "")
		if got := rec.Header().Get("Allow"); got != c.allow {
			t.Errorf("%s %s: Allow %q, want %q", c.method, c.path, got, c.allow)
		}
	}
	for h, v := range map[string]string{"Range": "bytes=999999-", "If-Match": `"x"`, "If-Unmodified-Since": "Mon, 02 Jan 2006 15:04:05 GMT"} {
		r := httptest.NewRequest(http.MethodGet, "/static/style.css", nil)
		r.Header.Set(h, v)
		if rec := f.do(r); rec.Code != http.StatusOK {
			t.Errorf("%s: %s: %d %q, want the whole file", h, v, rec.Code, rec.Body)
		}
	}
}

// TestSubmitPreviousNull: "not ranked before" is null in every field that
// says so; a real previous score of 0 is 0.
func TestSubmitPreviousNull(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		rec := f.do(newSigned(`{"userId":"zero","score":0}`).request())
		if rec.Code != http.StatusOK {
			t.Fatalf("first submit: %d %s", rec.Code, rec.Body)
		}
		body := rec.Body.String()
		// One top-level previousRank and two fields in each of 4 windows.
		if n := strings.Count(body, `"previousRank":null`) + strings.Count(body, `"previousScore":null`); n != 1+2*len(windows) {
			t.Fatalf("first submit: %d null previous fields, want %d: %s", n, 1+2*len(windows), body)
		}
		if strings.Contains(body, `"previousRank":0`) || strings.Contains(body, `"previousScore":0`) {
			t.Fatalf("first submit says ranked before: %s", body)
		}
		r := f.submit("zero", 5) // ranked before, with a real score of 0
		if deref(r.PreviousRank) != 1 {
			t.Fatalf("second submit: previousRank %v", r.PreviousRank)
		}
		for name, w := range r.Windows {
			if w.PreviousRank == nil || *w.PreviousRank != 1 || w.PreviousScore == nil || *w.PreviousScore != 0 {
				t.Fatalf("window %s: %+v, want previous rank 1, score 0", name, w)
			}
		}
	})
}

// TestLeaderboardAtBefore1970: ?at= before 1970 is refused with 400 (field
// at), also the first instant of year 1, which parses to Go's zero time:
// the server read it as no at, and the SDK's At as now, so it answered
// 0001-01-01 with today's period and entries. A date after it but long past
// every retention is refused alike.
func TestLeaderboardAtBefore1970(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	f.submit("p1", 5)
	for _, uri := range []string{
		"/api/v1/leaderboard?window=daily&at=0001-01-01",
		"/api/v1/leaderboard?window=weekly&at=0001-01-01T00:00:00Z",
		"/api/v1/leaderboard?window=monthly&at=0001-01-01&userId=p1",
		"/api/v1/leaderboard?window=alltime&at=1969-12-31T23:59:59Z",
		"/api/v1/leaderboard?window=daily&at=0001-01-02",
		"/api/v1/distribution?window=daily&at=0001-01-01",
	} {
		wantError(t, f.get(uri), http.StatusBadRequest, "at")
	}
	// The first instant of 1970 is a time like any other: long past a
	// day's retention.
	wantError(t, f.get("/api/v1/leaderboard?window=daily&at=1970-01-01"), http.StatusGone, "at")
}

// TestReplayRejectedToTheLastSecond: replay protection had a hole of up
// to one second. verify accepts a timestamp while |now.Unix() - ts| <= skew,
// with now TRUNCATED to whole seconds, so a request stays acceptable until
// ts+skew+1 (exclusive) in real time; but the nonce is kept only 2*skew from
// its first use (auth.go, verify: `Set()…Nx().Ex(2*v.skew)`). A request
// first used in the first second of its window (a game server whose clock
// is ahead by nearly the skew, which the skew exists to tolerate) loses its
// nonce while its timestamp is still accepted, and can be sent again.
// README: "…a nonce it has seen (it keeps each for twice the skew with SET
// NX EX), so a captured request cannot be sent again."
func TestReplayRejectedToTheLastSecond(t *testing.T) {
	b := testredis.Mini(t)
	cfg := testConfig(b.BoardName(t))
	skew := cfg.Skew // 1m
	base := time.Now().Truncate(time.Second)
	var mu sync.Mutex
	cur := base.Add(900 * time.Millisecond) // 0.9s into second `base`
	now := func() time.Time { mu.Lock(); defer mu.Unlock(); return cur }
	srv, err := newServer(cfg, b.Client, slog.New(slog.DiscardHandler), now)
	if err != nil {
		t.Fatal(err)
	}
	h := srv.handler()

	// Signed by a game server whose clock is `skew` ahead: ts = now + skew,
	// accepted (the difference is exactly the skew).
	s := newSigned(`{"userId":"victim","score":10}`)
	s.ts = strconv.FormatInt(base.Unix()+int64(skew/time.Second), 10)
	if rec := serve(h, s.request()); rec.Code != http.StatusOK {
		t.Fatalf("first use: %d %s", rec.Code, rec.Body)
	}

	// 2*skew + 50ms later (Redis and the server move together): the nonce
	// key has expired, but now.Unix() - ts == skew still passes the check.
	b.Mini.FastForward(2*skew + 50*time.Millisecond)
	mu.Lock()
	cur = base.Add(2*skew + 950*time.Millisecond)
	mu.Unlock()
	rec := serve(h, s.request()) // the very same captured request
	if rec.Code != http.StatusUnauthorized {
		t.Errorf("replay of a captured request %v after first use: %d %s, want 401 (replayed)",
			2*skew+50*time.Millisecond, rec.Code, strings.TrimSpace(rec.Body.String()))
	}
}

// TestSubmitQueryString: POST /api/v1/scores takes no query string: an
// unknown parameter (?foo=1) and one that does not parse (?%zz) are 400,
// and nothing is written (they were answered 200, the score written). README,
// Errors: "400 for bad input (a query string that does not parse, such as
// one with a bad % escape or a ;, with the field query; a query parameter
// that is unknown …)", and "A refused submission writes nothing to the
// board". Every GET endpoint but /healthz calls queryOf/noParams;
// handleSubmit (api.go) does not.
func TestSubmitQueryString(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	for _, c := range []struct{ query, field string }{
		{"foo=1", "foo"},
		{"%zz", "query"},
		{"a=1;b=2", "query"},
	} {
		user := "q-" + strconv.Itoa(len(c.query))
		s := newSigned(fmt.Sprintf(`{"userId":%q,"score":1}`, user))
		s.uri = "/api/v1/scores?" + c.query // signed as sent: the signature is good
		rec := f.do(s.request())
		if rec.Code != http.StatusBadRequest {
			t.Errorf("POST /api/v1/scores?%s: %d %.120s, want 400 with field %q", c.query, rec.Code, rec.Body, c.field)
			continue
		}
		wantError(t, rec, http.StatusBadRequest, c.field)
	}
}

// TestHealthQueryString: /healthz refuses a query string that does not
// parse and unknown parameters (it answered 200), where README
// promises 400 "on every path" for "a query string that does not parse …
// with the field query; a query parameter that is unknown", and where
// /api/v1/events and /api/v1/distribution, which take no or few
// parameters, do refuse them (noParams). handleHealth (api.go) never
// parses the query. (The page and /metrics ignore theirs too; a cache
// buster on a static file is harmless, so only the JSON endpoint is
// tested here.)
func TestHealthQueryString(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	for uri, field := range map[string]string{
		"/healthz?%zz":  "query",
		"/healthz?foo=": "foo",
	} {
		rec := f.get(uri)
		if rec.Code != http.StatusBadRequest {
			t.Errorf("GET %s: %d %s, want 400 with field %q (as /api/v1/events answers)", uri, rec.Code, strings.TrimSpace(rec.Body.String()), field)
		}
	}
}

// TestDistributionBadQueryDeterministic: /api/v1/distribution checked
// its parameters in Go map order (distribution.go, handleDistribution:
// `for k, vs := range v`), so the same bad query gets a different error
// (and field) from one request to the next, where GET /api/v1/leaderboard
// sorts the parameters "so that a query with several faults always gets
// the same error" (parseBoardQuery) and names the alphabetically first.
// The read endpoints are to validate alike.
func TestDistributionBadQueryDeterministic(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	seen := map[string]int{}
	for range 50 {
		rec := f.get("/api/v1/distribution?b=1&a=1&c=1&d=1")
		seen[decode[errorBody](t, rec).Field]++
	}
	board := decode[errorBody](t, f.get("/api/v1/leaderboard?b=1&a=1&c=1&d=1")).Field
	if len(seen) != 1 || seen[board] != 50 {
		t.Errorf("50 identical bad queries named the fields %v; the board endpoint names %q every time", seen, board)
	}
}
