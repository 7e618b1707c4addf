package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testredis"
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
	if err == nil || !strings.Contains(err.Error(), "redis at redis://xxxxx@127.0.0.1:1") {
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
		// slog's parser takes these; README lists debug, info, warn, error.
		"level with offset": {args: []string{"-log-level", "debug+3"}},
		"level below one":   {env: map[string]string{"LOG_LEVEL": "warn-4"}},
		"level in capitals": {env: map[string]string{"LOG_LEVEL": "INFO"}},
		"bad format":        {args: []string{"-log-format", "xml"}},
		"stray argument":    {args: []string{"serve"}},
		// `server $SIGNING_KEYS`: the argument is shown redacted as a
		// URL, and the secret reads as a port that is not a number.
		"signing keys as an argument": {args: []string{"k:" + secret}},
		"two keys as an argument":     {args: []string{"k:" + secret + ",j:" + secret}},
		"a key with a slash":          {args: []string{"k:" + secret[:8] + "/" + secret}},
		"unknown flag":                {args: []string{"-port", "80"}},
		// The span of the bounds is subtracted (the chart's bins): it must
		// be a float64.
		"bounds span overflows":             {env: map[string]string{"SCORE_MIN": "-1.7976931348623157e308", "SCORE_MAX": "1.7976931348623157e308"}},
		"bounds span overflows by a little": {args: []string{"-min-score", "-1e308", "-max-score", "1e308"}},
		// A rate this small makes the bucket's waits and expiries
		// overflow what Redis takes.
		"tiny rate":          {args: []string{"-rate", "1e-300"}},
		"huge rate":          {args: []string{"-rate", "1e7"}},
		"huge burst":         {args: []string{"-burst", "1000001"}},
		"no streams":         {env: map[string]string{"STREAMS_PER_CLIENT": "0"}},
		"too many streams":   {args: []string{"-streams-per-client", "1001"}},
		"zero redis timeout": {args: []string{"-redis-timeout", "0s"}},
		"long redis timeout": {env: map[string]string{"REDIS_TIMEOUT": "1m"}},
		"secret as a key id": {env: map[string]string{"SIGNING_KEYS": secret + ":short"}},
	} {
		if _, err := loadConfig(bad.args, envOf(bad.env), io.Discard); err == nil {
			t.Errorf("%s: no error", name)
		} else if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows a secret: %v", name, err)
		}
	}
	// Wide bounds whose span is a float64 are fine.
	if _, err := loadConfig([]string{"-min-score", "-8e307", "-max-score", "8e307"}, envOf(nil), io.Discard); err != nil {
		t.Errorf("bounds of ±8e307: %v", err)
	}
	// Every bad setting is reported at once.
	_, err = loadConfig([]string{"-rate", "0", "-burst", "0", "-log-format", "xml"}, envOf(nil), io.Discard)
	for _, want := range []string{"rate", "burst", "log format"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not report the %s", err, want)
		}
	}
}

// TestBadAddrOrBoardNamesSetting: a listen address or board name that
// cannot work stops the server at start with an error naming the setting,
// before Redis is dialled; so does a listen address that is taken.
func TestBadAddrOrBoardNamesSetting(t *testing.T) {
	redis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer redis.Close()
	dialled := make(chan struct{}, 1)
	go func() {
		if c, err := redis.Accept(); err == nil {
			c.Close()
			dialled <- struct{}{}
		}
	}()
	for _, c := range []struct{ setting, env, flag, value string }{
		{"ADDR", "ADDR", "-addr", "nonsense"},
		{"ADDR", "ADDR", "-addr", "127.0.0.1:99999"},
		{"ADDR", "ADDR", "-addr", "127.0.0.1:http"},
		{"ADDR", "ADDR", "-addr", "[::1:80"},
		{"BOARD", "BOARD", "-board", "a b"},
		{"BOARD", "BOARD", "-board", "x{y}"},
		{"BOARD", "BOARD", "-board", "h#1"},
		{"BOARD", "BOARD", "-board", "nul\x00"},
		{"BOARD", "BOARD", "-board", "bad\xffutf8"},
		{"BOARD", "BOARD", "-board", strings.Repeat("b", 201)},
	} {
		for _, byFlag := range []bool{false, true} {
			env := map[string]string{"REDIS_URL": "redis://" + redis.Addr().String(), "SIGNING_KEYS": "k:" + strings.Repeat("s", 32)}
			var args []string
			if byFlag {
				args = []string{c.flag, c.value}
			} else {
				env[c.env] = c.value
			}
			err := run(context.Background(), args, envOf(env), io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.setting) || !strings.Contains(err.Error(), c.flag) {
				t.Errorf("%s=%q (flag %v): error %v does not name %s and %s", c.env, c.value, byFlag, err, c.setting, c.flag)
			}
		}
	}
	select {
	case <-dialled:
		t.Error("a bad setting dialled Redis")
	case <-time.After(100 * time.Millisecond):
	}
	// An empty -addr or -board is no default.
	for _, args := range [][]string{{"-addr", ""}, {"-board", ""}} {
		if _, err := loadConfig(args, envOf(nil), io.Discard); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	// A port in use fails at Listen, named all the same.
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	err = run(context.Background(), nil, envOf(map[string]string{"ADDR": taken.Addr().String()}), io.Discard, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "ADDR") {
		t.Errorf("ADDR in use: error %v does not name ADDR", err)
	}
}

// TestBoardNamesAsTheSDK: the board names refused at start are those
// leaderboard.New refuses, which it did only once Redis was dialled.
func TestBoardNamesAsTheSDK(t *testing.T) {
	client := testredis.Mini(t).Client
	for _, name := range []string{"game", "a b", "x{y}", "h#1", "", "é", "tab\t", "nul\x00", "zero\u200bwidth", "a:b", "\xff"} {
		_, sdkErr := leaderboard.New(client, name)
		if _, err := loadConfig([]string{"-board", name}, envOf(nil), io.Discard); (err == nil) != (sdkErr == nil) {
			t.Errorf("board %q: loadConfig %v, leaderboard.New %v", name, err, sdkErr)
		}
	}
}

// TestRedisURLSecrets: whatever is wrong with REDIS_URL, the error names
// it without the password, or any piece of it.
func TestRedisURLSecrets(t *testing.T) {
	const pw = "Sup3rSecretPw"
	keys := "k:" + strings.Repeat("s", 32)
	for _, u := range []string{
		"redis://user:" + pw + "@127.0.0.1:6379x",                   // bad port
		"redis://user:" + pw + "%zz@127.0.0.1:6379",                 // bad escape in the password
		"redis://user:" + pw[:4] + "/" + pw[4:] + "@127.0.0.1:6379", // a '/' in the password cuts the host
		"redis://user:" + pw + "@127.0.0.1:6379/db0",                // bad database
		"redis://user:" + pw + "@127.0.0.1:6379/0/1",                // bad path
		"http://user:" + pw + "@127.0.0.1:6379",                     // bad scheme
		"redis://user:" + pw + "@127.0.0.1:1",                       // unreachable
		"redis://user:" + pw + "@127.0.0.1:6379?dial_timeout=soon",
		" redis://user:" + pw + "@127.0.0.1:6379", // a leading space
		"redis://user:" + pw + "@[::1:6379",       // bad IPv6 literal
		// A secret in the query, which rueidis ignores: unreachable, then
		// malformed, in several spellings.
		"redis://127.0.0.1:1?password=" + pw,
		"redis://127.0.0.1:1/?db=0&Pass=" + pw + "&client_name=x",
		"redis://127.0.0.1:6379/db0?token=" + pw,
		"redis://127.0.0.1:6379?dial_timeout=soon&secret=" + pw,
		"redis://127.0.0.1:1?%70assword=" + pw, // %70 is p
		"redis://127.0.0.1:1?x=1#" + pw,
		"redis://127.0.0.1:1#" + pw,
		// An '@' in a secret query value or the fragment, which once
		// passed for the end of a user part and showed the rest.
		"redis://127.0.0.1:1/?password=" + pw[:4] + "@" + pw[4:],
		"redis://127.0.0.1:1/#" + pw[:4] + "@" + pw[4:],
		"redis://user:" + pw[:4] + "?" + pw[4:] + "@127.0.0.1:6379", // '?' in the password
		// The host left out: the password reads as a port.
		"redis://default:" + pw,
		"redis://:" + pw + "/0",
	} {
		var logs bytes.Buffer
		err := run(context.Background(), nil, envOf(map[string]string{"REDIS_URL": u, "SIGNING_KEYS": keys}), &logs, &logs)
		if err == nil {
			t.Errorf("%q: no error", u)
			continue
		}
		for _, piece := range []string{pw, pw[:4], pw[4:]} {
			if strings.Contains(err.Error(), piece) || strings.Contains(logs.String(), piece) {
				t.Errorf("%q: the error or output shows %q: %v\n%s", u, piece, err, &logs)
			}
		}
		if !strings.Contains(err.Error(), "REDIS_URL") && !strings.Contains(err.Error(), "redis at") {
			t.Errorf("%q: error %v does not say which setting", u, err)
		}
	}
}

// TestRedisURLQuerySecretInBanner: a password given in REDIS_URL's query
// (which rueidis ignores) is not printed in the banner or the logs of a
// server that starts.
func TestRedisURLQuerySecretInBanner(t *testing.T) {
	b := testredis.Real(t) // skips, or fails under CI=true, without one
	const pw = "Sup3rSecretPw"
	parsed, err := url.Parse(testredis.URL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	parsed.RawQuery = "client_name=srv-test&password=" + pw
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		env := map[string]string{"REDIS_URL": parsed.String(), "SIGNING_KEYS": "k:" + strings.Repeat("s", 32), "BOARD": b.BoardName(t)}
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, envOf(env), &stdout, &stderr)
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stderr.String(), "listening"); {
		select {
		case err := <-done:
			t.Fatalf("run: %v\n%s", err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("not listening within 10s: %s", stderr.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	if out := stdout.String() + stderr.String(); strings.Contains(out, pw) || !strings.Contains(out, "password=xxxxx") {
		t.Errorf("output shows the password, or not its redacted form:\n%s", out)
	}
}

// TestRedisURLTrailingSlash: redis://host:port/ is the default database,
// as it is for redis-cli; rueidis.ParseURL alone refuses it.
func TestRedisURLTrailingSlash(t *testing.T) {
	for _, u := range []string{"redis://127.0.0.1:6379/", "redis://:pw@127.0.0.1:6379/", "rediss://h:6380/"} {
		opt, err := redisurl.Parse(u)
		if err != nil || opt.SelectDB != 0 || len(opt.InitAddress) != 1 {
			t.Errorf("%q: %+v %v", u, opt.InitAddress, err)
		}
	}
	if opt, err := redisurl.Parse("redis://127.0.0.1:6379/3"); err != nil || opt.SelectDB != 3 {
		t.Errorf("database 3: %d %v", opt.SelectDB, err)
	}
	// And the server starts on it: the test Redis's URL with "/" as its
	// path.
	testredis.Real(t) // skips, or fails under CI=true, without one
	parsed, err := url.Parse(testredis.URL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	parsed.Path, parsed.RawQuery = "/", ""
	u := parsed.String()
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-addr", "127.0.0.1:0"}, envOf(map[string]string{"REDIS_URL": u, "SIGNING_KEYS": "k:" + strings.Repeat("s", 32)}), &stdout, &stderr)
	}()
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(stdout.String(), "page:"); {
		select {
		case err := <-done:
			t.Fatalf("run with %s: %v\n%s", u, err, stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no banner: %s", stdout.String())
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
}

// TestRunHelp: -h prints the usage and touches nothing: no Redis dialled,
// no port listened on.
func TestRunHelp(t *testing.T) {
	redis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer redis.Close()
	dialled := make(chan struct{}, 1)
	go func() {
		if c, err := redis.Accept(); err == nil {
			c.Close()
			dialled <- struct{}{}
		}
	}()
	// A port to listen on, free again: -h must leave it free.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, args := range [][]string{{"-h"}, {"-help"}, {"--help"}, {"-addr", addr, "-h"}} {
		var stdout, stderr bytes.Buffer
		env := envOf(map[string]string{"REDIS_URL": "redis://" + redis.Addr().String(), "SIGNING_KEYS": "k:" + strings.Repeat("s", 32), "ADDR": addr})
		done := make(chan error, 1)
		go func() { done <- run(context.Background(), args, env, &stdout, &stderr) }()
		select {
		case err := <-done:
			if !errors.Is(err, flag.ErrHelp) {
				t.Errorf("%v: %v, want flag.ErrHelp", args, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%v: still running after 5s", args)
		}
		if !strings.Contains(stderr.String(), "Usage: server") || !strings.Contains(stderr.String(), "-streams-per-client") || stdout.Len() != 0 {
			t.Errorf("%v: stdout %q, stderr %q", args, &stdout, &stderr)
		}
	}
	select {
	case <-dialled:
		t.Error("-h dialled Redis")
	case <-time.After(100 * time.Millisecond):
	}
	if l, err := net.Listen("tcp", addr); err != nil {
		t.Errorf("-h left %s taken: %v", addr, err)
	} else {
		l.Close()
	}
}

// serveHTTP serves f's service as run does, on a free port, until the test
// ends; it returns the address.
func serveHTTP(t *testing.T, f *fixture) string {
	t.Helper()
	hs := newHTTPServer(f.srv, slog.New(slog.DiscardHandler))
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// rawRequest sends req, as written, on a new connection to addr and reads
// the answer.
func rawRequest(t *testing.T, addr, req string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	_, _ = io.WriteString(c, req)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.50q: %v", req, err)
	}
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// TestRequestsNetHTTPAnswers pins what README says of the requests that
// are no path: "*" and a CONNECT's host:port are answered by the service
// in JSON, with Allow for the 405; and of those net/http answers before
// the service sees them, in plain text (or no body), which the service
// cannot change: 431, 400 for a bad escape in the path, 417, and the two
// 5xx for a client's fault, 501 and 505.
func TestRequestsNetHTTPAnswers(t *testing.T) {
	addr := serveHTTP(t, newFixture(t, testredis.Mini(t)))
	const host = " HTTP/1.1\r\nHost: x\r\n"
	for _, c := range []struct {
		req    string
		status int
		json   bool
		allow  string
	}{
		{"GET *" + host + "\r\n", http.StatusBadRequest, true, ""},
		{"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", http.StatusBadRequest, true, ""},
		{"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n", http.StatusMethodNotAllowed, true, allowedAnywhere},
		{"GET /api/v1/leaderboard?userId=" + strings.Repeat("a", 21<<10) + host + "\r\n", http.StatusRequestHeaderFieldsTooLarge, false, ""},
		{"GET /api/v1/%zz" + host + "\r\n", http.StatusBadRequest, false, ""},
		{"GET /healthz" + host + "Expect: later\r\n\r\n", http.StatusExpectationFailed, false, ""},
		{"POST /api/v1/scores" + host + "Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n", http.StatusNotImplemented, false, ""},
		{"GET /api/v1/leaderboard" + host + "Transfer-Encoding: identity\r\n\r\n", http.StatusNotImplemented, false, ""},
		{"GET /api/v1/leaderboard HTTP/2.0\r\nHost: x\r\n\r\n", http.StatusHTTPVersionNotSupported, false, ""},
	} {
		resp, body := rawRequest(t, addr, c.req)
		isJSON := strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json")
		if resp.StatusCode != c.status || isJSON != c.json || resp.Header.Get("Allow") != c.allow {
			t.Errorf("%.50q: %s, Allow %q, body %q; want %d, JSON %v, Allow %q",
				c.req, resp.Status, resp.Header.Get("Allow"), body, c.status, c.json, c.allow)
		}
	}
}

// TestWriteTimeoutCoversSlowBodyAndRedis: net/http counts the write
// timeout from the end of a request's headers, after which the body may
// take up to the read timeout and Redis up to REDIS_TIMEOUT: the 503 for a
// slow Redis must still have time to be written, at the largest
// REDIS_TIMEOUT too, not the connection be dropped without an answer.
func TestWriteTimeoutCoversSlowBodyAndRedis(t *testing.T) {
	b := testredis.Mini(t)
	for _, rt := range []time.Duration{time.Millisecond, 3 * time.Second, maxRedisTimeout} {
		f := newFixture(t, b, func(c *config) { c.RedisTimeout = rt })
		hs := newHTTPServer(f.srv, slog.New(slog.DiscardHandler))
		if hs.ReadTimeout <= 0 || hs.WriteTimeout < hs.ReadTimeout+rt+time.Second {
			t.Errorf("REDIS_TIMEOUT %v: read timeout %v, write timeout %v; want a write timeout of at least the read timeout, REDIS_TIMEOUT and a second",
				rt, hs.ReadTimeout, hs.WriteTimeout)
		}
	}
}

// TestEmbeddedRedisExpiresKeys: the embedded Redis expires keys as time
// passes, as README says of the nonce and rate-limit keys; miniredis
// alone expires them only when told to.
func TestEmbeddedRedisExpiresKeys(t *testing.T) {
	client, _, closeRedis, err := connect("")
	if err != nil {
		t.Fatal(err)
	}
	defer closeRedis()
	ctx := context.Background()
	if err := client.Do(ctx, client.B().Set().Key("k").Value("v").Px(200*time.Millisecond).Build()).Error(); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := client.Do(ctx, client.B().Exists().Key("k").Build()).AsInt64()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("a key set to expire after 200ms still exists 3s later")
		}
	}
}

// TestBadSettingErrorsNameIt: the error of a setting out of its range
// names it as it is set, the environment variable and the flag, as README
// says ("an error naming it"): "rate 0" alone does not tell SUBMIT_RATE.
func TestBadSettingErrorsNameIt(t *testing.T) {
	for _, c := range []struct {
		env        map[string]string
		name, flag string
	}{
		{map[string]string{"SCORE_MIN": "10", "SCORE_MAX": "5"}, "SCORE_MIN", "-min-score"},
		{map[string]string{"SCORE_MIN": "10", "SCORE_MAX": "5"}, "SCORE_MAX", "-max-score"},
		{map[string]string{"SUBMIT_RATE": "0"}, "SUBMIT_RATE", "-rate"},
		{map[string]string{"SUBMIT_BURST": "0"}, "SUBMIT_BURST", "-burst"},
		{map[string]string{"SIGNATURE_SKEW": "1ms"}, "SIGNATURE_SKEW", "-skew"},
		{map[string]string{"STREAMS_PER_CLIENT": "0"}, "STREAMS_PER_CLIENT", "-streams-per-client"},
		{map[string]string{"REDIS_TIMEOUT": "1m"}, "REDIS_TIMEOUT", "-redis-timeout"},
		{map[string]string{"SHUTDOWN_TIMEOUT": "-1s"}, "SHUTDOWN_TIMEOUT", "-shutdown-timeout"},
		{map[string]string{"LOG_LEVEL": "loud"}, "LOG_LEVEL", "-log-level"},
		{map[string]string{"LOG_FORMAT": "xml"}, "LOG_FORMAT", "-log-format"},
	} {
		_, err := loadConfig(nil, envOf(c.env), io.Discard)
		if err == nil || !strings.Contains(err.Error(), c.name) || !strings.Contains(err.Error(), c.flag) {
			t.Errorf("%v: error %v, want it to name %s and %s", c.env, err, c.name, c.flag)
		}
	}
}

// TestNumberSettingsStrict: a number setting float64 cannot hold is
// refused, as the API refuses such numbers, not read as another: 1e-400
// would be a bound of 0. Hex, underscores and NaN are refused too.
func TestNumberSettingsStrict(t *testing.T) {
	for _, c := range []struct {
		args []string
		env  map[string]string
	}{
		{env: map[string]string{"SCORE_MIN": "1e-400"}},
		{env: map[string]string{"SCORE_MAX": "-1e-400"}},
		{args: []string{"-max-score", "1e-400"}},
		{args: []string{"-min-score", "0x10"}},
		{env: map[string]string{"SUBMIT_RATE": "1_000"}},
		{args: []string{"-rate", "NaN"}},
		{args: []string{"-max-score", "1e400"}},
	} {
		if cfg, err := loadConfig(c.args, envOf(c.env), io.Discard); err == nil {
			t.Errorf("%v %v: no error (bounds [%v, %v], rate %v)", c.args, c.env, cfg.MinScore, cfg.MaxScore, cfg.Rate)
		}
	}
	cfg, err := loadConfig([]string{"-max-score", "2.5e3", "-rate", "0.5"}, envOf(map[string]string{"SCORE_MIN": "-1e2"}), io.Discard)
	if err != nil || cfg.MinScore != -100 || cfg.MaxScore != 2500 || cfg.Rate != 0.5 {
		t.Errorf("decimal settings: %+v %v", cfg, err)
	}
}
