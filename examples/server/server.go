package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// Route patterns; the metrics are labelled with them.
const (
	patternSubmit       = "POST /api/v1/scores"
	patternBoard        = "GET /api/v1/leaderboard"
	patternDistribution = "GET /api/v1/distribution"
	patternEvents       = "GET /api/v1/events"
	patternHealth       = "GET /healthz"
	patternMetrics      = "GET /metrics"
)

// windows are the boards every submission goes to, by the name the API
// uses; the first is the default.
var windows = []leaderboard.Window{leaderboard.AllTime(), leaderboard.Daily(), leaderboard.Weekly(), leaderboard.Monthly()}

// server is the HTTP service. It keeps no state of its own beyond caches:
// any number of instances can share one Redis.
type server struct {
	cfg     config
	log     *slog.Logger
	client  rueidis.Client
	board   *leaderboard.Leaderboard
	now     func() time.Time
	auth    *verifier
	limiter *limiter
	hub     *hub
	metrics *metrics
	dist    distCache
}

// newServer builds the service on client. now is time.Now outside tests.
func newServer(cfg config, client rueidis.Client, log *slog.Logger, now func() time.Time) (*server, error) {
	board, err := leaderboard.New(client, cfg.Board,
		leaderboard.WithPolicy(leaderboard.KeepBest), // a player's best run counts
		leaderboard.WithWindows(windows...),
		leaderboard.WithClock(now),
	)
	if err != nil {
		return nil, err
	}
	// The service's own keys (nonces, buckets) stay out of the board's hash
	// tag, so they are never mistaken for board keys and spread over a
	// cluster instead of piling onto the board's slot.
	prefix := "lbsrv:" + cfg.Board + ":"
	s := &server{
		cfg:     cfg,
		log:     log,
		client:  client,
		board:   board,
		now:     now,
		auth:    &verifier{keys: cfg.Keys, skew: cfg.Skew, now: now, client: client, prefix: prefix},
		limiter: newLimiter(client, prefix, cfg.Rate, cfg.Burst),
		hub:     newHub(client, prefix+"changes", cfg.StreamsPerClient, log),
	}
	s.metrics = newMetrics(s.hub.count)
	return s, nil
}

// run does the background work (live updates) until ctx ends.
func (s *server) run(ctx context.Context) { s.hub.run(ctx) }

// close ends the event streams so that a graceful shutdown can finish.
func (s *server) close() { s.hub.close() }

// handler routes every request.
func (s *server) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(patternSubmit, s.handleSubmit)
	mux.HandleFunc(patternBoard, s.handleBoard)
	mux.HandleFunc(patternDistribution, s.handleDistribution)
	mux.HandleFunc(patternEvents, s.handleEvents)
	mux.HandleFunc(patternHealth, s.handleHealth)
	mux.Handle(patternMetrics, s.metrics.handler())
	page := pageHandler()
	mux.Handle("GET /{$}", page)
	mux.Handle("GET /static/", page)
	// JSON instead of the mux's plain-text 404 and 405, on every path: an
	// error is JSON wherever a client meets it.
	mux.HandleFunc(patternNotFound, func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such endpoint", "")
	})
	for p, allow := range methodsAllowed {
		mux.HandleFunc(p, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Allow", allow)
			writeError(w, http.StatusMethodNotAllowed, "method not allowed", "")
		})
	}
	return s.metrics.instrument(s.logRequests(recoverPanics(s.log, securityHeaders(notAPath(mux)))))
}

// allowedAnywhere is every method some path takes: the Allow of a request
// that names no path.
const allowedAnywhere = "GET, HEAD, POST"

// notAPath answers, in JSON, the requests whose target is no path, which
// the mux would answer itself in plain text or with an empty body: "*"
// (OPTIONS * never gets here: net/http answers it) is a 400, and a CONNECT
// to a host:port, which no path of the service takes, a 405. They count
// under the route "unmatched".
func notAPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodConnect && !strings.HasPrefix(r.URL.Path, "/"):
			w.Header().Set("Allow", allowedAnywhere)
			writeError(w, http.StatusMethodNotAllowed, "method not allowed", "")
		case r.RequestURI == "*":
			writeError(w, http.StatusBadRequest, "request target * is for OPTIONS only; want a path", "")
		default:
			next.ServeHTTP(w, r)
		}
	})
}

// patternNotFound is the route of every path no other route has; its
// metrics label is "unmatched".
const patternNotFound = "/"

// methodsAllowed are the methods of each route's path, for the 405 of a
// method it does not take: the path alone, as a pattern, matches any
// method the routes above do not.
var methodsAllowed = map[string]string{
	"/api/v1/scores": "POST", "/api/v1/leaderboard": "GET, HEAD", "/api/v1/distribution": "GET, HEAD",
	"/api/v1/events": "GET, HEAD", "/healthz": "GET, HEAD", "/metrics": "GET, HEAD",
	"/{$}": "GET, HEAD", "/static/": "GET, HEAD",
}

// redisCtx is the context of a request's Redis calls: the request's own,
// which ends when the client goes away, with the Redis timeout on top, so
// a Redis that does not answer costs a 503, not a hung request.
func (s *server) redisCtx(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.RedisTimeout)
}

// logRequests writes one structured line per request: at debug level for
// successes, which are counted in /metrics anyway, and for requests the
// client closed (499); at info level for the other 4xx; at error level for
// 5xx.
func (s *server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		level := slog.LevelDebug
		switch {
		case rec.status >= 500:
			level = slog.LevelError
		case rec.status >= 400 && rec.status != statusClientClosed:
			level = slog.LevelInfo
		}
		s.log.Log(r.Context(), level, "request",
			"method", clip(r.Method), "path", clip(r.URL.Path), "status", rec.status,
			"duration", time.Since(start), "remote", r.RemoteAddr)
	})
}

func recoverPanics(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				log.Error("panic", "method", clip(r.Method), "path", clip(r.URL.Path), "panic", fmt.Sprint(v))
				writeError(w, http.StatusInternalServerError, "internal error", "")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// securityHeaders keeps the page to its own scripts and styles, so a player
// name can never become markup that runs.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		next.ServeHTTP(w, r)
	})
}

// errorBody is every error the API answers.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// writeJSON encodes v before writing anything, so that a value JSON cannot
// hold (a NaN or an infinity) is a 500 instead of a 200 with a cut body.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: "internal error"})
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, msg, field string) {
	writeJSON(w, status, errorBody{Error: msg, Field: field})
}

// handleHealth answers 200 while Redis answers a PING within the Redis
// timeout, else 503 whatever the error (a load balancer needs no more), but
// 499 like every handler when the client has gone.
func (s *server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if !noParams(w, r) {
		return
	}
	ctx, cancel := s.redisCtx(r)
	defer cancel()
	err := s.client.Do(ctx, s.client.B().Ping().Build()).Error()
	if err == nil {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "redis": "ok"})
		return
	}
	if status, _ := classify(r.Context(), err); status == statusClientClosed {
		s.fail(w, r, "health check", err, "")
		return
	}
	s.log.Warn("health check", "err", err)
	writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "redis": "unreachable"})
}

// queryOf parses r's query string, or answers 400 naming "query" and
// returns false. r.URL.Query() is not used: it silently drops what it
// cannot parse (a bad %-escape, a ';'), so a mistyped parameter would read
// as absent and be answered 200 with defaults.
func queryOf(w http.ResponseWriter, r *http.Request) (url.Values, bool) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		writeError(w, http.StatusBadRequest, malformedQuery, "query")
		return nil, false
	}
	return v, true
}

// malformedQuery is the error of a query string that does not parse.
const malformedQuery = "malformed query string: want name=value pairs joined by '&', with valid %-escapes"

// unknownParam is the error of a query parameter a path does not take,
// named in the field; one without a name ("?=5") has none to give, and
// names the query.
func unknownParam(k string) *fieldError {
	fe := badField(k, "unknown parameter %q", k)
	if k == "" {
		fe.field = "query"
	}
	return fe
}

// firstKey returns the alphabetically first key of a query, so that an
// error about an unknown parameter is the same on every run.
func firstKey(q url.Values) string {
	ks := make([]string, 0, len(q))
	for k := range q {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return ""
	}
	return ks[0]
}
