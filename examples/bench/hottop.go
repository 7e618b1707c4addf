package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// The hot top report (-hot): the board again with WithHotTop(10) on a
// client of its own that tracks keys (client-side caching), in -rounds
// rounds of four phases of -d each, while a writer submits -hot-rate random
// scores a second to the hot board (scores uniform over the loaded range:
// almost all below the top 10):
//
//   - the writer alone (the Redis CPU the other phases subtract);
//   - Top(10) at the highest -c through the board without a hot top;
//   - the same through the hot board (from the client's memory);
//   - Submits below the top at the highest -c, without and with the hot
//     top (the writer paused), one phase each.
//
// Then -hot-trials staleness trials: a Submit that enters the top, then
// Top(10) through the hot board, again and again, until it shows the
// write: the time from the Submit's return.

// hotK is the hot top's k and the Top's n.
const hotK = 10

// hotPhase is one timed phase.
type hotPhase struct {
	calls   int64
	elapsed time.Duration
	cpu     float64 // Redis CPU seconds, all nodes
}

func (p hotPhase) rate() float64 { return float64(p.calls) / p.elapsed.Seconds() }

// hotRound is one round's phases.
type hotRound struct {
	writer, top, cachedTop, submit, hotSubmit hotPhase
	misses                                    int64           // cached Tops' reads that reached Redis (cache misses)
	stale                                     []time.Duration // the staleness trials' delays, sorted
	staleOther                                []time.Duration // the same, the Submits from another process
}

// runHot loads the members, then measures the rounds and the staleness
// trials, and writes the report to out.
func runHot(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	if b.c.mini {
		return fmt.Errorf("-hot needs a real Redis: miniredis does not track keys for client-side caching (set REDIS_URL)")
	}
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	opt := b.c.opt
	opt.DisableCache = false
	cc, err := rueidis.NewClient(opt)
	if err != nil {
		return fmt.Errorf("a caching client: %w", err)
	}
	defer cc.Close()
	counted := &cacheCounter{Client: cc}
	hot, err := leaderboard.New(counted, b.name, append(slices.Clone(b.opts), leaderboard.WithHotTop(hotK))...)
	if err != nil {
		return err
	}
	// Another process's writes, with the hot top as every writer of the
	// board should have it: the tool's client, which caches nothing.
	other, err := leaderboard.New(b.c.rue, b.name, append(slices.Clone(b.opts), leaderboard.WithHotTop(hotK))...)
	if err != nil {
		return err
	}
	conc := slices.Max(b.cfg.concurrency)
	var rounds []hotRound
	for r := range b.cfg.rounds {
		fmt.Fprintf(progress.w, "bench: hot: round %d/%d: the phases, then %d staleness trials\n", r+1, b.cfg.rounds, b.cfg.hotTrials)
		rd, err := b.hotRound(ctx, hot, counted, conc)
		if err != nil {
			return err
		}
		if rd.stale, err = b.staleness(ctx, hot, hot, 2*r); err != nil {
			return err
		}
		if rd.staleOther, err = b.staleness(ctx, hot, other, 2*r+1); err != nil {
			return err
		}
		rounds = append(rounds, rd)
	}
	writeHot(out, b, env, ld, conc, rounds)
	return nil
}

// cacheCounter counts the cached reads that reach Redis (rueidis cache
// misses): a cached Top served from memory is one whose read found the
// cache (a hit), or that asked no cache at all (a snapshot the cache
// confirmed a moment before: WithHotTop's doc). Misses are few (a write
// into the top costs a cached Top one or two), so one counter costs the
// cached phase nothing: counting the hits, which 64 callers on two CPUs
// bump over a million times a second, cost 9% of it (a profile).
type cacheCounter struct {
	rueidis.Client
	n atomic.Int64
}

func (c *cacheCounter) DoCache(ctx context.Context, cmd rueidis.Cacheable, ttl time.Duration) rueidis.RedisResult {
	r := c.Client.DoCache(ctx, cmd, ttl)
	if !r.IsCacheHit() {
		c.n.Add(1)
	}
	return r
}

// misses is the cached reads that reached Redis so far.
func (c *cacheCounter) misses() int64 { return c.n.Load() }

// hotRound runs one round's phases.
func (b *bench) hotRound(ctx context.Context, hot *leaderboard.Leaderboard, counted *cacheCounter, conc int) (hotRound, error) {
	var rd hotRound
	stop, done := b.hotWriter(ctx, hot)
	var err error
	measure := func(p *hotPhase, c int, call func(context.Context, *rand.Rand) error) {
		if err == nil {
			*p, err = b.hotTimed(ctx, c, call)
		}
	}
	measure(&rd.writer, 1, func(ctx context.Context, _ *rand.Rand) error { time.Sleep(time.Millisecond); return nil })
	measure(&rd.top, conc, func(ctx context.Context, _ *rand.Rand) error { _, err := b.board.Top(ctx, hotK); return err })
	m0 := counted.misses()
	measure(&rd.cachedTop, conc, func(ctx context.Context, _ *rand.Rand) error { _, err := hot.Top(ctx, hotK); return err })
	rd.misses = counted.misses() - m0
	close(stop)
	if werr := <-done; err == nil {
		err = werr
	}
	below := func(board *leaderboard.Leaderboard) func(context.Context, *rand.Rand) error {
		return func(ctx context.Context, r *rand.Rand) error {
			_, err := board.Submit(ctx, b.members[r.IntN(poolSize)], b.scores[r.IntN(poolSize)]/2) // the lower half: never the top
			return err
		}
	}
	measure(&rd.submit, conc, below(b.board))
	measure(&rd.hotSubmit, conc, below(hot))
	rd.writer.calls = 0 // the writer phase times nothing but the writer
	return rd, err
}

// hotWriter submits -hot-rate random scores a second to board until stop
// is closed; done reports its first error.
func (b *bench) hotWriter(ctx context.Context, board *leaderboard.Leaderboard) (chan struct{}, chan error) {
	stop, done := make(chan struct{}), make(chan error, 1)
	go func() {
		r := rand.New(rand.NewPCG(b.cfg.seed, 0x686f74))
		tick := time.NewTicker(time.Second / time.Duration(b.cfg.hotRate))
		defer tick.Stop()
		var wg sync.WaitGroup
		var first atomic.Pointer[error]
		for {
			select {
			case <-stop:
				wg.Wait()
				if e := first.Load(); e != nil {
					done <- *e
				}
				close(done)
				return
			case <-tick.C:
				m, s := b.members[r.IntN(poolSize)], b.scores[r.IntN(poolSize)]
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := board.Submit(ctx, m, s); err != nil {
						first.CompareAndSwap(nil, &err)
					}
				}()
			}
		}
	}()
	return stop, done
}

// hotTimed calls call from conc goroutines for -d (drive) and reads
// Redis's CPU around it.
func (b *bench) hotTimed(ctx context.Context, conc int, call func(context.Context, *rand.Rand) error) (hotPhase, error) {
	cpu0, _ := b.c.redisCPU(ctx)
	lat, elapsed, err := drive(ctx, impl{call: func(ctx context.Context, w *worker) error { return call(ctx, w.r) }}, conc, b.cfg.duration, true)
	cpu1, _ := b.c.redisCPU(ctx)
	return hotPhase{calls: int64(len(lat)), elapsed: elapsed, cpu: cpu1 - cpu0}, err
}

// pollPause is the pause between a staleness trial's reads.
const pollPause = 20 * time.Microsecond

// staleness runs the trials: each a Submit through writer (the hot board,
// or another process's) above everything on the board, then Top(10)
// through the hot board until it shows it; it returns the delays from the
// Submit's return, sorted. Series numbers the trials' members apart.
func (b *bench) staleness(ctx context.Context, hot, writer *leaderboard.Leaderboard, series int) ([]time.Duration, error) {
	stop, done := b.hotWriter(ctx, hot)
	defer func() { close(stop); <-done }()
	var delays []time.Duration
	for i := range b.cfg.hotTrials {
		if _, err := hot.Top(ctx, hotK); err != nil { // the cache holds the top before the write
			return nil, err
		}
		n := series*b.cfg.hotTrials + i
		m, s := fmt.Sprintf("hot-%d", n), float64(b.cfg.scoreMax+n)
		if _, err := writer.Submit(ctx, m, s); err != nil {
			return nil, err
		}
		t := time.Now()
		for {
			top, err := hot.Top(ctx, hotK)
			if err != nil {
				return nil, err
			}
			if len(top) > 0 && top[0].Member == m {
				break
			}
			if time.Since(t) > 20*time.Second {
				return nil, fmt.Errorf("trial %d: the hot top did not show %s after 20 s", i, m)
			}
			// A moment between reads, as a caller that does other work
			// has: a loop of reads that never block keeps the client's
			// reader goroutine, which takes in the invalidation, from a
			// CPU (on two CPUs, with Redis and the writer beside it, p99s
			// of 5-10 ms where 1.5-2.6 ms with the pause: BENCHMARKS.md).
			time.Sleep(pollPause)
		}
		delays = append(delays, time.Since(t))
		time.Sleep(5 * time.Millisecond)
	}
	slices.Sort(delays)
	return delays, nil
}

// writeHot writes runHot's report: each round's phases, the staleness
// trials, and the targets.
func writeHot(out io.Writer, b *bench, env environment, ld loadReport, conc int, rounds []hotRound) {
	var w strings.Builder
	cfg := b.cfg
	fmt.Fprintf(&w, "**Hot top** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s\n- Board: %s; WithHotTop(%d) on a client that tracks keys\n", env.cpus, env.procs, env.goVersion, env.redis, b.describe(), hotK)
	(&report{cfg: cfg, load: ld}).writeLoad(&w, true)
	fmt.Fprintf(&w, "- Each round, %v a phase: a writer submitting %d random scores a second to the hot board alone; Top(%d) at c=%d without the hot top, then with it, the writer on; "+
		"Submits of scores in the lower half at c=%d without, then with, the writer off. From memory: the cached Tops that reached no Redis (rueidis's cache answered, or the snapshot it confirmed less than 100µs before). "+
		"Redis CPU per call: the phase's INFO cpu less the writer's alone, per call\n\n",
		cfg.duration, cfg.hotRate, hotK, conc, conc)
	w.WriteString("| round | Top/s | cached Top/s | from memory | Redis CPU µs a Top / a cached Top | Submit/s | with the hot top | Redis CPU µs a Submit / with the hot top | staleness p50 / p99 / max | from another process |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var speed, cpuShare, submit, stale []float64
	for i, rd := range rounds {
		base := rd.writer.cpu / rd.writer.elapsed.Seconds()
		per := func(p hotPhase) float64 {
			return max(p.cpu-base*p.elapsed.Seconds(), 0) * 1e6 / float64(max(p.calls, 1))
		}
		fmt.Fprintf(&w, "| %d | %s | %s | %.1f%% | %.2f / %.3f | %s | %s | %.1f / %.1f | %s / %s / %s | %s / %s / %s |\n", i+1,
			thousands(rd.top.rate()), thousands(rd.cachedTop.rate()), 100*float64(max(rd.cachedTop.calls-rd.misses, 0))/float64(max(rd.cachedTop.calls, 1)),
			per(rd.top), per(rd.cachedTop), thousands(rd.submit.rate()), thousands(rd.hotSubmit.rate()),
			rd.submit.cpu*1e6/float64(max(rd.submit.calls, 1)), rd.hotSubmit.cpu*1e6/float64(max(rd.hotSubmit.calls, 1)),
			dur(percentile(rd.stale, 0.5)), dur(percentile(rd.stale, 0.99)), dur(percentile(rd.stale, 1)),
			dur(percentile(rd.staleOther, 0.5)), dur(percentile(rd.staleOther, 0.99)), dur(percentile(rd.staleOther, 1)))
		stale = append(stale, percentile(rd.stale, 0.99).Seconds())
		// A phase that finished no call has no figure: its round counts
		// towards no target it enters.
		if rd.top.calls > 0 && rd.cachedTop.calls > 0 {
			speed = append(speed, rd.cachedTop.rate()/rd.top.rate())
			cpuShare = append(cpuShare, per(rd.cachedTop)/max(per(rd.top), 1e-9))
		}
		if rd.submit.calls > 0 && rd.hotSubmit.calls > 0 {
			submit = append(submit, (rd.hotSubmit.cpu/float64(rd.hotSubmit.calls))/(rd.submit.cpu/float64(rd.submit.calls)))
		}
	}
	fmt.Fprintf(&w, "\nStaleness: %d trials a round (a Submit entering the top, then Top(%d) from the same process every 20µs or so until it shows it; the time from the Submit's return); "+
		"from another process: %d more, each Submit through a board of its own with WithHotTop(%d) on the tool's other client (no target: the issue's is the same process's)\n", cfg.hotTrials, hotK, cfg.hotTrials, hotK)
	ts := []target{
		{what: fmt.Sprintf("cached Top(%d) at c=%d: at least 20x the uncached Top", hotK, conc), vals: speed, meets: atLeast(20), show: ratioShow},
		{what: "Redis CPU per cached Top under 5% of the uncached one", vals: cpuShare, meets: under(0.05), show: func(v float64) string { return fmt.Sprintf("%.2f%%", 100*v) }},
		{what: "Redis CPU per Submit below the top with WithHotTop at most 1.1x without", vals: submit, meets: atMost(1.1), show: ratioShow},
		{what: "staleness p99 at most 10 ms", vals: stale, meets: atMost(0.010), show: secondsShow},
	}
	fmt.Fprintf(&w, "\n**Targets** (median of %d round(s), lowest..highest)\n\n| target | measured | verdict |\n|---|---|---|\n", len(rounds))
	for _, t := range ts {
		fmt.Fprintf(&w, "| %s | %s | %s |\n", t.what, t.measured(), t.verdict())
	}
	fmt.Fprint(out, w.String())
}
