// Command bench measures the leaderboard SDK on your own Redis, beside the
// same work done with raw rueidis commands (and, for the hand-written code of
// the design articles, with go-redis) in the same run, and prints the ratios.
//
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/bench
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/bench -windows 4 -policy accumulate -ops submit,submit-many
//	REDIS_URL=redis://127.0.0.1:6379 go run ./examples/bench -members 10000000 -ops top,rank,around -c 1 -format md
//
// It loads -members members into a fresh board (a progress bar on stderr
// when stderr is a terminal, a line every few seconds otherwise), the same
// members into plain sorted sets with pipelined ZADDs of 1,000 members a
// command (the ceiling), reports the load times and Redis memory per member
// (INFO used_memory before and after each load), then measures every
// operation at every concurrency in -rounds rounds of -d per
// implementation: ops/s, p50, p99, p99.9, allocations and bytes per
// operation in this process, and Redis CPU per operation (INFO cpu, all
// nodes). Each target's verdict comes from the per-round ratios: met or not
// met only when every round agrees, undecided when they straddle it.
// Without REDIS_URL it runs on an embedded miniredis, whose figures mean
// nothing but show that the tool works. README.md explains the output.
//
// Every key it writes is under -prefix and a board name of its own
// ("lbbench:{bench-<random>}..."), and it deletes them at the end unless
// -keep is given. It reads INFO and writes nothing else, except that
// -remove-between and -delete set the latency monitor's and SLOWLOG's
// settings for their run and set them back at the end. A full run loads Redis hard for
// minutes: point it at a Redis you may load.
//
// -layout, -walk (All against a raw ZRANGE walk), -remove-between
// (RemoveBetween's Redis stalls against one ZREMRANGEBYSCORE) and -delete
// (Delete's against one DEL) are reports of their own instead of the
// operations.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"golang.org/x/term"

	"github.com/skiprank/leaderboard/internal/redisurl"
)

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Getenv, os.Stderr)
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	progress := console{w: os.Stderr, tty: term.IsTerminal(int(os.Stderr.Fd()))}
	if err := run(ctx, cfg, os.Stdout, progress); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// console is where progress goes, and whether it is a terminal, where a
// progress bar may redraw its line; elsewhere (a log file, a pipe) progress
// is whole lines.
type console struct {
	w   io.Writer
	tty bool
}

// conn is the Redis the tool measures, through both clients.
type conn struct {
	rue   rueidis.Client
	goRed redis.UniversalClient
	where string
	mini  bool
	close func()
	// opt is the rueidis options the client was built with: -remove-between
	// builds a client of its own per node from them (stall.go).
	opt rueidis.ClientOption
}

// connect connects both clients to url, or to an embedded miniredis when
// url is empty. go-redis gets a pool as large as the highest concurrency,
// so that its figures are not limited by waiting for a connection. No error
// holds the URL's password.
func connect(url string, pool int, noAutoPipelining bool) (*conn, error) {
	if url == "" {
		return connectMini(pool, noAutoPipelining)
	}
	opt, err := redisurl.Parse(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	// The SDK never reads through the client-side cache; tracking would only
	// cost a connection handshake.
	opt.DisableCache = true
	opt.DisableAutoPipelining = noAutoPipelining
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		return nil, fmt.Errorf("connect to %s: %w", redisurl.Redact(url), err)
	}
	var gc redis.UniversalClient
	if rc.Mode() == rueidis.ClientModeCluster {
		gc = redis.NewClusterClient(&redis.ClusterOptions{Addrs: opt.InitAddress, Username: opt.Username,
			Password: opt.Password, TLSConfig: opt.TLSConfig, PoolSize: pool})
	} else {
		gc = redis.NewClient(&redis.Options{Addr: opt.InitAddress[0], Username: opt.Username,
			Password: opt.Password, DB: opt.SelectDB, TLSConfig: opt.TLSConfig, PoolSize: pool})
	}
	return &conn{rue: rc, goRed: gc, where: redisurl.Redact(url), opt: opt, close: func() { gc.Close(); rc.Close() }}, nil
}

func connectMini(pool int, noAutoPipelining bool) (*conn, error) {
	mr, err := miniredis.Run()
	if err != nil {
		return nil, fmt.Errorf("start miniredis: %w", err)
	}
	// ForceSingleClient: miniredis answers CLUSTER commands, which would
	// make rueidis treat it as a one-node cluster.
	opt := rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true,
		DisableAutoPipelining: noAutoPipelining}
	rc, err := rueidis.NewClient(opt)
	if err != nil {
		mr.Close()
		return nil, fmt.Errorf("connect to miniredis: %w", err)
	}
	gc := redis.NewClient(&redis.Options{Addr: mr.Addr(), PoolSize: pool})
	return &conn{rue: rc, goRed: gc, where: "embedded miniredis at " + mr.Addr(), mini: true, opt: opt,
		close: func() { gc.Close(); rc.Close(); mr.Close() }}, nil
}

func randomName() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return "bench-" + hex.EncodeToString(b[:])
}

// run is the whole tool: connect, load, measure, report, clean up.
func run(ctx context.Context, cfg config, out io.Writer, progress console) (err error) {
	defer func() {
		if err != nil && ctx.Err() != nil {
			// Calls cut short by the interrupt fail in many ways (a closed
			// connection, a canceled context); the cause is the interrupt.
			err = errors.New("interrupted")
		}
	}()
	c, err := connect(cfg.redisURL, slices.Max(cfg.concurrency), cfg.noAutoPipelining)
	if err != nil {
		return err
	}
	defer c.close()
	if c.mini {
		fmt.Fprintf(progress.w, "bench: WARNING: REDIS_URL is not set, so this runs on an embedded miniredis:"+
			" its figures say nothing about Redis or the SDK. Set REDIS_URL to measure. (%d members, -d %v)\n", cfg.members, cfg.duration)
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
		defer b.deleteKeys(progress.w)
	}
	fmt.Fprintf(progress.w, "bench: %s, %s; board %s:{%s}\n", c.where, env.redis, cfg.prefix, b.name)

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
	switch {
	case cfg.layout:
		return runLayout(ctx, b, env, out, progress)
	case cfg.walk:
		return runWalk(ctx, b, env, out, progress)
	case cfg.removeBetween:
		return runRemoveBetween(ctx, b, env, out, progress)
	case cfg.delete:
		return runDelete(ctx, b, env, out, progress)
	case cfg.batch:
		return runCoalesce(ctx, b, env, out, progress)
	case cfg.hot:
		return runHot(ctx, b, env, out, progress)
	case len(cfg.replicas) > 0:
		return runReplicas(ctx, b, env, out, progress)
	}
	return runOps(ctx, b, env, out, progress)
}

// runOps runs the operations report, the one without a flag of its own:
// load the board and the plain sets, measure every operation, and write
// the figures to out.
func runOps(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	rep := &report{cfg: b.cfg, env: env, load: ld, board: b.describe()}
	if err := b.measureAll(ctx, rep, progress.w); err != nil {
		return err
	}
	return rep.write(out)
}

// deleteKeys deletes every key the run wrote, on a fresh context: the
// cleanup must run after an interrupt too.
func (b *bench) deleteKeys(progress io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if n, err := b.c.deleteKeys(ctx, b.cfg.prefix+":{"+b.name); err != nil {
		fmt.Fprintln(progress, "bench: cleanup:", err)
	} else {
		fmt.Fprintf(progress, "bench: deleted the %d keys it wrote\n", n)
	}
}

// measureAll measures every operation at every concurrency, in rounds that
// interleave the implementations, and adds the figures to rep.
func (b *bench) measureAll(ctx context.Context, rep *report, progress io.Writer) error {
	cfg := b.cfg
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
					s, err := measure(ctx, b.c, im, n, cfg.duration, cfg.commandStats)
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
	return nil
}
