package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/redisurl"
)

// config is everything the service reads at start. Each setting is a flag
// whose default comes from the environment, so containers can use variables
// and a developer can override one on the command line.
type config struct {
	Addr     string // listen address
	RedisURL string // empty: an embedded miniredis

	Board    string  // the board's name: the hash tag of its keys
	MinScore float64 // submissions outside [MinScore, MaxScore] are refused
	MaxScore float64

	Keys map[string][]byte // signing keys by key id
	Skew time.Duration     // how far a signed timestamp may be from now

	Rate  float64 // per-user submissions per second, refilled continuously
	Burst int     // per-user submissions allowed at once

	StreamsPerClient int           // open event streams per client address
	RedisTimeout     time.Duration // how long a request waits for Redis

	ShutdownTimeout time.Duration
	LogLevel        string
	LogFormat       string // "text" or "json"
	Dev             bool   // embedded Redis and a generated key were chosen for us
}

// Limits that are not worth a setting: they bound what one request can cost.
const (
	maxBody     = 4 << 10 // bytes of a submission body
	maxUserID   = 64      // bytes of a user id
	maxLimit    = 100     // top-n and page size on the public read API
	maxRange    = 50      // neighbours on each side for ?userId=&range=
	minKeyBytes = 32      // shortest signing secret accepted

	// The position and score reads take as much as the SDK takes.
	maxSpan        = leaderboard.MaxN      // entries of ?from=&to= and of ?lo=&hi=&n=
	maxScoreRadius = leaderboard.MaxRadius // entries each side of ?score=&radius=

	// Bounds of the rate limit's settings: the bucket's script computes
	// waits and expiries in milliseconds from them, which must stay
	// integers Redis accepts.
	minRate  = 0.001 // one submission per 1000 seconds
	maxRate  = 1e6
	maxBurst = 1_000_000

	// The longest Redis timeout: a request that waits for Redis holds
	// its connection and a goroutine that long. The server's write
	// timeout is set from the Redis timeout (newHTTPServer), so that the
	// 503 it causes still reaches the client.
	maxRedisTimeout = 10 * time.Second
)

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// envReader reads settings from the environment, collecting every error
// so that one run reports them all.
type envReader struct {
	getenv func(string) string
	errs   []error
}

func (e *envReader) str(name, def string) string {
	if v := e.getenv(name); v != "" {
		return v
	}
	return def
}

func (e *envReader) float(name string, def float64) float64 {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	f, ok := parseDecimal(v)
	if !ok {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: %s", name, redisurl.Redact(v), wantDecimal))
		return def
	}
	return f
}

// wantDecimal is what a number setting takes: what the API takes, a
// decimal number that float64 holds. strconv.ParseFloat alone would also
// take hex, underscores, NaN and infinities, and read 1e-400 as 0.
const wantDecimal = "want a finite decimal number that float64 holds (such as 2.5 or 1e9)"

// decimalFlag is a float64 flag parsed as the environment's numbers are.
type decimalFlag struct{ p *float64 }

func (f decimalFlag) String() string {
	if f.p == nil {
		return "0"
	}
	return strconv.FormatFloat(*f.p, 'g', -1, 64)
}

func (f decimalFlag) Set(s string) error {
	v, ok := parseDecimal(s)
	if !ok {
		return errors.New(wantDecimal)
	}
	*f.p = v
	return nil
}

// decimalVar defines a number flag whose default is def.
func decimalVar(fs *flag.FlagSet, p *float64, name string, def float64, usage string) {
	*p = def
	fs.Var(decimalFlag{p}, name, usage)
}

func (e *envReader) int(name string, def int) int {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want an integer", name, redisurl.Redact(v)))
		return def
	}
	return n
}

func (e *envReader) duration(name string, def time.Duration) time.Duration {
	v := e.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s=%q: want a duration such as 30s", name, redisurl.Redact(v)))
		return def
	}
	return d
}

// loadConfig parses the command line over the environment; getenv is
// os.Getenv outside tests. With -h it returns flag.ErrHelp having printed
// the usage, and nothing else is done.
func loadConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	c := config{}
	env := &envReader{getenv: getenv}
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", env.str("ADDR", "127.0.0.1:8080"), "listen address (env ADDR)")
	fs.StringVar(&c.Board, "board", env.str("BOARD", "game"), "board name (env BOARD)")
	decimalVar(fs, &c.MinScore, "min-score", env.float("SCORE_MIN", 0), "smallest `score` accepted (env SCORE_MIN)")
	decimalVar(fs, &c.MaxScore, "max-score", env.float("SCORE_MAX", 1e9), "largest `score` accepted (env SCORE_MAX)")
	fs.DurationVar(&c.Skew, "skew", env.duration("SIGNATURE_SKEW", 5*time.Minute), "largest clock difference a signed request may have, 1s..1h (env SIGNATURE_SKEW)")
	decimalVar(fs, &c.Rate, "rate", env.float("SUBMIT_RATE", 2), fmt.Sprintf("per-user submissions per second, a `number` from %g to %g (env SUBMIT_RATE)", minRate, maxRate))
	fs.IntVar(&c.Burst, "burst", env.int("SUBMIT_BURST", 10), fmt.Sprintf("per-user submissions allowed at once, 1..%d (env SUBMIT_BURST)", maxBurst))
	fs.IntVar(&c.StreamsPerClient, "streams-per-client", env.int("STREAMS_PER_CLIENT", 10), fmt.Sprintf("live-update streams one client address may hold open, 1..%d (env STREAMS_PER_CLIENT)", maxStreams))
	fs.DurationVar(&c.RedisTimeout, "redis-timeout", env.duration("REDIS_TIMEOUT", 3*time.Second), fmt.Sprintf("how long a request waits for Redis before answering 503, up to %v (env REDIS_TIMEOUT)", maxRedisTimeout))
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", env.duration("SHUTDOWN_TIMEOUT", 15*time.Second), "how long shutdown waits for in-flight requests (env SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.LogLevel, "log-level", env.str("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env.str("LOG_FORMAT", "text"), "text or json (env LOG_FORMAT)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: server [flags]\n\nEnvironment: REDIS_URL (unset: embedded miniredis), SIGNING_KEYS (id:secret,id:secret).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	errs := env.errs
	if fs.NArg() > 0 {
		// Shown as Redact shows a Redis URL: `server $REDIS_URL` is an
		// easy slip, and no error shows a password.
		args := make([]string, fs.NArg())
		for i, a := range fs.Args() {
			args[i] = redisurl.Redact(a)
		}
		errs = append(errs, fmt.Errorf("unexpected arguments %q", args))
	}
	// Secrets come only from the environment: a flag would show them in ps.
	c.RedisURL = getenv("REDIS_URL")
	keys, err := parseKeys(getenv("SIGNING_KEYS"))
	if err != nil {
		errs = append(errs, err)
	}
	c.Keys = keys
	errs = append(errs, c.validate()...)
	return c, errors.Join(errs...)
}

// validate checks the settings that would otherwise fail later, or worse,
// in a handler: each error names the setting and what it wants.
func (c config) validate() []error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	finite := !math.IsNaN(c.MinScore) && !math.IsNaN(c.MaxScore) && !math.IsInf(c.MinScore, 0) && !math.IsInf(c.MaxScore, 0)
	check(finite && c.MinScore <= c.MaxScore, "score bounds [%v, %v] (SCORE_MIN, -min-score; SCORE_MAX, -max-score): want finite numbers, min <= max", c.MinScore, c.MaxScore)
	// Score arithmetic (the distribution chart's bins) subtracts the
	// bounds: their difference must be a float64 too.
	check(!finite || !math.IsInf(c.MaxScore-c.MinScore, 0), "score bounds [%v, %v] (SCORE_MIN, -min-score; SCORE_MAX, -max-score): max - min overflows float64; narrow them", c.MinScore, c.MaxScore)
	check(c.Skew >= time.Second && c.Skew <= time.Hour, "skew %v (SIGNATURE_SKEW, -skew): want 1s..1h", c.Skew)
	check(c.Rate >= minRate && c.Rate <= maxRate, "rate %v (SUBMIT_RATE, -rate): want %g..%g submissions per second", c.Rate, minRate, maxRate)
	check(c.Burst >= 1 && c.Burst <= maxBurst, "burst %d (SUBMIT_BURST, -burst): want 1..%d", c.Burst, maxBurst)
	check(c.StreamsPerClient >= 1 && c.StreamsPerClient <= maxStreams, "streams per client %d (STREAMS_PER_CLIENT, -streams-per-client): want 1..%d", c.StreamsPerClient, maxStreams)
	check(c.RedisTimeout > 0 && c.RedisTimeout <= maxRedisTimeout, "redis timeout %v (REDIS_TIMEOUT, -redis-timeout): want more than 0, at most %v", c.RedisTimeout, maxRedisTimeout)
	check(c.ShutdownTimeout > 0, "shutdown timeout %v (SHUTDOWN_TIMEOUT, -shutdown-timeout): want more than 0", c.ShutdownTimeout)
	check(c.LogFormat == "text" || c.LogFormat == "json", "log format %q (LOG_FORMAT, -log-format): want text or json", c.LogFormat)
	// The listen address and board are checked here, before Redis is
	// dialled, so that their errors name them; a listen address that is
	// well formed can still fail at Listen (a port in use), which names it too.
	check(validAddr(c.Addr), "listen address %q (ADDR, -addr): want host:port, the port a number from 0 to 65535", redisurl.Redact(c.Addr))
	check(validBoard(c.Board), "board name %q (BOARD, -board): want at most 200 bytes of printable UTF-8 without whitespace, braces or '#'", redisurl.Redact(c.Board))
	if _, err := parseLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	return errs
}

// validAddr reports whether addr is host:port with a numeric port: what
// net.Listen takes, but for service names, which nobody means here.
func validAddr(addr string) bool {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	_, err = strconv.ParseUint(port, 10, 16)
	return err == nil
}

// validBoard reports whether the SDK takes name as a board's name: it is
// the hash tag of the board's keys, so no braces, and no '#', whitespace or
// unprintable characters, in valid UTF-8 of at most 200 bytes.
// leaderboard.New checks the same, but only once Redis has been dialled.
func validBoard(name string) bool {
	if name == "" || len(name) > 200 || !utf8.ValidString(name) {
		return false
	}
	for _, r := range name {
		if r == '{' || r == '}' || r == '#' || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// parseKeys reads "id:secret,id:secret". Several keys let game servers move
// to a new key while the old one is still accepted; the request names its
// key id, so nothing has to be tried in turn.
func parseKeys(s string) (map[string][]byte, error) {
	keys := map[string][]byte{}
	if strings.TrimSpace(s) == "" {
		return keys, nil
	}
	// Entries are named by position, never by content: a mistyped entry
	// may hold its secret where the id should be.
	for i, part := range strings.Split(s, ",") {
		id, secret, ok := strings.Cut(strings.TrimSpace(part), ":")
		switch {
		case !ok || !keyIDPattern.MatchString(id):
			return nil, fmt.Errorf("SIGNING_KEYS: entry %d: want id:secret with an id of 1 to 64 letters, digits, '.', '_' or '-'", i+1)
		case len(secret) < minKeyBytes:
			return nil, fmt.Errorf("SIGNING_KEYS: entry %d: the secret is shorter than %d bytes", i+1, minKeyBytes)
		case keys[id] != nil:
			return nil, fmt.Errorf("SIGNING_KEYS: entry %d: its key id is given twice", i+1)
		}
		keys[id] = []byte(secret)
	}
	return keys, nil
}
