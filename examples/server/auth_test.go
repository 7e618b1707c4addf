package main

import (
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// The worked example of README.md, computed with openssl; loadgen's tests
// check the same vector against its own implementation.
func TestSignVector(t *testing.T) {
	got := sign([]byte("example-secret-0123456789abcdef0123"), http.MethodPost, "/api/v1/scores",
		"1764460800", "0123456789abcdef0123456789abcdef", []byte(`{"userId":"player-42","score":8500}`))
	if want := "8f997280c9da09cb72afbebb114595dbbbaae394680fee53223dc5fcce108664"; got != want {
		t.Fatalf("signature %s, want %s", got, want)
	}
}

// TestWithinSkew checks the skew window at its edges and where now - ts
// would overflow, for clocks anywhere in the int64 range.
func TestWithinSkew(t *testing.T) {
	const skew = 300 * time.Second
	const s = int64(skew / time.Second)
	for _, c := range []struct {
		now, ts int64
		want    bool
	}{
		{1764460800, 1764460800, true},
		{1764460800, 1764460800 - s, true},
		{1764460800, 1764460800 + s, true},
		{1764460800, 1764460800 - s - 1, false},
		{1764460800, 1764460800 + s + 1, false},
		{1764460800, 1764460800 + math.MinInt64, false}, // now - 2^63
		{1764460800, math.MinInt64, false},
		{1764460800, math.MaxInt64, false},
		{-1764460800, math.MaxInt64, false}, // ts - now overflows
		{math.MaxInt64, math.MaxInt64, true},
		{math.MaxInt64, math.MaxInt64 - s, true},
		{math.MaxInt64, math.MaxInt64 - s - 1, false},
		{math.MaxInt64, math.MinInt64, false},
		{math.MinInt64, math.MinInt64, true},
		{math.MinInt64, math.MinInt64 + s, true},
		{math.MinInt64, math.MinInt64 + s + 1, false},
		{math.MinInt64, math.MaxInt64, false},
		{0, -s, true},
		{0, s + 1, false},
	} {
		if got := withinSkew(time.Unix(c.now, 0), c.ts, skew); got != c.want {
			t.Errorf("withinSkew(now %d, ts %d, %v) = %v, want %v", c.now, c.ts, skew, got, c.want)
		}
	}
	if withinSkew(time.Unix(0, 0), 0, -1) {
		t.Error("a negative skew accepted a timestamp")
	}
}

// TestWithinSkewExact: the skew is not cut to whole seconds, nor the clock
// to its second: with SIGNATURE_SKEW=1500ms at 1000.6s, a timestamp of
// 1002 (1.4s away) is accepted, and 999 (1.6s away) refused.
func TestWithinSkewExact(t *testing.T) {
	const skew = 1500 * time.Millisecond
	for _, c := range []struct {
		now  time.Time
		ts   int64
		want bool
	}{
		{time.Unix(1000, 600e6), 1002, true},
		{time.Unix(1000, 600e6), 999, false},
		{time.Unix(1000, 400e6), 1002, false},
		{time.Unix(1000, 400e6), 999, true},
		{time.Unix(1000, 500e6), 999, true}, // exactly the skew
		{time.Unix(1000, 500e6), 1002, true},
	} {
		if got := withinSkew(c.now, c.ts, skew); got != c.want {
			t.Errorf("withinSkew(%v, %d, %v) = %v, want %v", c.now.UTC(), c.ts, skew, got, c.want)
		}
	}
}

// TestSubmitFractionalSkew: a submission signed 1.4s from the server's
// clock is accepted with SIGNATURE_SKEW=1500ms.
func TestSubmitFractionalSkew(t *testing.T) {
	b := testredis.Mini(t)
	cfg := testConfig(b.BoardName(t))
	cfg.Skew = 1500 * time.Millisecond
	now := time.Unix(1_764_460_800, 600_000_000)
	b.Mini.SetTime(now)
	srv, err := newServer(cfg, b.Client, slog.New(slog.DiscardHandler), func() time.Time { return now })
	if err != nil {
		t.Fatal(err)
	}
	s := newSigned(`{"userId":"p","score":1}`)
	s.ts = strconv.FormatInt(now.Unix()+2, 10)
	if rec := serve(srv.handler(), s.request()); rec.Code != http.StatusOK {
		t.Errorf("timestamp 1.4s from the clock with SIGNATURE_SKEW=1.5s: %d %s", rec.Code, rec.Body)
	}
}
