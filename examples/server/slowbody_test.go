package main

import (
	"bufio"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestSlowBodyIs400: a client still connected whose submission's body does
// not arrive within the server's read timeout was too slow, not gone: it
// gets a 400 naming the body, counted as invalid (bodyCut: "A read that
// timed out stays a 400"). net/http cancels the request's context on any
// failed read of the connection, the timeout included, so a context that
// ended is no sign of a client gone when the read timed out; the service
// answered 499 "client closed request" to a client that was there to read
// it.
func TestSlowBodyIs400(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	hs := newHTTPServer(f.srv, slog.New(slog.DiscardHandler))
	hs.ReadTimeout = 300 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Less body than announced, and the rest never comes.
	fmt.Fprintf(c, "POST /api/v1/scores HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"userId\":")
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	res, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer to a slow body: %v", err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("body slower than the read timeout: %d %s, want 400 (the client is still there)", res.StatusCode, body)
	}
	metrics := f.get("/metrics").Body.String()
	if !strings.Contains(metrics, `leaderboard_submits_total{outcome="invalid"} 1`) {
		t.Errorf("want the slow submission counted as invalid:\n%s", grepLines(metrics, "leaderboard_submits_total"))
	}
}

// grepLines keeps the lines of text that hold s.
func grepLines(text, s string) string {
	var out []string
	for line := range strings.Lines(text) {
		if strings.Contains(line, s) {
			out = append(out, strings.TrimSpace(line))
		}
	}
	return strings.Join(out, "\n")
}
