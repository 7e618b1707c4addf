package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// proxy stands between the service and a miniredis, so a test can make
// Redis stall (it stops forwarding) or vanish (it closes every connection
// and refuses new ones).
type proxy struct {
	ln      net.Listener
	target  string
	mu      sync.Mutex
	stalled bool
	conns   []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

func (p *proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, up)
		p.mu.Unlock()
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

// pipe copies until either side closes; while stalled it holds what it
// read instead of writing it on.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			dst.Close()
			return
		}
		for p.isStalled() {
			time.Sleep(5 * time.Millisecond)
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			src.Close()
			return
		}
	}
}

func (p *proxy) isStalled() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stalled
}

func (p *proxy) stall(on bool) {
	p.mu.Lock()
	p.stalled = on
	p.mu.Unlock()
}

func (p *proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stalled = false
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// syncLog is a log destination safe for concurrent handlers.
type syncLog struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// proxied is a server whose Redis is a miniredis behind a proxy, logging
// at debug level into a buffer.
type proxied struct {
	srv   *server
	h     http.Handler
	proxy *proxy
	log   *syncLog
}

func newProxied(t *testing.T, timeout time.Duration) *proxied {
	t.Helper()
	mr := miniredis.RunT(t)
	p := newProxy(t, mr.Addr())
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress: []string{p.ln.Addr().String()}, DisableCache: true, ForceSingleClient: true,
		Dialer: net.Dialer{Timeout: time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	t.Cleanup(func() { p.stall(false) }) // before Close, which waits for the calls in flight
	cfg := testConfig("proxied")
	cfg.RedisTimeout = timeout
	logs := &syncLog{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	srv, err := newServer(cfg, c, log, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	return &proxied{srv: srv, h: srv.handler(), proxy: p, log: logs}
}

// endpoints are a request to every endpoint that reads or writes Redis.
func endpoints() map[string]func() *http.Request {
	get := func(uri string) func() *http.Request {
		return func() *http.Request { return httptest.NewRequest(http.MethodGet, uri, nil) }
	}
	return map[string]func() *http.Request{
		"submit":       func() *http.Request { return newSigned(`{"userId":"a","score":1}`).request() },
		"top":          get("/api/v1/leaderboard?limit=5"),
		"page":         get("/api/v1/leaderboard?page=2&size=5"),
		"around":       get("/api/v1/leaderboard?userId=a"),
		"range":        get("/api/v1/leaderboard?from=1&to=5"),
		"between":      get("/api/v1/leaderboard?lo=1&hi=5"),
		"cutoff":       get("/api/v1/leaderboard?percent=10"),
		"aroundScore":  get("/api/v1/leaderboard?score=5"),
		"distribution": get("/api/v1/distribution?window=daily"),
		"healthz":      get("/healthz"),
	}
}

func serve(h http.Handler, r *http.Request) *httptest.ResponseRecorder {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return rec
}

// TestRedisUnreachableEveryEndpoint: with Redis gone, every endpoint
// answers 503, never 500, and counts it as such.
func TestRedisUnreachableEveryEndpoint(t *testing.T) {
	p := newProxied(t, 2*time.Second)
	p.proxy.close()
	for name, req := range endpoints() {
		for i := range 2 { // the cut connection, then the refused dial
			rec := serve(p.h, req())
			if rec.Code != http.StatusServiceUnavailable {
				t.Errorf("%s (try %d) with Redis gone: %d %s, want 503", name, i, rec.Code, rec.Body)
			}
		}
	}
	text := serve(p.h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	if strings.Contains(text, `code="500"`) {
		t.Errorf("metrics count a 500:\n%s", text)
	}
}

// TestRedisStalledEveryEndpoint: a Redis that does not answer costs each
// endpoint a 503 within the Redis timeout.
func TestRedisStalledEveryEndpoint(t *testing.T) {
	p := newProxied(t, 300*time.Millisecond)
	if rec := serve(p.h, httptest.NewRequest(http.MethodGet, "/healthz", nil)); rec.Code != http.StatusOK {
		t.Fatalf("healthz before the stall: %d", rec.Code)
	}
	p.proxy.stall(true)
	for name, req := range endpoints() {
		start := time.Now()
		rec := serve(p.h, req())
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("%s with Redis stalled: %d %s, want 503", name, rec.Code, rec.Body)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s answered after %v, want about the 300ms timeout", name, d)
		}
	}
}

// TestClientClosedRequest: a request whose client goes away while Redis is
// being asked is a 499, counted apart from 5xx, with its own submission
// outcome, and logged below warning.
func TestClientClosedRequest(t *testing.T) {
	// rueidis may notice the cancellation only at the Redis timeout; the
	// client leaves well before it.
	p := newProxied(t, 400*time.Millisecond)
	p.proxy.stall(true) // the call waits, so the client leaves first
	for name, req := range endpoints() {
		ctx, cancel := context.WithCancel(context.Background())
		r := req().WithContext(ctx)
		time.AfterFunc(50*time.Millisecond, cancel)
		if rec := serve(p.h, r); rec.Code != statusClientClosed {
			t.Errorf("%s, client gone: %d %s, want 499", name, rec.Code, rec.Body)
		}
	}
	text := serve(p.h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
	for _, want := range []string{
		`leaderboard_http_requests_total{code="499",method="POST",route="POST /api/v1/scores"} 1`,
		`leaderboard_http_requests_total{code="499",method="GET",route="GET /api/v1/leaderboard"} 7`,
		`leaderboard_submits_total{outcome="cancelled"} 1`,
		`leaderboard_submits_total{outcome="error"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if strings.Contains(text, `code="503"`) || strings.Contains(text, `code="500"`) {
		t.Errorf("a closed request counted as 5xx:\n%s", text)
	}
	logs := p.log.String()
	if strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("closed requests logged at warning or above:\n%s", logs)
	}
	if !strings.Contains(logs, "status=499") {
		t.Errorf("no 499 in the logs:\n%s", logs)
	}
}

// metricsWithin returns the metrics once they hold want, failing the test
// after 5s without it.
func (p *proxied) metricsWithin(t *testing.T, want string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		text := serve(p.h, httptest.NewRequest(http.MethodGet, "/metrics", nil)).Body.String()
		if strings.Contains(text, want) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the metrics within 5s:\n%s", want, text)
		}
	}
}

// TestClientClosedWhileSendingBody: a client that goes away before its
// submission's body is whole, by closing or resetting the connection, has
// closed its request: 499 and the cancelled outcome, logged at debug
// level, not a 400 for bad input.
func TestClientClosedWhileSendingBody(t *testing.T) {
	p := newProxied(t, time.Second)
	ts := httptest.NewServer(p.h)
	defer ts.Close()
	var text string
	for i, reset := range []bool{false, true} {
		c, err := net.Dial("tcp", ts.Listener.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "POST /api/v1/scores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"userId\":")
		if reset {
			_ = c.(*net.TCPConn).SetLinger(0) // Close sends a reset
		}
		// Closed once the handler is reading the body: in flight are the
		// submission and the metrics request asking.
		p.metricsWithin(t, "leaderboard_http_requests_in_flight 2")
		c.Close()
		text = p.metricsWithin(t, fmt.Sprintf(`leaderboard_http_requests_total{code="499",method="POST",route="POST /api/v1/scores"} %d`, i+1))
	}
	for _, want := range []string{`leaderboard_submits_total{outcome="cancelled"} 2`, `leaderboard_submits_total{outcome="invalid"} 0`} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q:\n%s", want, text)
		}
	}
	logs := p.log.String()
	if !strings.Contains(logs, "status=499") || strings.Contains(logs, "level=INFO") || strings.Contains(logs, "level=WARN") || strings.Contains(logs, "level=ERROR") {
		t.Errorf("want the closed submissions logged at debug level with status 499:\n%s", logs)
	}
	// A stream reset (HTTP/2) ends the request's context; a read that timed
	// out is the client's slowness, a 400.
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest(http.MethodPost, "/api/v1/scores", iotest.ErrReader(errors.New("stream reset")))
	if rec := serve(p.h, r.WithContext(gone)); rec.Code != statusClientClosed {
		t.Errorf("body cut by a stream reset: %d %s, want 499", rec.Code, rec.Body)
	}
	r = httptest.NewRequest(http.MethodPost, "/api/v1/scores", iotest.ErrReader(os.ErrDeadlineExceeded))
	wantError(t, serve(p.h, r), http.StatusBadRequest, "body")
}

func TestClassify(t *testing.T) {
	live := context.Background()
	gone, cancel := context.WithCancel(context.Background())
	cancel()
	opErr := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connect: connection refused")}
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want int
	}{
		{"not ranked", live, fmt.Errorf("x: %w", leaderboard.ErrNotRanked), 404},
		{"invalid member", live, leaderboard.ErrInvalidMember, 400},
		{"invalid score", live, leaderboard.ErrInvalidScore, 400},
		{"precision", live, leaderboard.ErrPrecision, 400},
		{"invalid argument", live, leaderboard.ErrInvalidArgument, 400},
		{"deadline", live, fmt.Errorf("leaderboard: page: %w", context.DeadlineExceeded), 503},
		{"dial", live, fmt.Errorf("leaderboard: page: %w", opErr), 503},
		{"EOF", live, fmt.Errorf("leaderboard: page: %w", io.EOF), 503},
		{"closing", live, rueidis.ErrClosing, 503},
		{"no slot", live, rueidis.ErrNoSlot, 503},
		{"closed conn", live, fmt.Errorf("x: %w", net.ErrClosed), 503},
		{"other", live, errors.New("script returned 3 values, want 4"), 500},
		{"client gone, any error", gone, opErr, statusClientClosed},
		{"client gone, deadline", gone, context.DeadlineExceeded, statusClientClosed},
	} {
		if got, msg := classify(c.ctx, c.err); got != c.want || msg == "" {
			t.Errorf("%s: %d %q, want %d", c.name, got, msg, c.want)
		}
	}
}

// TestRedisNotNowRepliesAre503: classify's list of Redis replies that
// mean "not now" (failure.go, redisBusy) missed two common outage replies,
// which became 500 "internal error", logged at error level as a bug,
// instead of the 503 of every other Redis availability problem:
//   - MISCONF (stop-writes-on-bgsave-error: the disk is full or failing,
//     every write is refused until it is fixed; the sibling of OOM and
//     READONLY, which are in the list);
//   - "ERR max number of clients reached", which Redis at maxclients sends
//     on a new connection before closing it (here: Redis restarted at its
//     connection limit; rueidis reports the handshake reply).
//
// README: "Every endpoint that uses Redis … answers 503 when Redis cannot
// be reached …, and 500 only for a failure that is neither the client's
// nor Redis's availability."
func TestRedisNotNowRepliesAre503(t *testing.T) {
	t.Run("MISCONF", func(t *testing.T) {
		b := testredis.Mini(t)
		f := newFixture(t, b)
		b.Mini.SetError("MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk. " +
			"Commands that may modify the data set are disabled, because this instance is configured to report errors during writes if RDB snapshotting fails (stop-writes-on-bgsave-error option).")
		t.Cleanup(func() { b.Mini.SetError("") }) // before the fixture's cleanup, which uses Redis
		rec := f.do(newSigned(`{"userId":"a","score":1}`).request())
		if rec.Code != http.StatusServiceUnavailable {
			t.Errorf("submit while Redis refuses writes (MISCONF): %d %s, want 503", rec.Code, strings.TrimSpace(rec.Body.String()))
		}
	})
	t.Run("maxclients", func(t *testing.T) {
		b := testredis.Mini(t)
		f := newFixture(t, b)
		f.submit("a", 1)
		b.Mini.Close()
		b.Mini.SetError("ERR max number of clients reached")
		if err := b.Mini.Restart(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Mini.SetError("") })
		// The first tries meet the cut connections (EOF: 503); the next
		// ones the refused handshake.
		for i := range 5 {
			rec := f.get("/api/v1/leaderboard?limit=5")
			if rec.Code == http.StatusInternalServerError {
				t.Errorf("try %d, Redis at maxclients: %d %s, want 503", i, rec.Code, strings.TrimSpace(rec.Body.String()))
				break
			}
		}
	})
}
