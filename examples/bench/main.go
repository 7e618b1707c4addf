// Command bench measures the leaderboard SDK on your own Redis, beside the
// same work done with raw rueidis commands (and, for the hand-written code of
// the design articles, with go-redis) in the same run, and prints the ratios.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/bench
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/bench -windows 4 -policy accumulate -ops submit,submit-many
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/bench -members 10000000 -ops top,rank,around -c 1 -format md
//
// It loads -members members into a fresh board (a progress bar on stderr),
// the same members into plain sorted sets with pipelined ZADDs of 1,000
// members a command (the ceiling), reports the load times and Redis memory
// per member (INFO used_memory before and after each load), then measures
// every operation at every concurrency for -d each: ops/s, p50, p99, p99.9,
// allocations and bytes per operation in this process, and Redis CPU per
// operation (INFO cpu, all nodes). Without REDIS_URL it runs on an embedded
// miniredis, whose figures mean nothing but show that the tool works.
//
// Every key it writes is under -prefix and a board name of its own
// ("lbbench:{bench-<random>}..."), and it deletes them at the end unless
// -keep is given. It reads INFO and writes nothing else, but a full run
// loads Redis hard for minutes: point it at a Redis you may load.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// config is what the flags ask for.
type config struct {
	redisURL        string
	members         int
	windows         []string
	policy          leaderboard.Policy
	order           leaderboard.Order
	shards          int
	tieBreak        string
	concurrency     []int
	duration        time.Duration
	rounds          int
	ops             []string
	format          string
	prefix          string
	scoreMax        int
	loadConcurrency int
	keep            bool
	cpuProfile      string
	commandStats    bool
	compare         bool
	// noAutoPipelining builds the rueidis client with DisableAutoPipelining.
	noAutoPipelining bool
	seed             uint64
	// name is the board's name; empty for a random one (tests set it).
	name string
}

// allOps is every operation the tool knows, in the order it measures them.
var allOps = []string{"submit", "submit-many", "top", "rank", "around", "page", "page-deep", "among", "count"}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		cfg                                       config
		windows, policy, order, conc, ops, tieBrk string
	)
	fs.IntVar(&cfg.members, "members", 1_000_000, "members loaded before measuring")
	fs.StringVar(&windows, "windows", "alltime", `windows, comma-separated: alltime, daily, weekly, monthly; or "4" for all four (the first is read)`)
	fs.StringVar(&policy, "policy", "keepbest", "keepbest, replace or accumulate")
	fs.StringVar(&order, "order", "highest", "highest or lowest first")
	fs.IntVar(&cfg.shards, "shards", 0, "score-range shards (WithShards with shards-1 even bounds over [0, score-max)); 0: unsharded")
	fs.StringVar(&tieBrk, "tiebreak", "none", "none, earlier or later (EarlierFirst/LaterFirst, 1 s resolution)")
	fs.StringVar(&conc, "c", "1,64", "concurrency levels: goroutines calling at once")
	fs.DurationVar(&cfg.duration, "d", 3*time.Second, "how long each implementation is measured in each round")
	fs.IntVar(&cfg.rounds, "rounds", 1, "rounds per figure: each round measures every implementation of an operation once, one after the other")
	fs.StringVar(&ops, "ops", "all", "operations, comma-separated: "+strings.Join(allOps, ", ")+"; or all")
	fs.StringVar(&cfg.format, "format", "text", "text or md (Markdown tables for BENCHMARKS.md)")
	fs.StringVar(&cfg.prefix, "prefix", "lbbench", "key prefix of the boards it writes")
	fs.IntVar(&cfg.scoreMax, "score-max", 1_000_000, "scores are whole numbers in [0, score-max)")
	fs.IntVar(&cfg.loadConcurrency, "load-c", 4, "SubmitMany or ZADD calls in flight while loading")
	fs.BoolVar(&cfg.keep, "keep", false, "keep the keys it wrote")
	fs.BoolVar(&cfg.noAutoPipelining, "no-auto-pipelining", false, "build the rueidis client with DisableAutoPipelining: each call takes a pooled connection of its own, as go-redis does, instead of sharing one pipelined connection (lower latency at low concurrency, lower throughput at high)")
	fs.BoolVar(&cfg.compare, "compare", true, "measure the raw rueidis and go-redis versions beside the SDK")
	fs.BoolVar(&cfg.commandStats, "commandstats", false, "also report, per figure, the server time of each command per call (INFO commandstats; the INFO calls themselves show up as info)")
	fs.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write this process's CPU profile of the measured part to this file")
	fs.Uint64Var(&cfg.seed, "seed", 1, "seed of the members' scores and the operations' arguments")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	cfg.redisURL = os.Getenv("REDIS_URL")

	if cfg.members < 100 {
		return cfg, fmt.Errorf("-members %d: want at least 100", cfg.members)
	}
	if windows == "4" {
		windows = "alltime,daily,weekly,monthly"
	}
	for _, w := range strings.Split(windows, ",") {
		w = strings.TrimSpace(w)
		if _, ok := windowByName(w); !ok {
			return cfg, fmt.Errorf("-windows: unknown window %q", w)
		}
		if slices.Contains(cfg.windows, w) {
			return cfg, fmt.Errorf("-windows: %q twice", w)
		}
		cfg.windows = append(cfg.windows, w)
	}
	switch policy {
	case "keepbest":
		cfg.policy = leaderboard.KeepBest
	case "replace":
		cfg.policy = leaderboard.Replace
	case "accumulate":
		cfg.policy = leaderboard.Accumulate
	default:
		return cfg, fmt.Errorf("-policy %q: want keepbest, replace or accumulate", policy)
	}
	switch order {
	case "highest":
		cfg.order = leaderboard.HighestFirst
	case "lowest":
		cfg.order = leaderboard.LowestFirst
	default:
		return cfg, fmt.Errorf("-order %q: want highest or lowest", order)
	}
	if cfg.shards < 0 || cfg.shards == 1 || cfg.shards > 64 {
		return cfg, fmt.Errorf("-shards %d: want 0 (unsharded) or 2..64", cfg.shards)
	}
	switch tieBrk {
	case "none", "earlier", "later":
		cfg.tieBreak = tieBrk
	default:
		return cfg, fmt.Errorf("-tiebreak %q: want none, earlier or later", tieBrk)
	}
	for _, s := range strings.Split(conc, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n < 1 || n > 4096 {
			return cfg, fmt.Errorf("-c: %q is not a concurrency in 1..4096", s)
		}
		cfg.concurrency = append(cfg.concurrency, n)
	}
	if cfg.rounds < 1 || cfg.rounds > 100 {
		return cfg, fmt.Errorf("-rounds %d: want 1..100", cfg.rounds)
	}
	if cfg.duration <= 0 {
		return cfg, fmt.Errorf("-d %v: want a positive duration", cfg.duration)
	}
	if ops == "all" {
		cfg.ops = allOps
	} else {
		for _, o := range strings.Split(ops, ",") {
			o = strings.TrimSpace(o)
			if !slices.Contains(allOps, o) {
				return cfg, fmt.Errorf("-ops: unknown operation %q (known: %s)", o, strings.Join(allOps, ", "))
			}
			cfg.ops = append(cfg.ops, o)
		}
	}
	if cfg.format != "text" && cfg.format != "md" {
		return cfg, fmt.Errorf("-format %q: want text or md", cfg.format)
	}
	if cfg.scoreMax < 2 || cfg.scoreMax > 1<<40 {
		return cfg, fmt.Errorf("-score-max %d: want 2..2^40", cfg.scoreMax)
	}
	if cfg.loadConcurrency < 1 || cfg.loadConcurrency > 256 {
		return cfg, fmt.Errorf("-load-c %d: want 1..256", cfg.loadConcurrency)
	}
	return cfg, nil
}

func windowByName(name string) (leaderboard.Window, bool) {
	switch name {
	case "alltime":
		return leaderboard.AllTime(), true
	case "daily":
		return leaderboard.Daily(), true
	case "weekly":
		return leaderboard.Weekly(), true
	case "monthly":
		return leaderboard.Monthly(), true
	}
	return nil, false
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, cfg, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// conn is the Redis the tool measures, through both clients.
type conn struct {
	rue   rueidis.Client
	goRed redis.UniversalClient
	where string
	mini  bool
	close func()
}

// connect connects both clients to url, or to an embedded miniredis when
// url is empty. go-redis gets a pool as large as the highest concurrency,
// so that its figures are not limited by waiting for a connection.
func connect(url string, pool int, noAutoPipelining bool) (*conn, error) {
	if url == "" {
		mr, err := miniredis.Run()
		if err != nil {
			return nil, err
		}
		// ForceSingleClient: miniredis answers CLUSTER commands, which would
		// make rueidis treat it as a one-node cluster.
		rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true,
			DisableAutoPipelining: noAutoPipelining})
		if err != nil {
			mr.Close()
			return nil, err
		}
		gc := redis.NewClient(&redis.Options{Addr: mr.Addr(), PoolSize: pool})
		return &conn{rue: rc, goRed: gc, where: "embedded miniredis at " + mr.Addr(), mini: true,
			close: func() { gc.Close(); rc.Close(); mr.Close() }}, nil
	}
	opt, err := rueidis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// The SDK never reads through the client-side cache; tracking would only
	// cost a connection handshake.
	opt.DisableCache = true
	opt.DisableAutoPipelining = noAutoPipelining
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", redact(url), err)
	}
	var gc redis.UniversalClient
	if rc.Mode() == rueidis.ClientModeCluster {
		gc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: opt.InitAddress, Username: opt.Username,
			Password: opt.Password, TLSConfig: opt.TLSConfig, PoolSize: pool})
	} else {
		gc = redis.NewClient(&redis.Options{Addr: opt.InitAddress[0], Username: opt.Username,
			Password: opt.Password, DB: opt.SelectDB, TLSConfig: opt.TLSConfig, PoolSize: pool})
	}
	return &conn{rue: rc, goRed: gc, where: redact(url), close: func() { gc.Close(); rc.Close() }}, nil
}

// redact hides a URL's password.
func redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

func randomName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "bench-" + hex.EncodeToString(b[:])
}

// run is the whole tool: connect, load, measure, report, clean up.
func run(ctx context.Context, cfg config, out, progress io.Writer) error {
	c, err := connect(cfg.redisURL, slices.Max(cfg.concurrency), cfg.noAutoPipelining)
	if err != nil {
		return err
	}
	defer c.close()
	if c.mini {
		fmt.Fprintln(progress, "bench: WARNING: REDIS_URL is not set, so this runs on an embedded miniredis:"+
			" its figures say nothing about Redis or the SDK. Set REDIS_URL to measure.")
	}
	env, err := c.describe(ctx)
	if err != nil {
		return err
	}
	b, err := newBench(cfg, c)
	if err != nil {
		return err
	}
	if !cfg.keep {
		defer func() {
			// A fresh context: the cleanup must run after an interrupt too.
			cctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if n, err := c.deleteKeys(cctx, cfg.prefix+":{"+b.name); err != nil {
				fmt.Fprintln(progress, "bench: cleanup:", err)
			} else {
				fmt.Fprintf(progress, "bench: deleted the %d keys it wrote\n", n)
			}
		}()
	}
	fmt.Fprintf(progress, "bench: %s, %s; board %s:{%s}\n", c.where, env.redis, cfg.prefix, b.name)

	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	rep := &report{cfg: cfg, env: env, load: ld, board: b.describe()}
	if cfg.cpuProfile != "" {
		f, err := os.Create(cfg.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	for _, name := range cfg.ops {
		op := b.operation(name)
		for _, n := range cfg.concurrency {
			samples := make([][]sample, len(op.impls))
			for round := range cfg.rounds {
				for i, im := range op.impls {
					if ctx.Err() != nil {
						return ctx.Err()
					}
					fmt.Fprintf(progress, "bench: %s %s c=%d round %d/%d\n", op.name, im.name, n, round+1, cfg.rounds)
					s, err := measure(ctx, c, im, n, cfg.duration, cfg.commandStats)
					if err != nil {
						return fmt.Errorf("%s (%s, c=%d): %w", op.name, im.name, n, err)
					}
					samples[i] = append(samples[i], s)
				}
			}
			for i, im := range op.impls {
				f := combine(im.units, samples[i])
				f.op, f.impl, f.conc = op.name, im.name, n
				rep.figures = append(rep.figures, f)
			}
		}
		rep.ops = append(rep.ops, op)
	}
	return rep.write(out)
}
