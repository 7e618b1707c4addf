package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// The RemoveBetween stall report (-remove-between): it loads the members,
// then, in -rounds rounds, removes the -remove highest-scored of them from
// the board with RemoveBetween(lo, +Inf) (chunks of MaxN, each one short
// script) and from the raw set holding the same members with one
// ZREMRANGEBYSCORE (the stall that chunking avoids), putting them back
// between rounds. During each removal, and during an idle second before
// them (the machine's own noise), it watches how long Redis stalls three
// ways: a PING every pingEvery to every node from a connection of its own
// (what another client waits), Redis's latency monitor, and SLOWLOG's
// longest command on the removal's keys.

const (
	// stallTarget is the longest stall a chunked removal may cause.
	stallTarget = 10 * time.Millisecond
	pingEvery   = time.Millisecond
	// pingLead is how long the PINGs run before and after a removal.
	pingLead = 20 * time.Millisecond
	idleFor  = time.Second
	// slowlogOver is the SLOWLOG threshold the report sets, in µs: every
	// chunk of a removal above it is logged, no PING is.
	slowlogOver = 100
	slowlogLen  = 4096
)

// stallFigure is one phase of a round: a removal, or the idle second.
type stallFigure struct {
	removed int64
	elapsed time.Duration
	// pingMax is the longest PING round trip of pings PINGs, over of them
	// above stallTarget.
	pingMax     time.Duration
	pings, over int
	// latencyMs is the latency monitor's largest sample (ms) in the
	// phase's seconds, any event: 0 when none (every command under 1 ms),
	// -1 unknown (miniredis, or CONFIG refused).
	latencyMs int64
	// slowMax is the longest command on the phase's keys in SLOWLOG, of
	// slowCount logged (over slowlogOver µs); -1 unknown.
	slowMax   time.Duration
	slowCount int
}

// stallRound is one round: idle, RemoveBetween, ZREMRANGEBYSCORE.
type stallRound struct{ idle, sdk, raw stallFigure }

// runRemoveBetween loads the members, measures the rounds and writes the
// report to out.
func runRemoveBetween(ctx context.Context, b *bench, env environment, out io.Writer, progress console) error {
	ld, err := b.load(ctx, progress)
	if err != nil {
		return err
	}
	lo, victims := b.removalRange()
	sw, err := newStallWatch(ctx, b.c, progress.w)
	if err != nil {
		return err
	}
	defer sw.close(progress.w)
	var rounds []stallRound
	for r := range b.cfg.rounds {
		if r > 0 {
			fmt.Fprintf(progress.w, "bench: remove-between: putting the %s members back\n", thousands(float64(len(victims))))
			if err := b.putBack(ctx, victims); err != nil {
				return err
			}
		}
		fmt.Fprintf(progress.w, "bench: remove-between: round %d/%d: idle, RemoveBetween, ZREMRANGEBYSCORE\n", r+1, b.cfg.rounds)
		rd, err := b.stallRound(ctx, sw, lo)
		if err != nil {
			return err
		}
		if rd.sdk.removed != int64(len(victims)) || rd.raw.removed != int64(len(victims)) {
			return fmt.Errorf("%w: RemoveBetween removed %d and ZREMRANGEBYSCORE %d, want %d", errCheck, rd.sdk.removed, rd.raw.removed, len(victims))
		}
		rounds = append(rounds, rd)
	}
	writeStall(out, b, env, ld, lo, len(victims), rounds)
	return nil
}

// removalRange is the lowest score of the cfg.remove highest-scored loaded
// members, and every member scored that or more (ties may add a few).
func (b *bench) removalRange() (float64, []int) {
	scores := make([]float64, b.cfg.members)
	for i := range scores {
		scores[i] = b.loadScore(i)
	}
	sorted := slices.Clone(scores)
	slices.Sort(sorted)
	lo := sorted[len(sorted)-b.cfg.remove]
	var victims []int
	for i, s := range scores {
		if s >= lo {
			victims = append(victims, i)
		}
	}
	return lo, victims
}

// stallRound measures one round's three phases.
func (b *bench) stallRound(ctx context.Context, sw *stallWatch, lo float64) (stallRound, error) {
	var rd stallRound
	var err error
	sdkKey := func(arg string) bool {
		return strings.Contains(arg, "{"+b.name+"}") || strings.Contains(arg, "{"+b.name+"#")
	}
	rawKey := b.raw[0].key
	rd.idle, err = sw.phase(ctx, func(ctx context.Context) (int64, error) {
		select {
		case <-time.After(idleFor):
		case <-ctx.Done():
		}
		return 0, ctx.Err()
	}, func(string) bool { return false })
	if err != nil {
		return rd, err
	}
	rd.sdk, err = sw.phase(ctx, func(ctx context.Context) (int64, error) {
		return b.board.RemoveBetween(ctx, lo, math.Inf(1))
	}, sdkKey)
	if err != nil {
		return rd, fmt.Errorf("RemoveBetween: %w", err)
	}
	rd.raw, err = sw.phase(ctx, func(ctx context.Context) (int64, error) {
		return b.c.rue.Do(ctx, b.c.rue.B().Zremrangebyscore().Key(rawKey).Min(formatScore(lo)).Max("+inf").Build()).AsInt64()
	}, func(arg string) bool { return arg == rawKey })
	if err != nil {
		return rd, fmt.Errorf("ZREMRANGEBYSCORE: %w", err)
	}
	return rd, nil
}

// putBack submits the removed members again, with their loaded scores, to
// the board and to the raw set, batchSize members a call.
func (b *bench) putBack(ctx context.Context, victims []int) error {
	rawKey := b.raw[0].key
	for lo := 0; lo < len(victims); lo += batchSize {
		part := victims[lo:min(lo+batchSize, len(victims))]
		batch := make(map[string]float64, len(part))
		z := b.c.rue.B().Zadd().Key(rawKey).ScoreMember()
		for _, i := range part {
			batch[member(i)] = b.loadScore(i)
			z = z.ScoreMember(b.loadScore(i), member(i))
		}
		if err := b.board.SubmitMany(ctx, batch); err != nil {
			return err
		}
		if err := b.c.rue.Do(ctx, z.Build()).Error(); err != nil {
			return err
		}
	}
	return nil
}

// stallWatch watches Redis stall: a PING client of its own per node, and
// the latency monitor's and SLOWLOG's settings it changed, to restore.
type stallWatch struct {
	c       *conn
	pingers []rueidis.Client
	// saved is each node's settings before (nil: not monitored).
	saved []map[string]string
}

// newStallWatch opens the PING clients and turns the latency monitor and
// SLOWLOG on; on miniredis, or where CONFIG is refused, only the PINGs.
func newStallWatch(ctx context.Context, c *conn, progress io.Writer) (*stallWatch, error) {
	sw := &stallWatch{c: c}
	for _, addr := range c.nodeAddrs() {
		o := c.opt
		o.InitAddress, o.ForceSingleClient = []string{addr}, true
		cl, err := rueidis.NewClient(o)
		if err == nil {
			err = cl.Do(ctx, cl.B().Ping().Build()).Error()
		}
		if err != nil {
			sw.close(progress)
			return nil, fmt.Errorf("PING client for %s: %w", addr, err)
		}
		sw.pingers = append(sw.pingers, cl)
	}
	if c.mini {
		return sw, nil
	}
	if err := sw.monitor(ctx); err != nil {
		fmt.Fprintf(progress, "bench: remove-between: no latency monitor or SLOWLOG (%v): PINGs only\n", err)
		sw.restore(progress)
	}
	return sw, nil
}

// monitoredSettings are the settings monitor changes, and to what.
var monitoredSettings = [][2]string{
	{"latency-monitor-threshold", "1"},
	{"slowlog-log-slower-than", fmt.Sprint(slowlogOver)},
	{"slowlog-max-len", fmt.Sprint(slowlogLen)},
}

// monitor saves every node's settings, then sets monitoredSettings.
func (sw *stallWatch) monitor(ctx context.Context) error {
	nodes := sw.c.nodes()
	for _, n := range nodes {
		get := n.B().ConfigGet().Parameter(monitoredSettings[0][0], monitoredSettings[1][0], monitoredSettings[2][0]).Build()
		m, err := n.Do(ctx, get).AsStrMap()
		if err != nil {
			return err
		}
		sw.saved = append(sw.saved, m)
	}
	for _, n := range nodes {
		set := n.B().ConfigSet().ParameterValue()
		for _, kv := range monitoredSettings {
			set = set.ParameterValue(kv[0], kv[1])
		}
		if err := n.Do(ctx, set.Build()).Error(); err != nil {
			return err
		}
	}
	return nil
}

// restore sets every node's settings back; where the latency monitor was
// off, it also drops the events it recorded (LATENCY RESET).
func (sw *stallWatch) restore(progress io.Writer) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i, n := range sw.c.nodes() {
		if i >= len(sw.saved) {
			break
		}
		set := n.B().ConfigSet().ParameterValue()
		for _, kv := range monitoredSettings {
			set = set.ParameterValue(kv[0], sw.saved[i][kv[0]])
		}
		err := n.Do(ctx, set.Build()).Error()
		if err == nil && sw.saved[i]["latency-monitor-threshold"] == "0" {
			err = n.Do(ctx, n.B().LatencyReset().Build()).Error()
		}
		if err != nil {
			fmt.Fprintf(progress, "bench: remove-between: restoring the latency monitor and SLOWLOG settings: %v\n", err)
		}
	}
	sw.saved = nil
}

func (sw *stallWatch) close(progress io.Writer) {
	sw.restore(progress)
	for _, cl := range sw.pingers {
		cl.Close()
	}
}

// phase runs do between whole seconds (the latency monitor's and SLOWLOG's
// clocks are seconds), PINGing from pingLead before it to pingLead after
// it, and reads what the monitor and SLOWLOG saw in its seconds; ours
// picks the phase's keys among a logged command's arguments.
func (sw *stallWatch) phase(ctx context.Context, do func(context.Context) (int64, error), ours func(string) bool) (stallFigure, error) {
	f := stallFigure{latencyMs: -1, slowMax: -1}
	if err := untilNextSecond(ctx); err != nil {
		return f, err
	}
	from := time.Now().Unix()
	pg := sw.startPings()
	time.Sleep(pingLead)
	start := time.Now()
	n, err := do(ctx)
	f.removed, f.elapsed = n, time.Since(start)
	time.Sleep(pingLead)
	f.pingMax, f.pings, f.over = pg.stop()
	if err != nil {
		return f, err
	}
	if pg.err != nil {
		return f, fmt.Errorf("PING: %w", pg.err)
	}
	to := time.Now().Unix()
	if sw.saved == nil {
		return f, nil
	}
	if f.latencyMs, err = sw.latencyMax(ctx, from, to); err != nil {
		return f, err
	}
	f.slowMax, f.slowCount, err = sw.slowest(ctx, from, to, ours)
	return f, err
}

// untilNextSecond waits into the next whole second, so that two phases
// never share one.
func untilNextSecond(ctx context.Context) error {
	now := time.Now()
	select {
	case <-time.After(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now)):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// latencyMax is the largest latency monitor sample (ms) of any event on
// any node between the unix seconds from and to.
func (sw *stallWatch) latencyMax(ctx context.Context, from, to int64) (int64, error) {
	var most int64
	for _, n := range sw.c.nodes() {
		latest, err := n.Do(ctx, n.B().LatencyLatest().Build()).ToArray()
		if err != nil {
			return 0, err
		}
		for _, ev := range latest {
			fields, err := ev.ToArray()
			if err != nil || len(fields) == 0 {
				return 0, fmt.Errorf("LATENCY LATEST: %v", err)
			}
			name, _ := fields[0].ToString()
			hist, err := n.Do(ctx, n.B().LatencyHistory().Event(name).Build()).ToArray()
			if err != nil {
				return 0, err
			}
			for _, h := range hist {
				if s, err := h.AsIntSlice(); err == nil && len(s) == 2 && s[0] >= from && s[0] <= to {
					most = max(most, s[1])
				}
			}
		}
	}
	return most, nil
}

// slowest is the longest command logged in SLOWLOG on any node between the
// unix seconds from and to with an argument ours, and how many were.
func (sw *stallWatch) slowest(ctx context.Context, from, to int64, ours func(string) bool) (time.Duration, int, error) {
	var most time.Duration
	count := 0
	for _, n := range sw.c.nodes() {
		entries, err := n.Do(ctx, n.B().SlowlogGet().Count(slowlogLen).Build()).ToArray()
		if err != nil {
			return 0, 0, err
		}
		for _, e := range entries {
			f, err := e.ToArray()
			if err != nil || len(f) < 4 {
				return 0, 0, fmt.Errorf("SLOWLOG GET: an entry of %d fields (%v)", len(f), err)
			}
			at, err1 := f[1].AsInt64()
			usec, err2 := f[2].AsInt64()
			args, err3 := f[3].AsStrSlice()
			if err1 != nil || err2 != nil || err3 != nil {
				return 0, 0, fmt.Errorf("SLOWLOG GET: an entry that does not decode")
			}
			if at < from || at > to || !slices.ContainsFunc(args, ours) {
				continue
			}
			count++
			most = max(most, time.Duration(usec)*time.Microsecond)
		}
	}
	return most, count, nil
}

// pinging is the PINGs of one phase.
type pinging struct {
	halt chan struct{}
	wg   sync.WaitGroup
	mu   sync.Mutex
	most time.Duration
	n    int
	over int
	err  error
}

// startPings PINGs every node every pingEvery, each from its own
// goroutine and connection, until stop.
func (sw *stallWatch) startPings() *pinging {
	pg := &pinging{halt: make(chan struct{})}
	for _, cl := range sw.pingers {
		pg.wg.Add(1)
		go pg.run(cl)
	}
	return pg
}

func (pg *pinging) run(cl rueidis.Client) {
	defer pg.wg.Done()
	t := time.NewTicker(pingEvery)
	defer t.Stop()
	for {
		select {
		case <-pg.halt:
			return
		case <-t.C:
		}
		start := time.Now()
		err := cl.Do(context.Background(), cl.B().Ping().Build()).Error()
		d := time.Since(start)
		pg.mu.Lock()
		pg.most, pg.n = max(pg.most, d), pg.n+1
		if d > stallTarget {
			pg.over++
		}
		if err != nil && pg.err == nil {
			pg.err = err
		}
		pg.mu.Unlock()
	}
}

// stop ends the PINGs and returns the longest round trip, how many PINGs
// and how many of them took over stallTarget.
func (pg *pinging) stop() (time.Duration, int, int) {
	close(pg.halt)
	pg.wg.Wait()
	return pg.most, pg.n, pg.over
}

// writeStall prints the RemoveBetween stall report.
func writeStall(out io.Writer, b *bench, env environment, ld loadReport, lo float64, removed int, rounds []stallRound) {
	var w strings.Builder
	fmt.Fprintf(&w, "**RemoveBetween** %s: `%s`\n\n", env.when.Format("2006-01-02 15:04:05 UTC"), b.cfg.commandLine())
	fmt.Fprintf(&w, "- Machine: %d CPUs (GOMAXPROCS %d), %s; %s\n- Board: %s\n", env.cpus, env.procs, env.goVersion, env.redis, b.describe())
	(&report{cfg: b.cfg, load: ld}).writeLoad(&w, true)
	fmt.Fprintf(&w, "- Removed each round: the %s members scored %s or more, with RemoveBetween(%s, +Inf) from the board and one ZREMRANGEBYSCORE %s +inf from the raw set holding the same members; put back between rounds\n",
		thousands(float64(removed)), formatScore(lo), formatScore(lo), formatScore(lo))
	fmt.Fprintf(&w, "- Stalls: a PING every %v to each node from a connection of its own (round trips as this process sees them, its scheduling included; idle: %v with nothing removed); "+
		"the latency monitor's largest sample in the phase's seconds, any event (threshold 1 ms: \"<1 ms\" when nothing reached it); "+
		"the longest single command on the phase's keys in SLOWLOG (commands over %d µs; \"logged\" counts a script and each command it ran over that)", pingEvery, idleFor, slowlogOver)
	if rounds[0].sdk.latencyMs < 0 {
		w.WriteString("; n/a: this Redis has no latency monitor or SLOWLOG the tool may set (miniredis, or CONFIG refused)\n\n")
	} else {
		w.WriteString("; both settings restored afterwards\n\n")
	}
	w.WriteString("| round | phase | removed | time | longest PING (PINGs, over 10 ms) | latency monitor | longest command on its keys (SLOWLOG, logged) |\n|---|---|---|---|---|---|---|\n")
	var pings, slow []float64
	for i, rd := range rounds {
		for _, ph := range []struct {
			name string
			f    stallFigure
		}{{"idle", rd.idle}, {"RemoveBetween", rd.sdk}, {"one ZREMRANGEBYSCORE", rd.raw}} {
			removed := thousands(float64(ph.f.removed))
			if ph.name == "idle" {
				removed = ""
			}
			fmt.Fprintf(&w, "| %d | %s | %s | %s | %s (%d, %d) | %s | %s |\n", i+1, ph.name, removed, dur(ph.f.elapsed),
				dur(ph.f.pingMax), ph.f.pings, ph.f.over, latencyText(ph.f.latencyMs), slowText(ph.f))
		}
		pings = append(pings, rd.sdk.pingMax.Seconds())
		if rd.sdk.slowMax >= 0 {
			slow = append(slow, rd.sdk.slowMax.Seconds())
		}
	}
	ts := []target{{what: fmt.Sprintf("RemoveBetween of %s members: longest PING round trip under 10 ms", thousands(float64(removed))), vals: pings, meets: under(stallTarget.Seconds()), show: secondsShow}}
	if len(slow) > 0 {
		ts = append(ts, target{what: fmt.Sprintf("RemoveBetween of %s members: longest command on the board's keys (SLOWLOG) under 10 ms", thousands(float64(removed))), vals: slow, meets: under(stallTarget.Seconds()), show: secondsShow})
	}
	fmt.Fprintf(&w, "\n**Targets** (median of %d round(s), lowest..highest)\n\n| target | measured | verdict |\n|---|---|---|\n", len(rounds))
	for _, t := range ts {
		fmt.Fprintf(&w, "| %s | %s | %s |\n", t.what, t.measured(), t.verdict())
	}
	fmt.Fprint(out, w.String())
}

func latencyText(ms int64) string {
	switch {
	case ms < 0:
		return "n/a"
	case ms == 0:
		return "<1 ms"
	}
	return fmt.Sprintf("%d ms", ms)
}

func slowText(f stallFigure) string {
	switch {
	case f.slowMax < 0:
		return "n/a"
	case f.slowCount == 0:
		return fmt.Sprintf("none over %d µs", slowlogOver)
	}
	return fmt.Sprintf("%s (%d)", dur(f.slowMax), f.slowCount)
}
