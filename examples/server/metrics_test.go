package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestMetricLabelsFixed sends made-up methods, long methods and unknown
// paths, then checks every label of every service metric: each value must
// come from the code's fixed sets, so no client can add a series.
func TestMetricLabelsFixed(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	for i := range 100 {
		m := fmt.Sprintf("MADEUP%03d", i)
		f.do(httptest.NewRequest(m, "/api/v1/leaderboard", nil))
		f.do(httptest.NewRequest(m, fmt.Sprintf("/nowhere/%d", i), nil))
		f.do(httptest.NewRequest(strings.Repeat("X", 1000)+strconv.Itoa(i), "/", nil))
	}
	for _, m := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE"} {
		f.do(httptest.NewRequest(m, "/api/v1/leaderboard", nil))
	}
	f.submit("someone", 1)

	routes := []string{patternSubmit, patternBoard, patternDistribution, patternEvents, patternHealth, patternMetrics,
		"GET /{$}", "GET /static/", "/api/v1/scores", "/api/v1/leaderboard", "/api/v1/distribution", "/api/v1/events",
		"/healthz", "/metrics", "/{$}", "/static/", routeNone}
	allowed := map[string]func(string) bool{
		"route":   func(v string) bool { return slices.Contains(routes, v) },
		"method":  func(v string) bool { return v == methodOther || methodLabel(v) == v },
		"outcome": func(v string) bool { return slices.Contains(outcomes, v) },
		"code": func(v string) bool {
			n, err := strconv.Atoi(v)
			return err == nil && n >= 100 && n <= 599 && strconv.Itoa(n) == v
		},
	}
	families, err := f.srv.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	series := 0
	for _, mf := range families {
		if !strings.HasPrefix(mf.GetName(), "leaderboard_") {
			continue // Go and process collectors: no labels from requests
		}
		for _, m := range mf.GetMetric() {
			series++
			for _, l := range m.GetLabel() {
				ok, known := allowed[l.GetName()]
				if !known {
					t.Errorf("%s: label %q has no fixed set in this test", mf.GetName(), l.GetName())
				} else if !ok(l.GetValue()) {
					t.Errorf("%s: label %s=%.40q is not from the fixed set", mf.GetName(), l.GetName(), l.GetValue())
				}
			}
		}
	}
	// 300 odd requests added a handful of series, not hundreds.
	if series > 60 {
		t.Errorf("%d series after odd methods and paths", series)
	}
	if rec := f.get("/metrics"); rec.Body.Len() > 64<<10 {
		t.Errorf("scrape of %d bytes", rec.Body.Len())
	}
	if got := methodLabel("get"); got != methodOther {
		t.Errorf("methodLabel(get) = %q: methods are case-sensitive", got)
	}
	if rec := f.do(httptest.NewRequest(http.MethodPut, "/api/v1/leaderboard", nil)); rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("PUT: %d", rec.Code)
	}
}
