package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"
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
)

var keyIDPattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// loadConfig parses the command line over the environment; getenv is
// os.Getenv outside tests.
func loadConfig(args []string, getenv func(string) string, stderr io.Writer) (config, error) {
	c := config{}
	var errs []error
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	envFloat := func(name string, def float64) float64 {
		v := getenv(name)
		if v == "" {
			return def
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			errs = append(errs, fmt.Errorf("%s=%q: want a finite number", name, v))
			return def
		}
		return f
	}
	envInt := func(name string, def int) int {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer", name, v))
			return def
		}
		return n
	}
	envDuration := func(name string, def time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration such as 30s", name, v))
			return def
		}
		return d
	}

	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.Addr, "addr", env("ADDR", "127.0.0.1:8080"), "listen address (env ADDR)")
	fs.StringVar(&c.Board, "board", env("BOARD", "game"), "board name (env BOARD)")
	fs.Float64Var(&c.MinScore, "min-score", envFloat("SCORE_MIN", 0), "smallest score accepted (env SCORE_MIN)")
	fs.Float64Var(&c.MaxScore, "max-score", envFloat("SCORE_MAX", 1e9), "largest score accepted (env SCORE_MAX)")
	fs.DurationVar(&c.Skew, "skew", envDuration("SIGNATURE_SKEW", 5*time.Minute), "largest clock difference a signed request may have (env SIGNATURE_SKEW)")
	fs.Float64Var(&c.Rate, "rate", envFloat("SUBMIT_RATE", 2), "per-user submissions per second (env SUBMIT_RATE)")
	fs.IntVar(&c.Burst, "burst", envInt("SUBMIT_BURST", 10), "per-user submissions allowed at once (env SUBMIT_BURST)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", envDuration("SHUTDOWN_TIMEOUT", 15*time.Second), "how long shutdown waits for in-flight requests (env SHUTDOWN_TIMEOUT)")
	fs.StringVar(&c.LogLevel, "log-level", env("LOG_LEVEL", "info"), "debug, info, warn or error (env LOG_LEVEL)")
	fs.StringVar(&c.LogFormat, "log-format", env("LOG_FORMAT", "text"), "text or json (env LOG_FORMAT)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: server [flags]\n\nEnvironment: REDIS_URL (unset: embedded miniredis), SIGNING_KEYS (id:secret,id:secret).\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return config{}, err
	}
	if fs.NArg() > 0 {
		errs = append(errs, fmt.Errorf("unexpected arguments %q", fs.Args()))
	}
	// Secrets come only from the environment: a flag would show them in ps.
	c.RedisURL = getenv("REDIS_URL")
	keys, err := parseKeys(getenv("SIGNING_KEYS"))
	if err != nil {
		errs = append(errs, err)
	}
	c.Keys = keys

	switch {
	case c.MinScore > c.MaxScore || math.IsNaN(c.MinScore) || math.IsNaN(c.MaxScore) ||
		math.IsInf(c.MinScore, 0) || math.IsInf(c.MaxScore, 0):
		errs = append(errs, fmt.Errorf("score bounds [%v, %v]: want finite numbers, min <= max", c.MinScore, c.MaxScore))
	case c.Skew < time.Second || c.Skew > time.Hour:
		errs = append(errs, fmt.Errorf("skew %v: want 1s..1h", c.Skew))
	case !(c.Rate > 0) || c.Rate > 1e6:
		errs = append(errs, fmt.Errorf("rate %v: want more than 0", c.Rate))
	case c.Burst < 1 || c.Burst > 1e6:
		errs = append(errs, fmt.Errorf("burst %d: want 1 or more", c.Burst))
	case c.ShutdownTimeout <= 0:
		errs = append(errs, fmt.Errorf("shutdown timeout %v: want more than 0", c.ShutdownTimeout))
	case c.LogFormat != "text" && c.LogFormat != "json":
		errs = append(errs, fmt.Errorf("log format %q: want text or json", c.LogFormat))
	}
	if _, err := parseLevel(c.LogLevel); err != nil {
		errs = append(errs, err)
	}
	return c, errors.Join(errs...)
}

// parseKeys reads "id:secret,id:secret". Several keys let game servers move
// to a new key while the old one is still accepted; the request names its
// key id, so nothing has to be tried in turn.
func parseKeys(s string) (map[string][]byte, error) {
	keys := map[string][]byte{}
	if strings.TrimSpace(s) == "" {
		return keys, nil
	}
	for _, part := range strings.Split(s, ",") {
		id, secret, ok := strings.Cut(strings.TrimSpace(part), ":")
		switch {
		case !ok || !keyIDPattern.MatchString(id):
			return nil, fmt.Errorf("SIGNING_KEYS: each entry is id:secret with an id of letters, digits, '.', '_' or '-'")
		case len(secret) < minKeyBytes:
			// The id may be printed; the secret never is.
			return nil, fmt.Errorf("SIGNING_KEYS: the secret of key %q is shorter than %d bytes", id, minKeyBytes)
		case keys[id] != nil:
			return nil, fmt.Errorf("SIGNING_KEYS: key %q given twice", id)
		}
		keys[id] = []byte(secret)
	}
	return keys, nil
}
