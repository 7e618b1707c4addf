// Command durable shows a leaderboard that survives losing Redis: every
// submission is written to PostgreSQL first (pgstore) and to Redis second;
// the program then wipes the board's Redis keys, as a restart without
// persistence or a FLUSHALL would, notices the loss with Present, rebuilds
// the board from PostgreSQL, and checks with Verify that Redis and
// PostgreSQL agree again, and that pgstore's kept standings agree with its
// own log.
//
//	go run ./examples/durable                                    # embedded miniredis
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/durable   # a real Redis
//	DATABASE_URL=postgres://app@db:5432/game go run ./examples/durable
//	go run ./examples/durable -h                                 # flags; connects to nothing
//
// PostgreSQL comes from DATABASE_URL (default
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable); the program
// creates its tables there (prefix "durable_example_") and, at every start,
// deletes everything an earlier run left of its board with the board's
// Delete (pgstore's DeleteBoard first, then the board's keys in Redis), so
// every run prints the same figures.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"unicode/utf8"

	"github.com/skiprank/leaderboard/internal/keys"
)

// defaultDatabaseURL is the local PostgreSQL the repository's tests use.
const defaultDatabaseURL = "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"

// config is what one run works on; parseConfig fills it.
type config struct {
	// Redis is the Redis to use (REDIS_URL); unset: an embedded miniredis.
	Redis redisTarget
	// Postgres is the PostgreSQL to use (DATABASE_URL).
	Postgres pgTarget
	// TablePrefix is pgstore's table prefix.
	TablePrefix string
	// Board is the board's name.
	Board string
	// Players is how many players there are. The load is Rounds calls of
	// SubmitMany, each with RoundSize players, then Live calls of Submit
	// with WithID, from Workers goroutines.
	Players, Rounds, RoundSize, Live, Workers int
	// Progress shows progress bars (on a terminal).
	Progress bool
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// cli runs the program with args and the environment getenv, and returns
// its exit code: 0 done (or -h), 1 failed, 2 bad flags or settings.
func cli(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, err := parseConfig(args, getenv, stdout, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "durable:", err)
		return 2
	}
	cfg.Progress = isTerminal(stdout)
	if err := run(ctx, stdout, cfg); err != nil {
		fmt.Fprintln(stderr, "durable:", newSecrets(cfg.Redis, cfg.Postgres).scrub(err.Error()))
		return 1
	}
	return 0
}

const usage = `Usage: durable [flags]

Writes a load of scores to a leaderboard on Redis and PostgreSQL (pgstore),
deletes the board's Redis keys, rebuilds the board from PostgreSQL and
verifies it. At start it deletes what an earlier run left of its board
(the board's Delete: pgstore's DeleteBoard, then the board's Redis keys), and it leaves
this run's board behind for you to look at.

Environment:
  REDIS_URL     redis://[user:password@]host:port[/db] (unset: an embedded miniredis)
  DATABASE_URL  PostgreSQL, a URL or key=value settings
                (default ` + defaultDatabaseURL + `)

Flags:
`

// parseConfig reads the flags in args over the environment. With -h or
// --help it prints the usage to stdout and returns flag.ErrHelp, having
// connected to nothing.
func parseConfig(args []string, getenv func(string) string, stdout, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("durable", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {} // printed below, to stdout for -h
	cfg := config{}
	fs.StringVar(&cfg.Board, "board", "durable-example", "board `name` (the hash tag of its Redis keys)")
	fs.StringVar(&cfg.TablePrefix, "table-prefix", "durable_example_", "pgstore's table `prefix`")
	fs.IntVar(&cfg.Players, "players", 2000, "how many players")
	fs.IntVar(&cfg.Rounds, "rounds", 19, "rounds of SubmitMany")
	fs.IntVar(&cfg.RoundSize, "round-size", 1000, "players in each round (at most -players)")
	fs.IntVar(&cfg.Live, "live", 1000, "matches sent one by one with Submit and WithID")
	fs.IntVar(&cfg.Workers, "workers", 8, "goroutines sending the matches")
	printUsage := func(w io.Writer) {
		fmt.Fprint(w, usage)
		fs.SetOutput(w)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
		} else {
			printUsage(stderr)
		}
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q (see -h)", fs.Arg(0))
	}
	if err := cfg.check(); err != nil {
		return cfg, err
	}
	var err error
	if cfg.Redis, err = parseRedisURL(getenv("REDIS_URL")); err != nil {
		return cfg, err
	}
	dsn := getenv("DATABASE_URL")
	if dsn == "" {
		dsn = defaultDatabaseURL
	}
	cfg.Postgres, err = parsePostgres(dsn)
	return cfg, err
}

// Limits that keep a run within what a laptop holds.
const (
	maxPlayers = 1_000_000
	maxRounds  = 1_000
	maxLive    = 1_000_000
	maxWorkers = 256
)

// check refuses settings the demonstration cannot run with.
func (c config) check() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	// leaderboard.New's rule for a board's name (keys.ValidName, and no
	// '#'), which also keeps it text pgstore can store (valid UTF-8).
	if !keys.ValidName(c.Board) || strings.ContainsRune(c.Board, '#') || !utf8.ValidString(c.Board) {
		bad("-board %q: want a non-empty name of printable UTF-8 of at most %d bytes, without whitespace, braces or '#'", c.Board, keys.MaxNameLen)
	}
	if !validTablePrefix(c.TablePrefix) {
		bad("-table-prefix %q: want empty, or [a-z_][a-z0-9_]* of at most %d bytes", c.TablePrefix, maxTablePrefix)
	}
	if c.Players < 1 || c.Players > maxPlayers {
		bad("-players %d: want 1..%d", c.Players, maxPlayers)
	}
	if c.Rounds < 0 || c.Rounds > maxRounds {
		bad("-rounds %d: want 0..%d", c.Rounds, maxRounds)
	}
	if c.RoundSize < 1 || c.RoundSize > c.Players {
		bad("-round-size %d: want 1..-players (%d)", c.RoundSize, c.Players)
	}
	if c.Live < 1 || c.Live > maxLive {
		bad("-live %d: want 1..%d", c.Live, maxLive)
	}
	if c.Workers < 1 || c.Workers > maxWorkers {
		bad("-workers %d: want 1..%d", c.Workers, maxWorkers)
	}
	return errors.Join(errs...)
}

// maxTablePrefix and tablePrefixRE are pgstore.WithTablePrefix's rule
// (pgstore.New refuses any other prefix): every table and index name
// within PostgreSQL's 63 bytes.
const maxTablePrefix = 30

var tablePrefixRE = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// validTablePrefix reports whether pgstore takes prefix.
func validTablePrefix(prefix string) bool {
	return prefix == "" || len(prefix) <= maxTablePrefix && tablePrefixRE.MatchString(prefix)
}
