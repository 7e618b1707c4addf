package main

import (
	"math"
	"net/http"
	"testing"
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
	const skew = 300
	for _, c := range []struct {
		now, ts int64
		want    bool
	}{
		{1764460800, 1764460800, true},
		{1764460800, 1764460800 - skew, true},
		{1764460800, 1764460800 + skew, true},
		{1764460800, 1764460800 - skew - 1, false},
		{1764460800, 1764460800 + skew + 1, false},
		{1764460800, 1764460800 + math.MinInt64, false}, // now - 2^63
		{1764460800, math.MinInt64, false},
		{1764460800, math.MaxInt64, false},
		{-1764460800, math.MaxInt64, false}, // ts - now overflows
		{math.MaxInt64, math.MaxInt64, true},
		{math.MaxInt64, math.MaxInt64 - skew, true},
		{math.MaxInt64, math.MaxInt64 - skew - 1, false},
		{math.MaxInt64, math.MinInt64, false},
		{math.MinInt64, math.MinInt64, true},
		{math.MinInt64, math.MinInt64 + skew, true},
		{math.MinInt64, math.MinInt64 + skew + 1, false},
		{math.MinInt64, math.MaxInt64, false},
		{0, -skew, true},
		{0, skew + 1, false},
	} {
		if got := withinSkew(c.now, c.ts, skew); got != c.want {
			t.Errorf("withinSkew(now %d, ts %d, %d) = %v, want %v", c.now, c.ts, skew, got, c.want)
		}
	}
	if withinSkew(0, 0, -1) {
		t.Error("a negative skew accepted a timestamp")
	}
}
