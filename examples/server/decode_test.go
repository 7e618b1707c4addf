package main

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"unicode/utf8"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// FuzzDecodeSubmit checks that any body either yields a request that is
// valid in every respect, or an error naming a field, and never panics.
func FuzzDecodeSubmit(f *testing.F) {
	for _, s := range []string{
		`{"userId":"player-42","score":8500}`,
		`{"score":-0.5,"userId":"é"}`,
		`{"userId":"a","score":1e308}`,
		`{"userId":"a","score":NaN}`,
		`{"userId":"a","score":"1"}`,
		`{"userId":"a","score":1,"x":[1,{"y":2}]}`,
		`{"userId":"a" , "score" : 0x1}`,
		`[]`, `{}`, ``, `{"userId":"\u0000","score":1}`,
		`{"userId":"a","score":1,"name":"Ana <b>"}`, `{"name":" ","userId":"a","score":1}`,
		`{"userId":"p\ud800","score":1}`, `{"userId":"p\ud83d\ude00","score":1,"name":"\\udc00"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		req, fe := decodeSubmit(body, -1e6, 1e6)
		if fe != nil {
			if fe.field == "" || fe.msg == "" {
				t.Fatalf("error without a field or message: %+v", fe)
			}
			return
		}
		if checkUserID(req.UserID) != nil || !utf8.ValidString(req.UserID) {
			t.Fatalf("accepted a bad userId %q", req.UserID)
		}
		if math.IsNaN(req.Score) || req.Score < -1e6 || req.Score > 1e6 {
			t.Fatalf("accepted a bad score %v", req.Score)
		}
		// What was accepted is what the JSON says.
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("accepted %q, which encoding/json refuses: %v", body, err)
		}
		if req.Name != "" && checkName(req.Name) != nil {
			t.Fatalf("accepted a bad name %q", req.Name)
		}
		fields := 2
		if _, ok := m["name"]; ok {
			fields = 3
		}
		if len(m) != fields || m["userId"] != req.UserID || m["score"] != req.Score || (fields == 3 && m["name"] != req.Name) {
			t.Fatalf("accepted %q as %+v", body, req)
		}
	})
}

// TestDecodeSubmitLoneSurrogate: encoding/json turns an escaped UTF-16
// surrogate without its other half into U+FFFD, so "p\ud800" and
// "p\udc00" would be one player; such a string is refused in every string
// field, while a real pair, an escaped backslash before "ud800" and a
// U+FFFD the client sent are taken as they are.
func TestDecodeSubmitLoneSurrogate(t *testing.T) {
	for _, c := range []struct {
		body, field string // field "": accepted
		user, name  string
	}{
		{`{"userId":"p\ud800","score":1}`, "userId", "", ""},
		{`{"userId":"p\udc00","score":1}`, "userId", "", ""},
		{`{"userId":"p\uDBFF\u0041","score":1}`, "userId", "", ""},
		{`{"userId":"p\udc00\ud800","score":1}`, "userId", "", ""},
		{`{"userId":"\ud800\ud800\udc00","score":1}`, "userId", "", ""},
		{`{"userId":"p","score":1,"name":"Ana\ud83d"}`, "name", "", ""},
		{`{"userId":"p\ud83d\ude00","score":1}`, "", "p\U0001F600", ""},
		{`{"userId":"p\\ud800","score":1}`, "", `p\ud800`, ""},
		{`{"userId":"p\ufffd","score":1,"name":"A\uFFFD\\\ud83d\ude00"}`, "", "p\ufffd", "A\ufffd\\\U0001F600"},
	} {
		req, fe := decodeSubmit([]byte(c.body), -1e6, 1e6)
		switch {
		case c.field != "" && (fe == nil || fe.field != c.field):
			t.Errorf("%s: %+v %v, want an error naming %s", c.body, req, fe, c.field)
		case c.field == "" && (fe != nil || req.UserID != c.user || req.Name != c.name):
			t.Errorf("%s: %+v %v, want userId %q name %q", c.body, req, fe, c.user, c.name)
		}
	}
}

// FuzzReadQueries sends any query string to the read endpoints on
// miniredis (every read of the board: top, page, around, range, between,
// cutoff, aroundScore): every answer is JSON with a status the README lists
// for a read (200, 400, 404, 410), never a 5xx or a panic.
func FuzzReadQueries(f *testing.F) {
	for _, s := range []string{
		"", "limit=10", "window=weekly&page=3&size=25", "userId=p1&range=5",
		"at=2026-11-23", "at=0000-01-01", "at=9999-12-31T23:59:59Z", "at=0001-01-01T00:00:00+23:59",
		"window=monthly&at=1970-01-01", "page=2147483647&size=100", "userId=%00", "range=-1",
		"limit=1e3", "at=2026-02-30", "userId=a&at=2026-01-01&window=daily",
		"from=1&to=1000", "from=2147483647&to=2147483647", "from=3&to=2", "to=9223372036854775807&from=1",
		"lo=&hi=", "lo=-inf&hi=%2Binf&n=1000", "lo=NaN", "hi=1e400", "lo=1e-400", "lo=0x1p3&hi=inf", "lo=5&hi=4", "n=3",
		"percent=100", "percent=1e-300", "percent=0", "percent=Inf", "window=daily&at=2020-01-01&percent=5",
		"score=1e308&radius=500", "score=-1e308", "score=NaN", "score=5&radius=501", "radius=1", "score=1&percent=1",
	} {
		f.Add(s)
	}
	fx := newFixture(f, testredis.Mini(f))
	fx.seed(5)
	f.Fuzz(func(t *testing.T, raw string) {
		for _, path := range []string{"/api/v1/leaderboard", "/api/v1/distribution"} {
			r := httptest.NewRequest(http.MethodGet, path, nil)
			r.URL.RawQuery = raw
			rec := httptest.NewRecorder()
			fx.h.ServeHTTP(rec, r)
			switch rec.Code {
			case http.StatusOK, http.StatusBadRequest, http.StatusNotFound, http.StatusGone:
			default:
				t.Fatalf("%s?%s: %d %s", path, raw, rec.Code, rec.Body)
			}
			if !json.Valid(rec.Body.Bytes()) {
				t.Fatalf("%s?%s: not JSON: %q", path, raw, rec.Body)
			}
		}
	})
}

// TestCheckNameAndUserID: the rule README gives. A userId may not hold a
// space (any Unicode white space) or a control character; a name may not
// hold a control character nor start or end with a space; neither may
// hold a bidirectional embedding, override or isolate. Format characters
// (the joiners of emoji sequences and Persian names) and spaces inside a
// name are allowed.
func TestCheckNameAndUserID(t *testing.T) {
	for _, c := range []struct {
		s            string
		idOK, nameOK bool
	}{
		{"family-\u200d", true, true},                                    // ZWJ
		{"\U0001F468\u200d\U0001F469", true, true},                       // emoji ZWJ sequence
		{"\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645", true, true}, // Persian, with ZWNJ
		{"a\u200eb", true, true},                                         // a left-to-right mark
		{"Ana\u00a0Maria", false, true},                                  // no-break space inside
		{"Ana Maria", false, true},
		{"\u00a0Ana", false, false}, // a no-break space at the start
		{"Ana\u2003", false, false}, // an em space at the end
		{"a\tb", false, false},
		{"a\u0085b", false, false}, // NEL, a C1 control
		{"a\u202eb", false, false}, // right-to-left override
		{"a\u2067b", false, false}, // right-to-left isolate
	} {
		if got := checkUserID(c.s) == nil; got != c.idOK {
			t.Errorf("checkUserID(%+q) accepted %v, want %v", c.s, got, c.idOK)
		}
		if got := checkName(c.s) == nil; got != c.nameOK {
			t.Errorf("checkName(%+q) accepted %v, want %v", c.s, got, c.nameOK)
		}
	}
}
