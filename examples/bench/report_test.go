package main

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// TestNoCallsNoFigure: a figure whose rounds finished no call (a call
// slower than -d) shows no data: no rate, latency or per-call cost made
// up, no ratio, and no target met on it; a round without calls counts
// towards no target.
func TestNoCallsNoFigure(t *testing.T) {
	empty := sample{elapsed: time.Millisecond, mallocs: 10, bytes: 100, redisCPU: 0.001}
	full := sample{lat: []time.Duration{time.Millisecond, 2 * time.Millisecond}, elapsed: time.Second, redisCPU: 0.001}
	f := combine(1, []sample{empty, empty, empty})
	require.Zero(t, f.calls)
	g := combine(1, []sample{full, full, full})
	f.op, f.impl, f.conc = "top", "sdk", 1
	g.op, g.impl, g.conc = "top", "rueidis", 1
	for i, figs := range [][]figure{{f, g}, {g.with("sdk"), f.with("rueidis")}} {
		r := &report{cfg: config{concurrency: []int{1}, rounds: 3, members: 1000}, figures: figs}
		var b strings.Builder
		r.writeOp(&b, operation{name: "top", desc: "Top(10)"}, false)
		r.writeTargets(&b, false)
		out := b.String()
		require.Contains(t, out, "no data", out)
		require.NotContains(t, out, "NaN", out)
		require.NotContains(t, out, "Inf", out)
		require.NotContains(t, out, "0.00x", out)
		require.Regexp(t, `top: ops/s at c=1 >= 0.9x rueidis +no data +no verdict`, out)
		if i == 0 {
			// The SDK's figure has no calls: no target is met or not met.
			require.NotContains(t, out, " met", out)
			require.Regexp(t, `top: p99 at c=1 under 1 ms \(1,000 members\) +no data +no verdict`, out)
		}
	}

	// One round of three without calls: the two others decide nothing.
	h := combine(1, []sample{full, empty, full})
	require.Equal(t, int64(4), h.calls)
	h.op, h.impl, h.conc = "top", "sdk", 1
	r := &report{cfg: config{concurrency: []int{1}, rounds: 3, members: 1000}, figures: []figure{h, g}}
	for _, tg := range r.targets() {
		require.Len(t, tg.vals, 2, tg.what)
		require.Contains(t, tg.verdict(), "no verdict", tg.what)
	}
}

// with is f as implementation impl.
func (f figure) with(impl string) figure {
	f.impl = impl
	return f
}

// TestSubmitManyUnits: under 1,000 members a SubmitMany batch holds every
// member, and the figure's members/s and heading count what a call
// carries.
func TestSubmitManyUnits(t *testing.T) {
	for _, members := range []int{200, 1000, 5000} {
		cfg, err := parseFlags([]string{"-members", strconv.Itoa(members), "-ops", "submit-many", "-policy", "accumulate"}, noEnv, io.Discard)
		require.NoError(t, err)
		c, err := connectMini(1, false)
		require.NoError(t, err)
		b, err := newBench(cfg, c)
		require.NoError(t, err)
		op := b.operation("submit-many")
		want := min(members, batchSize)
		for _, bt := range b.batches {
			require.Len(t, bt, want)
		}
		require.Len(t, op.impls, 3)
		for _, im := range op.impls {
			require.Equal(t, want, im.units, im.name)
		}
		require.Contains(t, op.desc, "SubmitMany of "+strconv.Itoa(want)+" members")
		c.close()
	}
}

// TestCompetitionAroundTargets: under -ranking competition around's
// targets hold the SDK to "rueidis competition", as the other reads'
// targets do, and not to the ordinal versions, which return positions;
// under ordinal ranks they hold it to the articles' two round trips.
func TestCompetitionAroundTargets(t *testing.T) {
	fig := func(impl string, conc int) figure {
		f := figure{op: "around", impl: impl, conc: conc, calls: 3, elapsed: time.Second}
		for range 3 {
			f.rounds = append(f.rounds, roundFigure{calls: 1, opsPerSec: 100, p50: time.Millisecond, p99: time.Millisecond})
		}
		return f
	}
	for _, ranking := range []leaderboard.RankMode{leaderboard.Ordinal, leaderboard.Competition} {
		var figs []figure
		for _, c := range []int{1, 64} {
			impls := []string{"sdk", "sdk two-step", "rueidis 2 RT", "go-redis 2 RT"}
			if ranking == leaderboard.Competition {
				impls = append(impls, competitionName)
			}
			for _, im := range impls {
				figs = append(figs, fig(im, c))
			}
		}
		r := &report{cfg: config{concurrency: []int{1, 64}, rounds: 3, ranking: ranking, members: 1000}, figures: figs}
		var b strings.Builder
		r.writeTargets(&b, false)
		out := b.String()
		if ranking == leaderboard.Competition {
			require.Contains(t, out, "around: p50 at c=1 <= 0.6x rueidis competition (two round trips)", out)
			require.Contains(t, out, "around: ops/s at c=64 >= 1.5x rueidis competition (two round trips)", out)
			require.NotContains(t, out, "two-round-trip", out)
		} else {
			require.Contains(t, out, "around: p50 at c=1 <= 0.6x the two-round-trip rueidis version", out)
			require.Contains(t, out, "around: ops/s at c=64 >= 1.5x the two-round-trip rueidis version", out)
			require.Contains(t, out, "around: ops/s at c=64 >= 1.5x the two-round-trip go-redis version", out)
		}
	}
}

// TestUsageNamesEveryConfigChange: -h says that -delete, like
// -remove-between, changes the latency monitor's and SLOWLOG's settings,
// and which reports are Markdown only.
func TestUsageNamesEveryConfigChange(t *testing.T) {
	var cfg config
	var lists listFlags
	var out strings.Builder
	fs := flagSet(&cfg, &lists, &out)
	usage(fs)
	text := strings.Join(strings.Fields(out.String()), " ")
	require.Contains(t, text, "-remove-between and -delete also set latency-monitor-threshold, slowlog-log-slower-than and slowlog-max-len")
	require.Contains(t, text, "-batch, -hot and -replicas are Markdown")
}
