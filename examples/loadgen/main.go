// Command loadgen drives the example leaderboard service (examples/server)
// with N concurrent players for a given time: each player submits signed
// scores and reads the top 10 and its own neighbourhood, as a game client
// and its game server would. At the end it prints throughput and latency
// percentiles per operation, and exits 1 if any response was neither 2xx
// nor an intended 429 (the service's per-player rate limit).
//
//	export SIGNING_KEYS=dev:...   # printed by go run ./examples/server
//	go run ./examples/loadgen -players 50 -duration 20s
//
// It only talks to a loopback address unless -allow-remote is given, and
// stops after -duration or -max-requests, whichever comes first.
//
// It uses the standard library only, so it lives in the SDK's module and
// signs requests with its own code: a second implementation of the scheme
// in examples/server/README.md, which the server's tests run against the
// server.
package main

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"
)

// Hard bounds, whatever the flags say: this is a tool for a developer's
// machine, not a way to flood anything.
const (
	maxPlayers     = 1000
	maxDuration    = 10 * time.Minute
	maxRequestsCap = 10_000_000
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr))
}

type options struct {
	base        *url.URL
	players     int
	duration    time.Duration
	maxRequests int64
	reads       float64
	prefix      string
	minScore    float64
	maxScore    float64
	timeout     time.Duration
	allowRemote bool
	keyID       string
	secret      []byte
	seed        uint64
}

func parse(args []string, getenv func(string) string, stderr io.Writer) (options, error) {
	var o options
	var rawURL, keyID string
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defineFlags(fs, &o, &rawURL, &keyID)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var errs []error
	if fs.NArg() > 0 {
		// Not shown: `loadgen $SIGNING_KEYS` is an easy slip, and no
		// error shows a secret.
		errs = append(errs, fmt.Errorf("%d unexpected arguments after the flags (not shown: one may be a secret)", fs.NArg()))
	}
	var err error
	if o.base, err = baseURL(rawURL, o.allowRemote); err != nil {
		errs = append(errs, err)
	}
	if o.players < 1 || o.players > maxPlayers {
		errs = append(errs, fmt.Errorf("-players %d: want 1..%d", o.players, maxPlayers))
	}
	if o.duration <= 0 || o.duration > maxDuration {
		errs = append(errs, fmt.Errorf("-duration %v: want more than 0, at most %v", o.duration, maxDuration))
	}
	if o.maxRequests < 1 || o.maxRequests > maxRequestsCap {
		errs = append(errs, fmt.Errorf("-max-requests %d: want 1..%d", o.maxRequests, maxRequestsCap))
	}
	if !(o.reads >= 0 && o.reads <= 1) {
		errs = append(errs, fmt.Errorf("-reads %v: want 0..1", o.reads))
	}
	// Scores are drawn from the span max - min: one that overflows would
	// make every score NaN, which the service refuses.
	if !(o.minScore <= o.maxScore) || math.IsInf(o.maxScore-o.minScore, 0) {
		errs = append(errs, fmt.Errorf("score range [%v, %v]: want finite, min <= max, and max - min within float64", o.minScore, o.maxScore))
	}
	if err := checkPrefix(o.prefix, o.players); err != nil {
		errs = append(errs, err)
	}
	if o.timeout <= 0 {
		errs = append(errs, fmt.Errorf("-timeout %v: want more than 0", o.timeout))
	}
	o.keyID, o.secret, err = pickKey(getenv("SIGNING_KEYS"), keyID)
	if err != nil {
		errs = append(errs, err)
	}
	return o, errors.Join(errs...)
}

// defineFlags defines loadgen's flags on fs, into o, rawURL and keyID.
func defineFlags(fs *flag.FlagSet, o *options, rawURL, keyID *string) {
	fs.StringVar(rawURL, "url", "http://127.0.0.1:8080", "base URL of the service")
	fs.IntVar(&o.players, "players", 20, fmt.Sprintf("concurrent players (1..%d)", maxPlayers))
	fs.DurationVar(&o.duration, "duration", 10*time.Second, fmt.Sprintf("how long to run (at most %v)", maxDuration))
	fs.Int64Var(&o.maxRequests, "max-requests", 200_000, fmt.Sprintf("stop after this many requests (at most %d)", maxRequestsCap))
	fs.Float64Var(&o.reads, "reads", 0.5, "share of operations that are reads (0..1); a submit the rate limit holds back waits for its turn, so the share holds")
	fs.StringVar(&o.prefix, "prefix", "player-", "player ids are this prefix and a number")
	fs.Float64Var(&o.minScore, "min-score", 0, "smallest score submitted")
	fs.Float64Var(&o.maxScore, "max-score", 10_000, "largest score submitted")
	fs.DurationVar(&o.timeout, "timeout", 5*time.Second, "timeout of one request")
	fs.BoolVar(&o.allowRemote, "allow-remote", false, "allow a service that is not on a loopback address")
	fs.StringVar(keyID, "key-id", "", "which key of SIGNING_KEYS to sign with (default: the first)")
	fs.Uint64Var(&o.seed, "seed", 0, "random seed for scores (0: a new one each run)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: loadgen [flags]\n\nSigns with a key of SIGNING_KEYS (id:secret,...), as the server reads it.\n\nFlags:")
		fs.PrintDefaults()
	}
}

// baseURL checks -url: an http(s) URL of a host, without a query or
// fragment, on a loopback address unless remote is allowed.
func baseURL(rawURL string, remote bool) (*url.URL, error) {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return u, fmt.Errorf("-url %q: want http://host:port", redactURL(rawURL))
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		// A query would ride on every submission, whose URI the service
		// wants bare: every one would be a 400.
		return u, fmt.Errorf("-url %q: want no query or fragment", redactURL(rawURL))
	case !remote && !loopbackHost(u.Hostname()):
		return u, fmt.Errorf("-url %q is not a loopback address; pass -allow-remote to load a service elsewhere (one you run)", redactURL(rawURL))
	}
	return u, nil
}

// maxUserID is the longest user id the service takes, in bytes.
const maxUserID = 64

// checkPrefix refuses a -prefix that makes player ids the service refuses
// (examples/server/README.md): over maxUserID bytes with the widest number
// added, not UTF-8, or holding spaces, control characters or
// bidirectional embeddings, overrides or isolates. Every submission would
// be a 400.
func checkPrefix(prefix string, players int) error {
	longest := len(prefix) + max(len(strconv.Itoa(players)), 3)
	bad := func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r) || (r >= 0x202A && r <= 0x202E) || (r >= 0x2066 && r <= 0x2069)
	}
	switch {
	case longest > maxUserID:
		return fmt.Errorf("-prefix of %d bytes: player ids would be %d bytes, the service takes at most %d", len(prefix), longest, maxUserID)
	case !utf8.ValidString(prefix) || strings.ContainsFunc(prefix, bad):
		return fmt.Errorf("-prefix %q: want UTF-8 without spaces, control or bidirectional control characters, as the service takes", prefix)
	}
	return nil
}

// redactURL hides a URL's user part (a password, perhaps) before it is
// printed, also when the URL does not parse: whatever is between the scheme
// and the last '@' goes.
func redactURL(raw string) string {
	at := strings.LastIndex(raw, "@")
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw, "://"); i >= 0 && i < at {
		start = i + len("://")
	}
	return raw[:start] + "***" + raw[at:]
}

// pickKey returns the key named id from "id:secret,id:secret", or the first.
func pickKey(keys, id string) (string, []byte, error) {
	if strings.TrimSpace(keys) == "" {
		return "", nil, errors.New("SIGNING_KEYS is not set: export the line that examples/server prints at start")
	}
	for _, part := range strings.Split(keys, ",") {
		k, secret, ok := strings.Cut(strings.TrimSpace(part), ":")
		if !ok || k == "" || secret == "" {
			return "", nil, errors.New("SIGNING_KEYS: each entry is id:secret")
		}
		if id == "" || id == k {
			return k, []byte(secret), nil
		}
	}
	return "", nil, fmt.Errorf("SIGNING_KEYS has no key %q", id)
}

// loopbackHost reports whether host names this machine only.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// sign returns the headers of a signed request: HMAC-SHA256, hex, over
// method, request URI, timestamp, nonce and the body's SHA-256 in hex, one
// per line (examples/server/README.md).
func sign(keyID string, secret []byte, method, uri string, body []byte, now time.Time) http.Header {
	var n [16]byte
	_, _ = rand.Read(n[:])
	nonce := hex.EncodeToString(n[:])
	ts := strconv.FormatInt(now.Unix(), 10)
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, secret)
	fmt.Fprintf(m, "%s\n%s\n%s\n%s\n%s", method, uri, ts, nonce, hex.EncodeToString(sum[:]))
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("X-LB-Key-Id", keyID)
	h.Set("X-LB-Timestamp", ts)
	h.Set("X-LB-Nonce", nonce)
	h.Set("X-LB-Signature", hex.EncodeToString(m.Sum(nil)))
	return h
}

// The operations a player does.
const (
	opSubmit = "submit"
	opTop    = "top10"
	opAround = "around"
)

// stats are one player's results, merged at the end.
type stats struct {
	latency    map[string][]time.Duration
	status     map[string]map[int]int
	failures   map[string]int // transport errors and timeouts
	unexpected int            // non-2xx other than 429, and failures
	examples   []string       // a few unexpected answers, to show
	cutOff     int            // requests cut off by the end of the run, answered or not
}

func newStats() *stats {
	return &stats{latency: map[string][]time.Duration{}, status: map[string]map[int]int{}, failures: map[string]int{}}
}

func (s *stats) record(op string, d time.Duration, code int, err error, body string) {
	s.latency[op] = append(s.latency[op], d)
	if err != nil {
		s.failures[op]++
		s.unexpected++
		if len(s.examples) < 3 {
			s.examples = append(s.examples, fmt.Sprintf("%s: %v", op, err))
		}
		return
	}
	if s.status[op] == nil {
		s.status[op] = map[int]int{}
	}
	s.status[op][code]++
	if (code < 200 || code > 299) && code != http.StatusTooManyRequests {
		s.unexpected++
		if len(s.examples) < 3 {
			s.examples = append(s.examples, fmt.Sprintf("%s: %d %s", op, code, strings.TrimSpace(body)))
		}
	}
}

func (s *stats) merge(o *stats) {
	for op, l := range o.latency {
		s.latency[op] = append(s.latency[op], l...)
	}
	for op, m := range o.status {
		if s.status[op] == nil {
			s.status[op] = map[int]int{}
		}
		for c, n := range m {
			s.status[op][c] += n
		}
	}
	for op, n := range o.failures {
		s.failures[op] += n
	}
	s.unexpected += o.unexpected
	s.cutOff += o.cutOff
	for _, e := range o.examples {
		if len(s.examples) < 5 {
			s.examples = append(s.examples, e)
		}
	}
}

// player is one simulated player and the game server submitting for it.
type player struct {
	o       *options
	client  *http.Client
	id      string
	rng     *mrand.Rand
	skill   float64 // where its scores centre, 0..1 of the range
	ranked  bool    // has a score, so "around me" can be asked
	blocked time.Time
	budget  *atomic.Int64
	st      *stats
}

// loop runs the player's operations, each a read with probability
// -reads, else a submit, until the run ends or the request budget is spent.
func (p *player) loop(ctx context.Context) {
	for ctx.Err() == nil && p.budget.Add(-1) >= 0 {
		if p.rng.Float64() >= p.o.reads {
			// A rate-limited player's submit waits out the Retry-After, as
			// a game server would, instead of becoming a read: the mix
			// sent stays the one asked for.
			if wait := time.Until(p.blocked); wait > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
			}
			p.submit(ctx)
			continue
		}
		if p.ranked && p.rng.IntN(2) == 0 {
			p.get(ctx, opAround, url.Values{"userId": {p.id}, "range": {"5"}})
		} else {
			p.get(ctx, opTop, url.Values{"limit": {"10"}})
		}
	}
}

func (p *player) submit(ctx context.Context) {
	span := p.o.maxScore - p.o.minScore
	score := p.o.minScore + span*(p.skill+p.rng.NormFloat64()*0.1)
	score = math.Round(math.Max(p.o.minScore, math.Min(p.o.maxScore, score)))
	body := fmt.Appendf(nil, `{"userId":%q,"score":%s}`, p.id, strconv.FormatFloat(score, 'f', -1, 64))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.o.base.JoinPath("/api/v1/scores").String(), strings.NewReader(string(body)))
	if err != nil {
		p.st.record(opSubmit, 0, 0, err, "")
		return
	}
	// Signed as sent: a -url with a path prefix is part of the request URI.
	req.Header = sign(p.o.keyID, p.o.secret, http.MethodPost, req.URL.RequestURI(), body, time.Now())
	code, resp, d, err := p.do(ctx, req)
	if ctx.Err() != nil {
		p.st.cutOff++ // by the end of the run: not the service's fault
		return
	}
	p.st.record(opSubmit, d, code, err, resp.body)
	switch code {
	case http.StatusOK:
		p.ranked = true
	case http.StatusTooManyRequests:
		wait := time.Second
		if s, err := strconv.Atoi(resp.retryAfter); err == nil && s > 0 {
			wait = time.Duration(s) * time.Second
		}
		p.blocked = time.Now().Add(wait)
	}
}

func (p *player) get(ctx context.Context, op string, q url.Values) {
	u := p.o.base.JoinPath("/api/v1/leaderboard")
	u.RawQuery = q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		p.st.record(op, 0, 0, err, "")
		return
	}
	code, resp, d, err := p.do(ctx, req)
	if ctx.Err() != nil {
		p.st.cutOff++
		return
	}
	p.st.record(op, d, code, err, resp.body)
}

type answer struct{ body, retryAfter string }

func (p *player) do(ctx context.Context, req *http.Request) (int, answer, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, p.o.timeout)
	defer cancel()
	start := time.Now()
	resp, err := p.client.Do(req.WithContext(ctx))
	if err != nil {
		return 0, answer{}, time.Since(start), err
	}
	defer resp.Body.Close()
	// Read whole so the connection is reused; kept only for errors.
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	d := time.Since(start)
	a := answer{retryAfter: resp.Header.Get("Retry-After")}
	if resp.StatusCode >= 300 {
		a.body = string(b[:min(len(b), 200)])
	}
	return resp.StatusCode, a, d, err
}

// newClient makes the HTTP client: connections reused across requests, no
// redirects followed, and, unless allowed, no connection to anything but a
// loopback address, whatever a name resolves to.
func newClient(o *options) *http.Client {
	dialer := &net.Dialer{Timeout: o.timeout}
	if !o.allowRemote {
		dialer.ControlContext = func(_ context.Context, _, address string, _ syscall.RawConn) error {
			host, _, err := net.SplitHostPort(address)
			if err != nil {
				return err
			}
			if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
				return fmt.Errorf("refusing to connect to %s: not a loopback address", address)
			}
			return nil
		}
	}
	return &http.Client{
		Transport: &http.Transport{
			DialContext:         dialer.DialContext,
			MaxIdleConns:        o.players,
			MaxIdleConnsPerHost: o.players,
			IdleConnTimeout:     30 * time.Second,
		},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	o, err := parse(args, getenv, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "loadgen:", err)
		return 2
	}
	seed := o.seed
	if seed == 0 {
		seed = mrand.Uint64()
	}
	client := newClient(&o)
	defer client.CloseIdleConnections()

	fmt.Fprintf(stdout, "loadgen: %d players for %v against %s (asking %.0f%% reads, key %q)\n",
		o.players, o.duration, o.base.Redacted(), o.reads*100, o.keyID)
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var budget atomic.Int64
	budget.Store(o.maxRequests)
	width := len(strconv.Itoa(o.players))
	players := make([]*player, o.players)
	for i := range players {
		rng := mrand.New(mrand.NewPCG(seed, uint64(i)))
		players[i] = &player{
			o: &o, client: client, rng: rng, budget: &budget, st: newStats(),
			id: fmt.Sprintf("%s%0*d", o.prefix, max(width, 3), i+1),
			// Centres from 10% to 70% of the range: bests, the highest of
			// many tries, then spread over most of it.
			skill: 0.1 + 0.6*rng.Float64(),
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, p := range players {
		wg.Add(1)
		go func() { defer wg.Done(); p.loop(ctx) }()
	}
	wg.Wait()
	elapsed := time.Since(start)

	total := newStats()
	for _, p := range players {
		total.merge(p.st)
	}
	report(stdout, total, elapsed, o.reads)
	if total.unexpected > 0 {
		fmt.Fprintf(stdout, "FAIL: %d unexpected responses (not 2xx, not 429)\n", total.unexpected)
		for _, e := range total.examples {
			fmt.Fprintln(stdout, "  ", e)
		}
		return 1
	}
	fmt.Fprintln(stdout, "ok: every response was 2xx or an intended 429")
	return 0
}

// report prints what was sent: a row per operation, the totals, and the
// share of reads among the requests sent beside the share asked for.
func report(w io.Writer, s *stats, elapsed time.Duration, asked float64) {
	var all []time.Duration
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "op\trequests\treq/s\tp50\tp90\tp99\tp99.9\tmax\tstatuses\t")
	for _, op := range []string{opSubmit, opTop, opAround} {
		l := s.latency[op]
		if len(l) == 0 {
			continue
		}
		all = append(all, l...)
		row(tw, op, l, elapsed, statuses(s.status[op], s.failures[op]))
	}
	if len(all) > 0 {
		row(tw, "all", all, elapsed, "")
	}
	tw.Flush()
	fmt.Fprintf(w, "%d requests in %v: %.1f requests/s\n", len(all), elapsed.Round(time.Millisecond), float64(len(all))/elapsed.Seconds())
	if len(all) > 0 {
		reads := len(s.latency[opTop]) + len(s.latency[opAround])
		fmt.Fprintf(w, "sent %.1f%% reads (%d) and %.1f%% submits (%d); asked for %.0f%% reads\n",
			100*float64(reads)/float64(len(all)), reads, 100*float64(len(s.latency[opSubmit]))/float64(len(all)), len(s.latency[opSubmit]), asked*100)
	}
	if s.cutOff > 0 {
		fmt.Fprintf(w, "%d requests cut off by the end of the run are not counted above\n", s.cutOff)
	}
}

func row(w io.Writer, op string, l []time.Duration, elapsed time.Duration, st string) {
	slices.Sort(l)
	fmt.Fprintf(w, "%s\t%d\t%.1f\t%v\t%v\t%v\t%v\t%v\t%s\t\n", op, len(l), float64(len(l))/elapsed.Seconds(),
		pct(l, 0.50), pct(l, 0.90), pct(l, 0.99), pct(l, 0.999), l[len(l)-1].Round(time.Microsecond), st)
}

// pct is the q-quantile of sorted latencies (nearest rank).
func pct(sorted []time.Duration, q float64) time.Duration {
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[max(i, 0)].Round(time.Microsecond)
}

func statuses(m map[int]int, failures int) string {
	codes := make([]int, 0, len(m))
	for c := range m {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	parts := make([]string, 0, len(codes)+1)
	for _, c := range codes {
		parts = append(parts, fmt.Sprintf("%d:%d", c, m[c]))
	}
	if failures > 0 {
		parts = append(parts, fmt.Sprintf("failed:%d", failures))
	}
	return strings.Join(parts, " ")
}
