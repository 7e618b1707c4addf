package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe to read while run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// instance is the program running as main runs it.
type instance struct {
	base   string // http://127.0.0.1:port
	key    []byte // the development signing key it printed
	cancel context.CancelFunc
	done   chan struct{} // closed when run has returned
	err    error         // what run returned
}

// stop ends the program, as a signal does, and returns what run returned.
func (p *instance) stop() error {
	p.cancel()
	<-p.done
	return p.err
}

// started runs the service as main does, on a free port and an embedded
// Redis, and reads its address and development key from what it prints.
func started(t *testing.T) *instance {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	p := &instance{cancel: cancel, done: make(chan struct{})}
	var stdout, stderr syncBuffer
	go func() {
		defer close(p.done)
		p.err = run(ctx, []string{"-addr", "127.0.0.1:0"}, envOf(nil), &stdout, &stderr)
	}()
	t.Cleanup(func() { _ = p.stop() })
	urlRe := regexp.MustCompile(`page:\s+(http://\S+)/`)
	keyRe := regexp.MustCompile(`SIGNING_KEYS=dev:([0-9a-f]{64})`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		out := stdout.String()
		u, k := urlRe.FindStringSubmatch(out), keyRe.FindStringSubmatch(out)
		if u != nil && k != nil {
			p.base, p.key = u[1], []byte(k[1])
			return p
		}
		select {
		case <-p.done:
			t.Fatalf("run returned %v early; stdout %q stderr %q", p.err, out, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner within 10s: %q", out)
		}
	}
}

// TestRunGracefulShutdown starts the real program, then shuts it down while
// a submission is half sent and an event stream is open: the submission
// still succeeds, the stream ends, and run returns nil.
func TestRunGracefulShutdown(t *testing.T) {
	p := started(t)
	base := p.base
	if resp, err := http.Get(base + "/healthz"); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz: %v %v", resp, err)
	}

	stream, err := http.Get(base + "/api/v1/events")
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	events := readEvents(stream)
	nextEvent(t, events, "hello")

	// A signed submit whose body arrives in two parts.
	body := `{"userId":"in-flight","score":77}`
	ts := strconv.FormatInt(time.Now().Unix(), 10)
	nonce := newNonce()
	pr, pw := io.Pipe()
	req, _ := http.NewRequest(http.MethodPost, base+"/api/v1/scores", pr)
	req.ContentLength = int64(len(body))
	req.Header.Set(headerKeyID, "dev")
	req.Header.Set(headerTimestamp, ts)
	req.Header.Set(headerNonce, nonce)
	req.Header.Set(headerSignature, sign(p.key, http.MethodPost, "/api/v1/scores", ts, nonce, []byte(body)))
	type result struct {
		code int
		body string
		err  error
	}
	answered := make(chan result, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			answered <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		answered <- result{code: resp.StatusCode, body: string(b)}
	}()
	if _, err := io.WriteString(pw, body[:10]); err != nil {
		t.Fatal(err)
	}
	// Wait until the server is reading that body: in flight are the event
	// stream, the metrics request itself, and the submit.
	inFlight := regexp.MustCompile(`(?m)^leaderboard_http_requests_in_flight (\d+)$`)
	for deadline := time.Now().Add(10 * time.Second); ; {
		resp, err := http.Get(base + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		text, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if m := inFlight.FindSubmatch(text); m != nil && string(m[1]) == "3" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the submit never got in flight:\n%s", text)
		}
		time.Sleep(10 * time.Millisecond)
	}

	p.cancel()         // as SIGTERM does
	for range events { // the stream is ended by the shutdown
	}
	select {
	case <-p.done:
		t.Fatalf("run returned %v with a request in flight", p.err)
	case <-time.After(200 * time.Millisecond):
	}
	if _, err := io.WriteString(pw, body[10:]); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	res := <-answered
	if res.err != nil || res.code != http.StatusOK || !strings.Contains(res.body, `"userId":"in-flight"`) {
		t.Fatalf("in-flight submit: %d %q %v", res.code, res.body, res.err)
	}
	select {
	case <-p.done:
		if p.err != nil {
			t.Fatalf("run: %v", p.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("run did not return within 5s of the last request")
	}
	if _, err := http.Get(base + "/healthz"); err == nil {
		t.Fatal("still serving after shutdown")
	}
}

func TestRunRefusesRedisWithoutKeys(t *testing.T) {
	err := run(context.Background(), nil, envOf(map[string]string{"REDIS_URL": "redis://127.0.0.1:1"}), io.Discard, io.Discard)
	if err == nil {
		t.Fatal("run with an unreachable REDIS_URL and no keys returned nil")
	}
	if !strings.Contains(err.Error(), "SIGNING_KEYS is required") {
		t.Fatalf("error %q, want it to ask for SIGNING_KEYS", err)
	}
	// With keys, an unreachable Redis is the error.
	env := map[string]string{"REDIS_URL": "redis://:pw@127.0.0.1:1", "SIGNING_KEYS": "k:" + strings.Repeat("s", 32)}
	err = run(context.Background(), nil, envOf(env), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "redis at redis://***@127.0.0.1:1") {
		t.Fatalf("error %v, want the redacted address", err)
	}
}

func TestLoadConfig(t *testing.T) {
	secret := strings.Repeat("s", 32)
	c, err := loadConfig(nil, envOf(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:8080" || c.RedisURL != "" || c.Board != "game" || c.MaxScore != 1e9 || len(c.Keys) != 0 || c.Skew != 5*time.Minute {
		t.Fatalf("defaults: %+v", c)
	}
	env := envOf(map[string]string{
		"ADDR": "127.0.0.1:9000", "REDIS_URL": "redis://r:6379", "BOARD": "arena",
		"SCORE_MIN": "-5", "SCORE_MAX": "100", "SIGNING_KEYS": "new:" + secret + ", old:" + secret + "x",
		"SUBMIT_RATE": "0.5", "SUBMIT_BURST": "3", "SIGNATURE_SKEW": "30s",
	})
	c, err = loadConfig(nil, env, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9000" || c.RedisURL != "redis://r:6379" || c.Board != "arena" || c.MinScore != -5 || c.MaxScore != 100 ||
		string(c.Keys["new"]) != secret || string(c.Keys["old"]) != secret+"x" || c.Rate != 0.5 || c.Burst != 3 || c.Skew != 30*time.Second {
		t.Fatalf("from the environment: %+v", c)
	}
	// A flag beats the environment.
	if c, err = loadConfig([]string{"-addr", ":7000", "-max-score", "50"}, env, io.Discard); err != nil || c.Addr != ":7000" || c.MaxScore != 50 {
		t.Fatalf("flags: %+v %v", c, err)
	}

	for name, bad := range map[string]struct {
		args []string
		env  map[string]string
	}{
		"short secret":       {env: map[string]string{"SIGNING_KEYS": "k:short"}},
		"no secret":          {env: map[string]string{"SIGNING_KEYS": "k"}},
		"bad key id":         {env: map[string]string{"SIGNING_KEYS": "a b:" + secret}},
		"key twice":          {env: map[string]string{"SIGNING_KEYS": "k:" + secret + ",k:" + secret}},
		"min above max":      {args: []string{"-min-score", "10", "-max-score", "5"}},
		"score not a number": {env: map[string]string{"SCORE_MAX": "lots"}},
		"infinite bound":     {env: map[string]string{"SCORE_MAX": "+Inf"}},
		"zero rate":          {args: []string{"-rate", "0"}},
		"zero burst":         {env: map[string]string{"SUBMIT_BURST": "0"}},
		"tiny skew":          {args: []string{"-skew", "1ms"}},
		"bad duration":       {env: map[string]string{"SIGNATURE_SKEW": "soon"}},
		"bad level":          {args: []string{"-log-level", "loud"}},
		"bad format":         {args: []string{"-log-format", "xml"}},
		"stray argument":     {args: []string{"serve"}},
		"unknown flag":       {args: []string{"-port", "80"}},
	} {
		if _, err := loadConfig(bad.args, envOf(bad.env), io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows a secret: %v", name, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"redis://127.0.0.1:6379":           "redis://127.0.0.1:6379",
		"redis://user:pw@host:6379/0":      "redis://***@host:6379/0",
		"rediss://:p@ss@host:6380":         "rediss://***@host:6380",
		"unix:///run/redis.sock":           "unix:///run/redis.sock",
		"redis://default:secret@localhost": "redis://***@localhost",
	} {
		if got := redact(in); got != want {
			t.Errorf("redact(%q) = %q, want %q", in, got, want)
		}
	}
}
