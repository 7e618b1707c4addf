package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strings"
)

// runDelete loads the board (every window of -windows holding every
// member), times Delete of the whole board beside one DEL of the raw set
// holding the same members, -rounds times (the board and the set loaded
// again between rounds), and reports the longest Redis stall during each:
// the issue's "Delete of a board with 4 windows and 1M members: no stall
// above 10 ms" (UNLINK frees the sets in the background; a DEL frees them
// in the server's one thread).
func runDelete(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	sw, err := newStallWatch(ctx, b.c, progress.w)
	if err != nil {
		return err
	}
	defer sw.close(progress.w)
	sdkKey := func(arg string) bool {
		return strings.Contains(arg, "{"+b.name+"}") || strings.Contains(arg, "{"+b.name+"#")
	}
	rawKey := b.raw[0].key
	var rounds []stallRound
	for r := range b.cfg.rounds {
		if r > 0 {
			fmt.Fprintf(progress.w, "bench: delete: loading the board again\n")
			if _, err := b.load(ctx, progress); err != nil {
				return err
			}
		}
		fmt.Fprintf(progress.w, "bench: delete: round %d/%d: Delete, then DEL of the raw set\n", r+1, b.cfg.rounds)
		var rd stallRound
		rd.sdk, err = sw.phase(ctx, func(ctx context.Context) (int64, error) {
			n, err := b.board.Count(ctx)
			if err != nil {
				return 0, err
			}
			return n, b.board.Delete(ctx)
		}, sdkKey)
		if err != nil {
			return fmt.Errorf("delete: %w", err)
		}
		rd.raw, err = sw.phase(ctx, func(ctx context.Context) (int64, error) {
			// The members the DEL frees, counted first as the Delete
			// phase counts the board's: DEL's own reply is the one key.
			n, err := b.c.rue.Do(ctx, b.c.rue.B().Zcard().Key(rawKey).Build()).AsInt64()
			if err != nil {
				return 0, err
			}
			if deleted, err := b.c.rue.Do(ctx, b.c.rue.B().Del().Key(rawKey).Build()).AsInt64(); err != nil || deleted != 1 {
				return n, cmp.Or(err, fmt.Errorf("%w: DEL deleted %d keys, not the raw set", errCheck, deleted))
			}
			return n, nil
		}, func(arg string) bool { return arg == rawKey })
		if err != nil {
			return fmt.Errorf("DEL: %w", err)
		}
		rounds = append(rounds, rd)
	}
	writeDelete(out, b, env, ld, rounds)
	return nil
}

// writeDelete writes runDelete's report: each round's two phases, and the
// target.
func writeDelete(out io.Writer, b *bench, env environment, ld loadReport, rounds []stallRound) {
	var w strings.Builder
	fmt.Fprintf(&w, "**Delete** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), b.cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s\n- Board: %s\n", env.cpus, env.procs, env.goVersion, env.redis, b.describe())
	(&report{cfg: b.cfg, load: ld}).writeLoad(&w, true)
	fmt.Fprintf(&w, "- Each round: Delete of the whole board (its count first), then one DEL of the raw set holding the same members (its ZCARD first); both loaded again between rounds. "+
		"Stalls measured as in -remove-between: a PING every %v to each node, the latency monitor, SLOWLOG\n\n", pingEvery)
	w.WriteString("| round | phase | members | time | longest PING (PINGs, over 10 ms) | latency monitor | longest command on its keys (SLOWLOG, logged) |\n|---|---|---|---|---|---|---|\n")
	var pings []float64
	for i, rd := range rounds {
		for _, ph := range []struct {
			name string
			f    stallFigure
		}{{"Delete", rd.sdk}, {"one DEL of the raw set", rd.raw}} {
			fmt.Fprintf(&w, "| %d | %s | %s | %s | %s (%d, %d) | %s | %s |\n", i+1, ph.name, thousands(float64(ph.f.removed)), dur(ph.f.elapsed),
				dur(ph.f.pingMax), ph.f.pings, ph.f.over, latencyText(ph.f.latencyMs), slowText(ph.f))
		}
		pings = append(pings, rd.sdk.pingMax.Seconds())
	}
	t := target{what: "Delete: longest PING round trip under 10 ms", vals: pings, meets: under(stallTarget.Seconds()), show: secondsShow}
	fmt.Fprintf(&w, "\n**Targets** (median of %d round(s), lowest..highest)\n\n| target | measured | verdict |\n|---|---|---|\n| %s | %s | %s |\n", len(rounds), t.what, t.measured(), t.verdict())
	fmt.Fprint(out, w.String())
}
