package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// The coalescing report (-batch): -c goroutines (the highest given) each
// send bursts of -burst Submits at once to -batch-members members and wait
// for them, first through a Batcher (WithBatchWindow -batch-window,
// WithBatchSize -batch-size), then as plain Submits, -d each, in -rounds
// rounds. Per phase: submissions/s, each submission's own latency (p50,
// p99), the commands the SDK sent Redis per submission (counted on the
// client: one EVALSHA, or each command of a MULTI), Redis's CPU per
// submission (INFO cpu) and this process's (getrusage: the SDK's,
// rueidis's and the tool's own work, which both phases pay).

// countingClient counts the commands sent through it.
type countingClient struct {
	rueidis.Client
	n atomic.Int64
}

func (c *countingClient) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	c.n.Add(1)
	return c.Client.Do(ctx, cmd)
}

func (c *countingClient) DoMulti(ctx context.Context, cmds ...rueidis.Completed) []rueidis.RedisResult {
	c.n.Add(int64(len(cmds)))
	return c.Client.DoMulti(ctx, cmds...)
}

// coalescePhase is one phase of a round.
type coalescePhase struct {
	subs     int64
	elapsed  time.Duration
	lat      []time.Duration // every submission's, sorted
	commands int64
	cpu      float64 // Redis CPU seconds, all nodes
	// client is this process's CPU time across the phase (the SDK's,
	// rueidis's and the tool's own goroutines alike); -1 when the
	// system does not tell it.
	client time.Duration
}

func (p coalescePhase) rate() float64 { return float64(p.subs) / p.elapsed.Seconds() }

// clientPer is the process's CPU µs a submission, "n/a" when the system
// does not tell it.
func (p coalescePhase) clientPer() string {
	if p.client < 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f", float64(p.client.Microseconds())/float64(p.subs))
}

// runCoalesce loads the members, then measures the two phases in rounds,
// and writes the report to out.
func runCoalesce(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	cc := &countingClient{Client: b.c.rue}
	board, err := leaderboard.New(cc, b.name, b.opts...)
	if err != nil {
		return err
	}
	conc := slices.Max(b.cfg.concurrency)
	var batched, plain []coalescePhase
	for r := range b.cfg.rounds {
		fmt.Fprintf(progress.w, "bench: batch: round %d/%d: a Batcher, then plain Submits\n", r+1, b.cfg.rounds)
		bt, err := board.NewBatcher(leaderboard.WithBatchWindow(b.cfg.batchWindow), leaderboard.WithBatchSize(b.cfg.batchSize))
		if err != nil {
			return err
		}
		ph, err := b.runPhase(ctx, cc, conc, bt.Submit)
		if cerr := bt.Close(ctx); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("batcher: %w", err)
		}
		batched = append(batched, ph)
		if ph, err = b.runPhase(ctx, cc, conc, board.Submit); err != nil {
			return fmt.Errorf("submit: %w", err)
		}
		plain = append(plain, ph)
	}
	writeCoalesce(out, b, env, ld, conc, batched, plain)
	return nil
}

// runPhase runs conc goroutines sending bursts through submit for -d,
// after the warm-up every measurement of the tool has (warmup): the
// first round then meets a Batcher, connections and scripts as the
// others do, not what the load left behind.
func (b *bench) runPhase(ctx context.Context, cc *countingClient, conc int, submit func(context.Context, string, float64, ...leaderboard.SubmitOption) (leaderboard.Result, error)) (coalescePhase, error) {
	if _, _, err := b.bursts(ctx, conc, warmup(b.cfg.duration), submit); err != nil {
		return coalescePhase{}, err
	}
	runtime.GC()
	var ph coalescePhase
	cpu0, _ := b.c.redisCPU(ctx)
	n0 := cc.n.Load()
	client0, ok0 := processCPU()
	lat, elapsed, err := b.bursts(ctx, conc, b.cfg.duration, submit)
	client1, ok1 := processCPU()
	ph.elapsed = elapsed
	ph.commands = cc.n.Load() - n0
	ph.client = -1
	if ok0 && ok1 {
		ph.client = client1 - client0
	}
	cpu1, _ := b.c.redisCPU(ctx)
	ph.cpu = cpu1 - cpu0
	ph.lat = lat
	ph.subs = int64(len(lat))
	slices.Sort(ph.lat)
	return ph, err
}

// bursts runs conc goroutines sending bursts through submit for d; it
// returns every submission's latency and the time the bursts took.
func (b *bench) bursts(ctx context.Context, conc int, d time.Duration, submit func(context.Context, string, float64, ...leaderboard.SubmitOption) (leaderboard.Result, error)) ([]time.Duration, time.Duration, error) {
	var (
		mu       sync.Mutex
		all      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	start := time.Now()
	deadline := start.Add(d)
	for g := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &worker{r: rand.New(rand.NewPCG(uint64(g), uint64(start.UnixNano())))}
			var lat []time.Duration
			for time.Now().Before(deadline) {
				got, err := b.burst(ctx, w, submit)
				lat = append(lat, got...)
				if err != nil {
					mu.Lock()
					firstErr = cmp.Or(firstErr, err)
					mu.Unlock()
					return
				}
			}
			mu.Lock()
			all = append(all, lat...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return all, time.Since(start), firstErr
}

// burst sends -burst submissions at once and waits for them all; it
// returns each one's latency.
func (b *bench) burst(ctx context.Context, w *worker, submit func(context.Context, string, float64, ...leaderboard.SubmitOption) (leaderboard.Result, error)) ([]time.Duration, error) {
	lat := make([]time.Duration, b.cfg.burst)
	errs := make([]error, b.cfg.burst)
	var wg sync.WaitGroup
	for i := range b.cfg.burst {
		m, v := b.members[w.pick(b.cfg.batchMembers)], b.scores[w.pick(poolSize)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			t := time.Now()
			_, errs[i] = submit(ctx, m, v)
			lat[i] = time.Since(t)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return lat, err
		}
	}
	return lat, nil
}

// writeCoalesce writes runCoalesce's report: each round's two phases, and
// the targets.
func writeCoalesce(out io.Writer, b *bench, env environment, ld loadReport, conc int, batched, plain []coalescePhase) {
	var w strings.Builder
	cfg := b.cfg
	fmt.Fprintf(&w, "**Coalescing** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s\n- Board: %s\n", env.cpus, env.procs, env.goVersion, env.redis, b.describe())
	(&report{cfg: cfg, load: ld}).writeLoad(&w, true)
	fmt.Fprintf(&w, "- Each round: %d goroutines, each sending bursts of %d Submits at once to %s members and waiting for them, for %v through a Batcher, then %v as plain Submits, each phase after %v of the same bursts not measured\n\n",
		conc, cfg.burst, thousands(float64(cfg.batchMembers)), cfg.duration, cfg.duration, warmup(cfg.duration))
	w.WriteString("| round | phase | submissions/s | p50 | p99 | commands sent per submission | Redis CPU µs per submission | client CPU µs per submission |\n|---|---|---|---|---|---|---|---|\n")
	var ratios, cmds, p99s []float64
	for i := range batched {
		for _, ph := range []struct {
			name string
			p    coalescePhase
		}{{"Batcher", batched[i]}, {"Submit", plain[i]}} {
			if ph.p.subs == 0 {
				fmt.Fprintf(&w, "| %d | %s | no data | | | | | |\n", i+1, ph.name)
				continue
			}
			fmt.Fprintf(&w, "| %d | %s | %s | %s | %s | %.4f | %.1f | %s |\n", i+1, ph.name, thousands(ph.p.rate()),
				dur(percentile(ph.p.lat, 0.50)), dur(percentile(ph.p.lat, 0.99)),
				float64(ph.p.commands)/float64(ph.p.subs), ph.p.cpu*1e6/float64(ph.p.subs), ph.p.clientPer())
		}
		// A phase that finished no submission has no figure: its round
		// counts towards no target.
		if batched[i].subs > 0 {
			cmds = append(cmds, float64(batched[i].commands)/float64(batched[i].subs))
			p99s = append(p99s, percentile(batched[i].lat, 0.99).Seconds())
			if plain[i].subs > 0 {
				ratios = append(ratios, batched[i].rate()/plain[i].rate())
			}
		}
	}
	limit := cfg.batchWindow + 2*time.Millisecond
	ts := []target{
		{what: "Batcher: commands sent per submission at most 0.1", vals: cmds, meets: atMost(0.1), show: func(v float64) string { return fmt.Sprintf("%.4f", v) }},
		{what: "Batcher: submissions/s at least 3x plain Submit", vals: ratios, meets: atLeast(3), show: ratioShow},
		{what: fmt.Sprintf("Batcher: p99 latency at most the window plus 2 ms (%v)", limit), vals: p99s, meets: atMost(limit.Seconds()), show: secondsShow},
	}
	fmt.Fprintf(&w, "\n**Targets** (median of %d round(s), lowest..highest)\n\n| target | measured | verdict |\n|---|---|---|\n", len(batched))
	for _, t := range ts {
		fmt.Fprintf(&w, "| %s | %s | %s |\n", t.what, t.measured(), t.verdict())
	}
	fmt.Fprint(out, w.String())
}
