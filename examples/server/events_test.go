package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// sseEvent is one server-sent event.
type sseEvent struct{ name, data string }

// readEvents sends the events of an open stream to a channel until it ends.
func readEvents(resp *http.Response) <-chan sseEvent {
	ch := make(chan sseEvent, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(resp.Body)
		var ev sseEvent
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if ev.name != "" {
					ch <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, "event: "):
				ev.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				ev.data = strings.TrimPrefix(line, "data: ")
			}
		}
	}()
	return ch
}

func nextEvent(t *testing.T, ch <-chan sseEvent, name string) sseEvent {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("stream ended before a %q event", name)
			}
			if ev.name == name {
				return ev
			}
		case <-timeout:
			t.Fatalf("no %q event within 5s", name)
		}
	}
}

func TestEvents(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		f := newFixture(t, b)
		ts := httptest.NewServer(f.h)
		defer ts.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/v1/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		events := readEvents(resp)
		nextEvent(t, events, "hello")
		// The subscription may start a moment after the stream: submit
		// until an event comes, as a game would keep doing.
		deadline := time.Now().Add(5 * time.Second)
		var ev sseEvent
		for got := false; !got; {
			f.submit("live-1", 42)
			select {
			case ev = <-events:
				got = ev.name == "scores"
			case <-time.After(500 * time.Millisecond):
			}
			if time.Now().After(deadline) {
				t.Fatal("no scores event within 5s of submits")
			}
		}
		var c change
		if err := json.Unmarshal([]byte(ev.data), &c); err != nil || c.UserID != "live-1" || c.Score != 42 || c.Count < 1 {
			t.Fatalf("event data %q (%v)", ev.data, err)
		}
		if n := f.srv.hub.count(); n != 1 {
			t.Fatalf("%d streams open, want 1", n)
		}
		// Closing the hub, as a shutdown does, ends the stream.
		f.srv.close()
		for range events {
		}
		if rec := f.get("/api/v1/events"); rec.Code != http.StatusServiceUnavailable {
			t.Fatalf("stream after close: %d", rec.Code)
		}
	})
}

// TestEventsRedisDown: a stream lives on the instance's subscription to
// board changes, so while Redis is gone a new stream is refused with 503,
// as every endpoint that uses Redis is, and opens again once Redis is back
// and the subscription with it.
func TestEventsRedisDown(t *testing.T) {
	b := testredis.Mini(t)
	f := newFixture(t, b, func(c *config) { c.RedisTimeout = 300 * time.Millisecond })
	// A stream that opens lasts until its request's context ends.
	open := func() *httptest.ResponseRecorder {
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		return f.do(httptest.NewRequest(http.MethodGet, "/api/v1/events", nil).WithContext(ctx))
	}
	until := func(status int, what string) *httptest.ResponseRecorder {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); ; {
			rec := open()
			if rec.Code == status {
				return rec
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d %q, want %d", what, rec.Code, rec.Body, status)
			}
		}
	}
	until(http.StatusOK, "Redis up")
	b.Mini.Close()
	down := true
	t.Cleanup(func() { // before the fixture's, which needs Redis
		if down {
			b.Mini.Restart()
		}
	})
	wantError(t, until(http.StatusServiceUnavailable, "Redis gone"), http.StatusServiceUnavailable, "")
	if n := f.srv.hub.count(); n != 0 {
		t.Fatalf("%d streams held after refusals, want 0", n)
	}
	b.Mini.Restart()
	down = false
	until(http.StatusOK, "Redis back")
}

func TestEventsBadQuery(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	wantError(t, f.get("/api/v1/events?window=daily"), http.StatusBadRequest, "window")
}

// TestEventsPerClientCap: one client address holds at most its share of
// the streams (429 past it, the client's doing); another client still gets
// one, and a closed stream frees its slot.
func TestEventsPerClientCap(t *testing.T) {
	f := newFixture(t, testredis.Mini(t), func(c *config) { c.StreamsPerClient = 2 })
	ts := httptest.NewServer(f.h) // every request from 127.0.0.1
	defer ts.Close()
	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/api/v1/events", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp, func() { cancel(); resp.Body.Close() }
	}
	var closers []context.CancelFunc
	defer func() {
		for _, c := range closers {
			c()
		}
	}()
	for i := range 2 {
		resp, done := open()
		closers = append(closers, done)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("stream %d: %d", i, resp.StatusCode)
		}
		nextEvent(t, readEvents(resp), "hello")
	}
	resp, done := open()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("third stream from one address: %d, Retry-After %q; want 429 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	done()

	// Another address is not held back by the first one's streams.
	r := httptest.NewRequest(http.MethodGet, "/api/v1/events", nil)
	r.RemoteAddr = "192.0.2.7:5555"
	ctx, cancel := context.WithCancel(context.Background())
	rec := httptest.NewRecorder()
	served := make(chan struct{})
	go func() { f.h.ServeHTTP(rec, r.WithContext(ctx)); close(served) }()
	for deadline := time.Now().Add(5 * time.Second); f.srv.hub.count() != 3; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open, want 3", f.srv.hub.count())
		}
	}
	cancel()
	<-served
	if rec.Code != http.StatusOK {
		t.Fatalf("stream from another address: %d", rec.Code)
	}

	// A closed stream gives its slot back.
	closers[0]()
	for deadline := time.Now().Add(5 * time.Second); f.srv.hub.count() != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d streams open after one closed, want 1", f.srv.hub.count())
		}
	}
	resp, done = open()
	closers = append(closers, done)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream after one closed: %d", resp.StatusCode)
	}
}

func TestClientAddr(t *testing.T) {
	for in, want := range map[string]string{
		"192.0.2.1:1234":             "192.0.2.1",
		"[::ffff:192.0.2.1]:1234":    "192.0.2.1",
		"[2001:db8:1:2:3:4:5:6]:443": "2001:db8:1:2::/64",
		"[2001:db8:1:2:ffff::1]:443": "2001:db8:1:2::/64",
		"[fe80::1%eth0]:80":          "fe80::/64",
		"not an address":             "not an address",
		"@":                          "@",
	} {
		if got := clientAddr(in); got != want {
			t.Errorf("clientAddr(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEventsHEAD: a HEAD of the stream answers its headers and ends, so it
// holds no stream slot, and the next request on the same keep-alive
// connection is answered.
func TestEventsHEAD(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	ts := httptest.NewServer(f.h)
	defer ts.Close()
	c, err := net.Dial("tcp", ts.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	_, _ = io.WriteString(c, "HEAD /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(c)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodHead})
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("HEAD: %d, Content-Type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	resp, err = http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("GET /healthz after a HEAD of the stream on one connection: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /healthz: %d", resp.StatusCode)
	}
	if n := f.srv.hub.count(); n != 0 {
		t.Fatalf("%d streams held after a HEAD, want 0", n)
	}
}

// TestEventsBodyRefused: a stream takes no body. One announced but never
// sent held the handler in net/http's read of it, with the stream's read
// deadline lifted: no answer, a stream slot and a goroutine held while the
// connection lasted, and a shutdown that waited its whole timeout. It is
// refused at once with 400, and the slot is free.
func TestEventsBodyRefused(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	addr := serveHTTP(t, f)
	for _, req := range []string{
		"GET /api/v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
		"GET /api/v1/events HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n",
		"HEAD /api/v1/events HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n",
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = c.SetDeadline(time.Now().Add(2 * time.Second))
		_, _ = io.WriteString(c, req)
		method := strings.Fields(req)[0]
		resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: method})
		if err != nil {
			c.Close()
			t.Fatalf("%.60q: no answer within 2s: %v (streams open: %d)", req, err, f.srv.hub.count())
		}
		body, _ := io.ReadAll(resp.Body)
		c.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Fatalf("%.60q: %d %s, want 400", req, resp.StatusCode, body)
		}
		if method == http.MethodGet {
			var e errorBody
			if err := json.Unmarshal(body, &e); err != nil || e.Field != "body" {
				t.Fatalf("%.60q: body %s (%v), want a JSON error on the field body", req, body, err)
			}
		}
		if n := f.srv.hub.count(); n != 0 {
			t.Fatalf("%.60q: %d streams held, want 0", req, n)
		}
	}
}

// TestEventsClientsLeaveNoLeak: streams whose clients go away, on their
// own connections, give back their slots and goroutines.
func TestEventsClientsLeaveNoLeak(t *testing.T) {
	f := newFixture(t, testredis.Mini(t), func(c *config) { c.StreamsPerClient = 50 })
	addr := serveHTTP(t, f)
	time.Sleep(100 * time.Millisecond) // the hub's goroutines start
	base := runtime.NumGoroutine()
	for round := range 3 {
		var conns []net.Conn
		for range 20 {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			_ = c.SetDeadline(time.Now().Add(3 * time.Second))
			_, _ = io.WriteString(c, "GET /api/v1/events HTTP/1.1\r\nHost: x\r\n\r\n")
			br := bufio.NewReader(c)
			if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, " 200 ") {
				t.Fatalf("round %d: %q %v", round, line, err)
			}
			conns = append(conns, c)
		}
		if n := f.srv.hub.count(); n != 20 {
			t.Fatalf("round %d: %d streams open, want 20", round, n)
		}
		for _, c := range conns {
			c.Close()
		}
		deadline := time.Now().Add(5 * time.Second)
		for f.srv.hub.count() > 0 || runtime.NumGoroutine() > base+2 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d streams and %d goroutines (%d before) 5s after the clients left",
					round, f.srv.hub.count(), runtime.NumGoroutine(), base)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}
