package main

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Submit outcomes, the values of the outcome label.
const (
	outcomeNewBest     = "new_best"     // stored: the player's best improved
	outcomeNotBest     = "not_best"     // accepted, but not better than the best
	outcomeInvalid     = "invalid"      // 400
	outcomeUnsigned    = "unauthorized" // 401 but for a replay
	outcomeReplayed    = "replayed"     // 401: the nonce was used before
	outcomeRateLimited = "rate_limited" // 429
	outcomeCancelled   = "cancelled"    // 499: the client closed the request first
	outcomeError       = "error"        // 5xx
)

// outcomes is every value of the outcome label.
var outcomes = []string{outcomeNewBest, outcomeNotBest, outcomeInvalid, outcomeUnsigned, outcomeReplayed, outcomeRateLimited, outcomeCancelled, outcomeError}

// Label values for what is not in a fixed set: a method other than the
// standard ones, and a path no route matched. Every label value comes from
// the code, never from the request, so no client can add a series.
const (
	methodOther = "other"
	routeNone   = "unmatched"
)

// methodLabel is the method's label value: one of the standard methods, or
// "other".
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return methodOther
}

// routeLabel is the route's label value: the pattern that matched (the
// mux's patterns are the code's own), or "unmatched" for none or the
// catch-all that answers 404.
func routeLabel(pattern string) string {
	if pattern == "" || pattern == patternNotFound {
		return routeNone
	}
	return pattern
}

// metrics holds the service's collectors in a registry of its own, so tests
// can build several servers in one process.
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	submits  *prometheus.CounterVec
	inFlight prometheus.Gauge
}

func newMetrics(streams func() int) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leaderboard_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "leaderboard_http_request_duration_seconds",
			Help:    "Time to answer an HTTP request, by route pattern and method (event streams excluded).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
		submits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "leaderboard_submits_total",
			Help: "Score submissions by outcome.",
		}, []string{"outcome"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "leaderboard_http_requests_in_flight",
			Help: "HTTP requests being served, event streams included.",
		}),
	}
	for _, o := range outcomes {
		m.submits.WithLabelValues(o) // every outcome shows from the start, at 0
	}
	m.registry.MustRegister(m.requests, m.latency, m.submits, m.inFlight,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "leaderboard_event_streams",
			Help: "Open server-sent event streams.",
		}, func() float64 { return float64(streams()) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// instrument counts and times every request by the pattern that matched
// it and its method's label, which keeps the label set fixed whatever
// paths and methods clients send. It reads r.Pattern, which the mux sets on
// the request it is given: the handlers between must not replace r.
func (m *metrics) instrument(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		m.inFlight.Inc()
		defer m.inFlight.Dec()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		route, method := routeLabel(r.Pattern), methodLabel(r.Method)
		code := rec.status
		if code == 0 {
			code = http.StatusOK
		}
		m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
		if route != patternEvents {
			m.latency.WithLabelValues(route, method).Observe(time.Since(start).Seconds())
		}
	})
}

// statusRecorder remembers the status code written. Unwrap lets
// http.ResponseController reach Flush and SetWriteDeadline underneath.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
