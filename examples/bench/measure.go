package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/rueidis"
	"golang.org/x/sync/errgroup"

	"github.com/skiprank/leaderboard/internal/redisnode"
)

// figure is one implementation of one operation measured at one
// concurrency.
type figure struct {
	op, impl string
	conc     int
	// calls is how many calls finished in elapsed; units the members one
	// call handles.
	calls   int64
	units   int
	elapsed time.Duration
	// p50, p99 and p999 are the calls' latency percentiles.
	p50, p99, p999 time.Duration
	// allocs and bytes are this process's heap allocations per call.
	allocs, bytes float64
	// redisCPU is Redis's CPU time per call (user + system, every node), in
	// microseconds; NaN when INFO cpu is not available (miniredis).
	redisCPU float64
	// commands is what INFO commandstats counted per call, by command,
	// with -commandstats.
	commands map[string]cmdStat
	// rounds are the figure's rounds one by one, for the targets' spread.
	rounds []roundFigure
}

// roundFigure is one round's measurement of one implementation; a round
// that finished no call (calls 0) has no figure.
type roundFigure struct {
	calls     int64
	opsPerSec float64
	p50, p99  time.Duration
}

// cmdStat is one command's share of a call, from INFO commandstats.
type cmdStat struct {
	// calls is how many times it ran per call; usec its server time per
	// call (for EXEC and EVALSHA, the commands inside are counted under
	// their own names too).
	calls, usec float64
}

func (f figure) opsPerSec() float64 { return float64(f.calls) / f.elapsed.Seconds() }

// warmup is how long an implementation runs before it is measured: scripts
// get loaded, connections opened, the allocator warmed.
func warmup(d time.Duration) time.Duration { return min(d/5, time.Second) }

// sample is one measurement of one implementation.
type sample struct {
	lat            []time.Duration
	elapsed        time.Duration
	mallocs, bytes uint64
	redisCPU       float64            // seconds; NaN when unknown
	commands       map[string]cmdStat // totals over the sample; nil without -commandstats
}

// measure runs im from conc goroutines for d and measures it; with
// commands set it also reads INFO commandstats around the run.
func measure(ctx context.Context, c *conn, im impl, conc int, d time.Duration, commands bool) (sample, error) {
	if _, _, err := drive(ctx, im, conc, warmup(d), false); err != nil {
		return sample{}, err
	}
	runtime.GC()
	var cs0 map[string]cmdStat
	if commands {
		cs0, _ = c.commandStats(ctx)
	}
	cpu0, cpuErr := c.redisCPU(ctx)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	lat, elapsed, err := drive(ctx, im, conc, d, true)
	runtime.ReadMemStats(&m1)
	if err != nil {
		return sample{}, err
	}
	s := sample{lat: lat, elapsed: elapsed, mallocs: m1.Mallocs - m0.Mallocs, bytes: m1.TotalAlloc - m0.TotalAlloc, redisCPU: math.NaN()}
	if cpuErr == nil {
		if cpu1, err := c.redisCPU(ctx); err == nil {
			s.redisCPU = cpu1 - cpu0
		}
	}
	if cs0 != nil {
		if cs1, err := c.commandStats(ctx); err == nil {
			s.commands = map[string]cmdStat{}
			for name, v := range cs1 {
				d := cmdStat{calls: v.calls - cs0[name].calls, usec: v.usec - cs0[name].usec}
				if d.calls > 0 {
					s.commands[name] = d
				}
			}
		}
	}
	return s, nil
}

// commandStats reads INFO commandstats of every node, summed by command.
func (c *conn) commandStats(ctx context.Context) (map[string]cmdStat, error) {
	ms, err := c.info(ctx, "commandstats")
	if err != nil {
		return nil, err
	}
	out := map[string]cmdStat{}
	for _, m := range ms {
		for k, v := range m {
			name, ok := strings.CutPrefix(k, "cmdstat_")
			if !ok {
				continue
			}
			var st cmdStat
			for _, field := range strings.Split(v, ",") {
				key, val, _ := strings.Cut(field, "=")
				n, _ := strconv.ParseFloat(val, 64)
				switch key {
				case "calls":
					st.calls = n
				case "usec":
					st.usec = n
				}
			}
			cur := out[name]
			out[name] = cmdStat{calls: cur.calls + st.calls, usec: cur.usec + st.usec}
		}
	}
	return out, nil
}

// combine makes one figure of the samples of one implementation, taken in
// rounds interleaved with the other implementations' so that a machine
// growing busier or quieter during a run favours none of them.
func combine(units int, samples []sample) figure {
	f := figure{units: units}
	var lat []time.Duration
	var mallocs, bytes uint64
	for _, s := range samples {
		lat = append(lat, s.lat...)
		f.elapsed += s.elapsed
		mallocs += s.mallocs
		bytes += s.bytes
		f.redisCPU += s.redisCPU
	}
	f.calls = int64(len(lat))
	for _, s := range samples {
		f.rounds = append(f.rounds, roundFigure{calls: int64(len(s.lat))})
		if len(s.lat) > 0 {
			sorted := slices.Sorted(slices.Values(s.lat))
			r := &f.rounds[len(f.rounds)-1]
			r.opsPerSec, r.p50, r.p99 = float64(len(s.lat))/s.elapsed.Seconds(), percentile(sorted, 0.50), percentile(sorted, 0.99)
		}
	}
	if f.calls == 0 {
		// A call slower than the whole figure: no figure (the report
		// shows no data), not one made up of a call that never ended.
		f.allocs, f.bytes, f.redisCPU = math.NaN(), math.NaN(), math.NaN()
		return f
	}
	f.allocs = float64(mallocs) / float64(f.calls)
	f.bytes = float64(bytes) / float64(f.calls)
	f.redisCPU = f.redisCPU * 1e6 / float64(f.calls)
	for _, s := range samples {
		for name, v := range s.commands {
			if f.commands == nil {
				f.commands = map[string]cmdStat{}
			}
			cur := f.commands[name]
			f.commands[name] = cmdStat{calls: cur.calls + v.calls/float64(f.calls), usec: cur.usec + v.usec/float64(f.calls)}
		}
	}
	slices.Sort(lat)
	f.p50, f.p99, f.p999 = percentile(lat, 0.50), percentile(lat, 0.99), percentile(lat, 0.999)
	return f
}

// percentile is the nearest-rank percentile of sorted latencies.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}

// drive calls im from conc goroutines until d has passed and returns every
// call's latency (when record is set) and the wall time until the last call
// ended. The first error stops every goroutine and is returned.
func drive(ctx context.Context, im impl, conc int, d time.Duration, record bool) ([]time.Duration, time.Duration, error) {
	// The first error stops every goroutine (errgroup cancels ctx).
	g, ctx := errgroup.WithContext(ctx)
	lats := make([][]time.Duration, conc)
	start := time.Now()
	deadline := start.Add(d)
	for w := range conc {
		g.Go(func() error {
			wk := &worker{r: rand.New(rand.NewPCG(uint64(w), uint64(start.UnixNano())))}
			if record {
				lats[w] = make([]time.Duration, 0, 1<<14)
			}
			t0 := time.Now()
			for t0.Before(deadline) {
				if err := ctx.Err(); err != nil {
					return err
				}
				err := im.call(ctx, wk)
				t1 := time.Now()
				if record {
					lats[w] = append(lats[w], t1.Sub(t0))
				}
				if err != nil {
					return err
				}
				t0 = t1
			}
			return nil
		})
	}
	err := g.Wait()
	elapsed := time.Since(start)
	if errors.Is(err, errCheck) {
		err = fmt.Errorf("%w: the reply does not hold what was loaded", err)
	}
	return slices.Concat(lats...), elapsed, err
}

// nodeAddrs are the addresses of the Redis servers behind the client,
// sorted: one, or every primary of a Cluster (its replicas hold copies:
// their CPU is replication's, and they refuse writes).
func (c *conn) nodeAddrs() []string {
	return redisnode.Primaries(context.Background(), c.rue)
}

// nodes are the Redis servers behind the client, in nodeAddrs' order.
func (c *conn) nodes() []rueidis.Client {
	ns := c.rue.Nodes()
	addrs := c.nodeAddrs()
	out := make([]rueidis.Client, len(addrs))
	for i, a := range addrs {
		out[i] = ns[a]
	}
	return out
}

// info reads one INFO section of every node as field -> value maps.
func (c *conn) info(ctx context.Context, section string) ([]map[string]string, error) {
	var out []map[string]string
	for _, n := range c.nodes() {
		s, err := n.Do(ctx, n.B().Info().Section(section).Build()).ToString()
		if err != nil {
			return nil, err
		}
		m := map[string]string{}
		for _, line := range strings.Split(s, "\n") {
			if k, v, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
				m[k] = v
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// sumInfo adds a numeric INFO field over every node.
func (c *conn) sumInfo(ctx context.Context, section string, fields ...string) (float64, error) {
	ms, err := c.info(ctx, section)
	if err != nil {
		return 0, err
	}
	var sum float64
	for _, m := range ms {
		for _, f := range fields {
			v, err := strconv.ParseFloat(m[f], 64)
			if err != nil {
				return 0, fmt.Errorf("INFO %s has no number %s", section, f)
			}
			sum += v
		}
	}
	return sum, nil
}

// redisCPU is the CPU seconds every node has used.
func (c *conn) redisCPU(ctx context.Context) (float64, error) {
	return c.sumInfo(ctx, "cpu", "used_cpu_sys", "used_cpu_user")
}

// usedMemory is used_memory summed over every node, once no node has lazy
// frees pending (for at most 10 s); ok is false when INFO memory is not
// available.
func (c *conn) usedMemory(ctx context.Context) (int64, bool) {
	for range 100 {
		pending, err := c.sumInfo(ctx, "memory", "lazyfree_pending_objects")
		if err != nil || pending == 0 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	v, err := c.sumInfo(ctx, "memory", "used_memory")
	return int64(v), err == nil
}

// environment is what the figures were measured on.
type environment struct {
	goVersion    string
	cpus, procs  int
	redis        string
	nodes        int
	cluster      bool
	when         time.Time
	redisVersion string
}

func (c *conn) describe(ctx context.Context) (environment, error) {
	env := environment{goVersion: runtime.Version(), cpus: runtime.NumCPU(), procs: runtime.GOMAXPROCS(0),
		when: time.Now().UTC(), cluster: c.rue.Mode() == rueidis.ClientModeCluster, nodes: len(c.nodeAddrs())}
	if err := c.rue.Do(ctx, c.rue.B().Ping().Build()).Error(); err != nil {
		return env, fmt.Errorf("redis: %w", err)
	}
	env.redisVersion = "unknown version"
	if ms, err := c.info(ctx, "server"); err == nil && len(ms) > 0 && ms[0]["redis_version"] != "" {
		env.redisVersion = ms[0]["redis_version"]
	}
	switch {
	case c.mini:
		env.redis = "miniredis"
	case env.cluster:
		env.redis = fmt.Sprintf("Redis %s, Cluster of %d nodes", env.redisVersion, env.nodes)
	default:
		env.redis = "Redis " + env.redisVersion + ", standalone"
	}
	return env, nil
}

// deleteKeys unlinks every key starting with prefix on every node and
// returns how many it removed.
func (c *conn) deleteKeys(ctx context.Context, prefix string) (int64, error) {
	return redisnode.Unlink(ctx, c.rue, redisnode.GlobEscape(prefix)+"*")
}
