package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
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

func TestEventsBadQuery(t *testing.T) {
	f := newFixture(t, testredis.Mini(t))
	wantError(t, f.get("/api/v1/events?window=daily"), http.StatusBadRequest, "window")
}
