package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// target is one of the targets the SDK is held to, with what each round
// of this run measured for it.
type target struct {
	what string
	// vals are the per-round values (a ratio, or seconds); one value for
	// what is measured once (the load).
	vals []float64
	// meets says whether one value meets the target.
	meets func(float64) bool
	// show formats a value.
	show func(float64) string
}

// verdict decides a target from its values: met when every value meets
// it, not met when none does, undecided when they straddle it. One round
// moves a ratio by half its value from one run to the next on a busy
// machine, so fewer than minVerdictRounds values decide nothing.
func (t target) verdict() string {
	if len(t.vals) < minVerdictRounds {
		return fmt.Sprintf("no verdict (%d of the %d samples it needs)", len(t.vals), minVerdictRounds)
	}
	n := 0
	for _, v := range t.vals {
		if t.meets(v) {
			n++
		}
	}
	switch n {
	case len(t.vals):
		return "met"
	case 0:
		return "not met"
	}
	return fmt.Sprintf("undecided (%d of %d rounds met it)", n, len(t.vals))
}

// measured is the median and, with several values, their range.
func (t target) measured() string {
	s := slices.Sorted(slices.Values(t.vals))
	if len(s) == 0 {
		return "no data"
	}
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	if len(s) == 1 {
		return t.show(m)
	}
	return fmt.Sprintf("%s (%s..%s)", t.show(m), t.show(s[0]), t.show(s[len(s)-1]))
}

func ratioShow(v float64) string { return fmt.Sprintf("%.2fx", v) }
func secondsShow(v float64) string {
	return dur(time.Duration(v * float64(time.Second)))
}
func atLeast(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
func atMost(x float64) func(float64) bool  { return func(v float64) bool { return v <= x } }
func under(x float64) func(float64) bool   { return func(v float64) bool { return v < x } }

// ratios are the SDK's per-round ratios to base at conc: ops/s (SDK over
// base) and p50 (SDK over base).
func (r *report) ratios(op, base string, conc int) (ops, p50 []float64, ok bool) {
	s, ok1 := r.figure(op, "sdk", conc)
	f, ok2 := r.figure(op, base, conc)
	if !ok1 || !ok2 || len(s.rounds) != len(f.rounds) {
		return nil, nil, false
	}
	for i := range s.rounds {
		if s.rounds[i].calls == 0 || f.rounds[i].calls == 0 {
			continue // a round that finished no call has no ratio
		}
		ops = append(ops, s.rounds[i].opsPerSec/f.rounds[i].opsPerSec)
		p50 = append(p50, s.rounds[i].p50.Seconds()/f.rounds[i].p50.Seconds())
	}
	return ops, p50, true
}

// targets lists every target this run measured.
func (r *report) targets() []target {
	var ts []target
	ts = append(ts, r.readTargets()...)
	ts = append(ts, r.submitTargets()...)
	if r.load.SDK > 0 {
		ts = append(ts, target{fmt.Sprintf("load with SubmitMany >= 0.8x pipelined ZADD of %s (one load; submit-many has the rounds)", thousands(float64(min(batchSize, r.cfg.members)))),
			[]float64{r.load.Raw.Seconds() / r.load.SDK.Seconds()}, atLeast(0.8), ratioShow})
	}
	if slices.Contains(r.cfg.concurrency, 1) {
		for _, op := range []string{"rank", "top", "around"} {
			if f, ok := r.figure(op, "sdk", 1); ok {
				var p99 []float64
				for _, rd := range f.rounds {
					if rd.calls > 0 { // no call, no latency: not one of 0
						p99 = append(p99, rd.p99.Seconds())
					}
				}
				ts = append(ts, target{fmt.Sprintf("%s: p99 at c=1 under 1 ms (%s members)", op, thousands(float64(r.cfg.members))),
					p99, under(time.Millisecond.Seconds()), secondsShow})
			}
		}
	}
	return ts
}

// readTargets are the reads' targets.
func (r *report) readTargets() []target {
	var ts []target
	hi, lo := slices.Max(r.cfg.concurrency), slices.Min(r.cfg.concurrency)
	for _, op := range []string{"top", "rank", "page", "page-deep", "count", "among", "top-data", "rank-data",
		"range", "between", "count-between", "around-score", "cutoff"} {
		// On one sorted set cutoff has only a two-round-trip baseline
		// (the position depends on the count: no MULTI holds both), and
		// around-score a MULTI of reads by score as well; "rueidis
		// shards" reads a sharded board's own keys, and "rueidis
		// shards MULTI" the same keys at one moment of a shard, as the SDK
		// reads them (shardreads.go).
		for _, base := range []string{"rueidis", "rueidis MULTI", "rueidis 2 RT", "rueidis shards", "rueidis shards MULTI", competitionName, "rueidis shards competition"} {
			if r.positionsOnly(op, base, hi) {
				continue
			}
			if ops, _, ok := r.ratios(op, base, hi); ok {
				ts = append(ts, target{fmt.Sprintf("%s: ops/s at c=%d >= 0.9x %s", op, hi, base), ops, atLeast(0.9), ratioShow})
			}
		}
	}
	if _, p50, ok := r.ratios("around", r.aroundBases(lo)[0], lo); ok {
		ts = append(ts, target{fmt.Sprintf("around: p50 at c=%d <= 0.6x %s", lo, aroundLabel(r.aroundBases(lo)[0])), p50, atMost(0.6), ratioShow})
	}
	for _, base := range r.aroundBases(hi) {
		if ops, _, ok := r.ratios("around", base, hi); ok {
			ts = append(ts, target{fmt.Sprintf("around: ops/s at c=%d >= 1.5x %s", hi, aroundLabel(base)), ops, atLeast(1.5), ratioShow})
		}
	}
	return ts
}

// aroundBases are the versions around's targets hold its one script to at
// conc: the articles' two round trips; under -ranking competition (a
// "rueidis competition" figure at conc) those return positions, and the
// targets hold the SDK to the competition version instead, two round
// trips as well (three when the slice's first entry ties the one before).
func (r *report) aroundBases(conc int) []string {
	if _, ok := r.figure("around", competitionName, conc); ok {
		return []string{competitionName}
	}
	return []string{"rueidis 2 RT", "go-redis 2 RT"}
}

// aroundLabel names one of aroundBases in a target.
func aroundLabel(base string) string {
	if base == competitionName {
		return competitionName + " (two round trips)"
	}
	return fmt.Sprintf("the two-round-trip %s version", strings.TrimSuffix(base, " 2 RT"))
}

// positionsOnly reports that base, a version of op, returns less than the
// SDK: the ordinal versions of a read that has a "rueidis competition"
// version (measured at conc; only under -ranking competition) return
// positions where the SDK returns competition ranks. Their ratios are in
// the tables; the targets hold the SDK to the versions that return the
// same data.
func (r *report) positionsOnly(op, base string, conc int) bool {
	if strings.HasSuffix(base, "competition") {
		return false
	}
	_, ok := r.figure(op, competitionName, conc)
	return ok
}

// submitTargets are the writes' targets.
func (r *report) submitTargets() []target {
	var ts []target
	hi, lo := slices.Max(r.cfg.concurrency), slices.Min(r.cfg.concurrency)
	if w := len(r.cfg.windows); w > 1 {
		if ops, _, ok := r.ratios("submit", "go-redis", hi); ok {
			ts = append(ts, target{fmt.Sprintf("submit (%d windows): ops/s at c=%d >= 1.5x go-redis, same reads and writes in one MULTI", w, hi), ops, atLeast(1.5), ratioShow})
		}
		if ops, _, ok := r.ratios("submit", "rueidis", hi); ok {
			ts = append(ts, target{fmt.Sprintf("submit (%d windows): ops/s at c=%d >= 0.9x raw rueidis", w, hi), ops, atLeast(0.9), ratioShow})
		}
	} else {
		if ops, _, ok := r.ratios("submit", "go-redis articles", hi); ok {
			ts = append(ts, target{fmt.Sprintf("submit (1 window): ops/s at c=%d >= 1.2x the articles' go-redis MULTI (3 ZADD GT + 2 EXPIRE)", hi), ops, atLeast(1.2), ratioShow})
		}
		if _, p50, ok := r.ratios("submit", "go-redis articles", lo); ok {
			ts = append(ts, target{fmt.Sprintf("submit (1 window): p50 at c=%d no worse than the articles' go-redis MULTI", lo), p50, atMost(1), ratioShow})
		}
	}
	for _, n := range r.cfg.concurrency {
		if ops, _, ok := r.ratios("submit-many", "rueidis", n); ok {
			ts = append(ts, target{fmt.Sprintf("submit-many: members/s at c=%d >= 0.8x pipelined ZADD of %s", n, thousands(float64(min(batchSize, r.cfg.members)))), ops, atLeast(0.8), ratioShow})
		}
	}
	return ts
}

// writeTargets checks the figures against the SDK's targets. They are
// information for BENCHMARKS.md: a run never fails on them.
func (r *report) writeTargets(b *strings.Builder, md bool) {
	ts := r.targets()
	if len(ts) == 0 {
		return
	}
	how := fmt.Sprintf("this run: median of %d round(s), lowest..highest", r.cfg.rounds)
	if r.env.redis == "miniredis" {
		how += "; miniredis, so they say nothing"
	}
	if md {
		fmt.Fprintf(b, "**Targets** (%s)\n\n| target | measured | verdict |\n|---|---|---|\n", how)
		for _, t := range ts {
			fmt.Fprintf(b, "| %s | %s | %s |\n", t.what, t.measured(), t.verdict())
		}
		b.WriteString("\n")
		return
	}
	b.WriteString("== targets (" + how + ")\n")
	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	for _, t := range ts {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", t.what, t.measured(), t.verdict())
	}
	_ = tw.Flush()
}
