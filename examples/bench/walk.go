package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"time"
	"unsafe"

	"github.com/skiprank/leaderboard"
)

// The All walk (-walk): the whole board walked with All beside the walk a
// user writes by hand with raw rueidis, a ZRANGE of walkChunk positions at
// a time by rank offsets over the raw set holding the same members, in
// -rounds rounds, each round All first, then the raw walk; entries/s of
// each, the ratio, and the Go heap in use sampled during each walk, to
// show that neither grows with the board.

// walkChunk is how many entries a round trip of the raw walk reads: MaxN,
// what All reads a round trip.
const walkChunk = leaderboard.MaxN

// heapEvery is how often the heap in use is sampled during a walk.
const heapEvery = 10 * time.Millisecond

// walkFigure is one walk.
type walkFigure struct {
	entries int64
	elapsed time.Duration
	// heapBefore is HeapInuse after a GC right before the walk; heapPeak
	// the largest HeapInuse sampled during it; samples how many samples.
	heapBefore, heapPeak uint64
	samples              int
	// commands is what INFO commandstats counted across the walk, by
	// command, with -commandstats.
	commands map[string]cmdStat
}

func (f walkFigure) rate() float64 { return float64(f.entries) / f.elapsed.Seconds() }

// runWalk loads the members, then walks the board and the raw set in
// rounds, and writes the report to out.
func runWalk(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	var sdk, raw []walkFigure
	for r := range b.cfg.rounds {
		fmt.Fprintf(progress.w, "bench: walk: round %d/%d: All, then the raw ZRANGE walk\n", r+1, b.cfg.rounds)
		s, err := b.timeWalk(ctx, b.walkAll)
		if err != nil {
			return fmt.Errorf("the walk with All: %w", err)
		}
		w, err := b.timeWalk(ctx, b.walkRaw)
		if err != nil {
			return fmt.Errorf("raw ZRANGE walk: %w", err)
		}
		sdk, raw = append(sdk, s), append(raw, w)
	}
	writeWalk(out, b, env, ld, sdk, raw)
	return nil
}

// timeWalk times walk and samples the heap in use every heapEvery while
// it runs; with -commandstats it reads INFO commandstats around it.
func (b *bench) timeWalk(ctx context.Context, walk func(context.Context) (int64, error)) (walkFigure, error) {
	var f walkFigure
	var cs0 map[string]cmdStat
	if b.cfg.commandStats {
		cs0, _ = b.c.commandStats(ctx) // nil where INFO commandstats is missing (miniredis)
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f.heapBefore, f.heapPeak = ms.HeapInuse, ms.HeapInuse
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(heapEvery)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				f.heapPeak = max(f.heapPeak, m.HeapInuse)
				f.samples++
			}
		}
	}()
	start := time.Now()
	n, err := walk(ctx)
	f.elapsed = time.Since(start)
	close(stop)
	<-done
	f.entries = n
	if cs1, csErr := b.c.commandStats(ctx); cs0 != nil && csErr == nil {
		f.commands = map[string]cmdStat{}
		for name, v := range cs1 {
			if d := (cmdStat{calls: v.calls - cs0[name].calls, usec: v.usec - cs0[name].usec}); d.calls > 0 && name != "info" {
				f.commands[name] = d
			}
		}
	}
	return f, err
}

// walkCommands is, per walkChunk entries walked, each command's calls and
// server time over every walk of figs (INFO commandstats).
func walkCommands(figs []walkFigure) string {
	var entries int64
	sum := map[string]cmdStat{}
	for _, f := range figs {
		entries += f.entries
		for name, v := range f.commands {
			sum[name] = cmdStat{calls: sum[name].calls + v.calls, usec: sum[name].usec + v.usec}
		}
	}
	names := slices.Sorted(maps.Keys(sum))
	parts := make([]string, 0, len(names))
	per := float64(walkChunk) / float64(entries)
	for _, n := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f× %.0fµs", n, sum[n].calls*per, sum[n].usec*per))
	}
	return strings.Join(parts, ", ")
}

// walkAll walks the board with All, checking that every member comes, at
// its rank.
func (b *bench) walkAll(ctx context.Context) (int64, error) {
	var n int64
	for e, err := range b.board.All(ctx) {
		if err != nil {
			return n, err
		}
		n++
		if !b.rankFits(e.Rank, n) {
			return n, fmt.Errorf("%w: entry %d has rank %d", errCheck, n, e.Rank)
		}
	}
	if n != int64(b.cfg.members) {
		return n, fmt.Errorf("%w: All yielded %d entries of %d", errCheck, n, b.cfg.members)
	}
	return n, nil
}

// walkRaw is the walk by hand: ZRANGE of walkChunk positions at a time,
// best first, until a chunk comes back short; each entry's rank is its
// offset plus one.
func (b *bench) walkRaw(ctx context.Context) (int64, error) {
	key := b.raw[0].key
	var n int64
	for off := int64(0); ; off += walkChunk {
		zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, off, off+walkChunk-1)).AsZScores()
		if err != nil {
			return n, err
		}
		for i := range zs {
			n++
			if rank := off + int64(i) + 1; rank != n || zs[i].Member == "" {
				return n, errCheck
			}
		}
		if len(zs) < walkChunk {
			break
		}
	}
	if n != int64(b.cfg.members) {
		return n, fmt.Errorf("%w: the raw walk read %d entries of %d", errCheck, n, b.cfg.members)
	}
	return n, nil
}

// writeWalk prints the walk report.
func writeWalk(out io.Writer, b *bench, env environment, ld loadReport, sdk, raw []walkFigure) {
	var w strings.Builder
	fmt.Fprintf(&w, "**All walk** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), b.cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s\n- Board: %s\n", env.cpus, env.procs, env.goVersion, env.redis, b.describe())
	(&report{cfg: b.cfg, load: ld}).writeLoad(&w, true)
	fmt.Fprintf(&w, "\n| round | All: entries/s | raw ZRANGE walk of %s: entries/s | All ÷ raw | Go heap in use before (after a GC) | peak during All | peak during the raw walk |\n|---|---|---|---|---|---|---|\n", thousands(walkChunk))
	ratios := make([]float64, len(sdk))
	samples := 0
	for i := range sdk {
		ratios[i] = sdk[i].rate() / raw[i].rate()
		samples += sdk[i].samples + raw[i].samples
		fmt.Fprintf(&w, "| %d | %s (%.2f s) | %s (%.2f s) | %.2fx | %s | %s | %s |\n", i+1,
			thousands(sdk[i].rate()), sdk[i].elapsed.Seconds(), thousands(raw[i].rate()), raw[i].elapsed.Seconds(), ratios[i],
			mib(sdk[i].heapBefore), mib(sdk[i].heapPeak), mib(raw[i].heapPeak))
	}
	t := target{what: fmt.Sprintf("All: entries/s >= 0.8x a raw ZRANGE walk in chunks of %s (%s members)", thousands(walkChunk), thousands(float64(b.cfg.members))),
		vals: ratios, meets: atLeast(0.8), show: ratioShow}
	fmt.Fprintf(&w, "\n**Target** (median of %d round(s), lowest..highest): %s: %s, %s.\n\n", len(ratios), t.what, t.measured(), t.verdict())
	n := float64(b.cfg.members)
	fmt.Fprintf(&w, "Every walk read all %s members, one after the other from one goroutine. The heap in use (runtime.ReadMemStats HeapInuse) was sampled every %v during the walks (%d samples in all); "+
		"holding the %s entries at once would take at least %s (%d bytes an Entry, their member strings aside).\n",
		thousands(n), heapEvery, samples, thousands(n), mib(uint64(n)*uint64(unsafe.Sizeof(leaderboard.Entry{}))), unsafe.Sizeof(leaderboard.Entry{}))
	if len(sdk[0].commands) > 0 {
		fmt.Fprintf(&w, "\nINFO commandstats per %s entries walked (calls, server time; a script's commands are counted under their own names too):\n\n- All: %s\n- raw ZRANGE walk: %s\n",
			thousands(walkChunk), walkCommands(sdk), walkCommands(raw))
	}
	fmt.Fprint(out, w.String())
}

func mib(x uint64) string { return fmt.Sprintf("%.1f MiB", float64(x)/(1<<20)) }
