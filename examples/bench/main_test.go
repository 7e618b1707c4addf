package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testnet"
)

func noEnv(string) string { return "" }

// realEnv names a Redis, so that parseFlags keeps the real defaults.
func realEnv(k string) string {
	if k == "REDIS_URL" {
		return "redis://127.0.0.1:6379"
	}
	return ""
}

// realURL is the Redis the real-Redis run uses; without one it skips, or
// fails under CI=true.
func realURL(t *testing.T) string {
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379"
	}
	return reachable(t, url)
}

// clusterURL is the Redis Cluster of the test command (REDIS_CLUSTER_ADDRS,
// comma-separated host:port, default 127.0.0.1:7000-7002) as one URL.
func clusterURL(t *testing.T) string {
	addrs := strings.Split(os.Getenv("REDIS_CLUSTER_ADDRS"), ",")
	if addrs[0] == "" {
		addrs = []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}
	}
	url := "redis://" + addrs[0]
	sep := "?"
	for _, a := range addrs[1:] {
		url += sep + "addr=" + a
		sep = "&"
	}
	return reachable(t, url)
}

// backendURL is the REDIS_URL of a test's backend: "" (miniredis), the
// real Redis, or the Cluster.
func backendURL(t *testing.T, backend string) string {
	switch backend {
	case "redis":
		return realURL(t)
	case "cluster":
		return clusterURL(t)
	}
	return ""
}

func reachable(t *testing.T, url string) string {
	opt, err := redisurl.Parse(url)
	require.NoError(t, err)
	opt.DisableCache = true
	c, err := rueidis.NewClient(opt)
	if err == nil {
		err = c.Do(context.Background(), c.B().Ping().Build()).Error()
		c.Close()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real Redis at %s is required under CI=true: %v", redisurl.Redact(url), err)
		}
		t.Skipf("no Redis at %s (set REDIS_URL or REDIS_CLUSTER_ADDRS, or run the test command): %v", redisurl.Redact(url), err)
	}
	return url
}

// TestRun runs the whole tool at a small size, every operation, on
// miniredis, a real Redis and a Redis Cluster, and checks that it reports every figure
// and leaves no key behind.
func TestRun(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		for _, args := range [][]string{
			{"-members", "500", "-d", "100ms", "-c", "1,3", "-format", "md", "-commandstats"},
			{"-members", "300", "-d", "100ms", "-c", "2", "-windows", "4", "-policy", "accumulate", "-order", "lowest", "-tiebreak", "later",
				"-ops", "submit,submit-many,around,among,range,between,count-between,around-score,cutoff,set", "-rounds", "1"},
			{"-members", "300", "-d", "100ms", "-c", "2", "-shards", "4", "-ops", "submit,rank,top,page-deep,count,range,between,count-between,around-score,cutoff,set", "-rounds", "2", "-no-auto-pipelining"},
			{"-members", "300", "-d", "100ms", "-c", "2", "-shards", "4", "-ranking", "competition", "-score-max", "50", "-ops", "top,rank,range,between,around-score,cutoff", "-rounds", "1"},
		} {
			t.Run(backend+" "+strings.Join(args, " "), func(t *testing.T) {
				cfg, err := parseFlags(args, noEnv, io.Discard)
				require.NoError(t, err)
				cfg.redisURL = backendURL(t, backend)
				cfg.name = randomName()
				var out, progress bytes.Buffer
				require.NoError(t, run(context.Background(), cfg, &out, console{w: &progress}))
				report := out.String()
				for _, op := range cfg.ops {
					if cfg.format == "md" {
						require.Contains(t, report, "**"+op+"**", report)
					} else {
						require.Contains(t, report, "== "+op+":", report)
					}
				}
				if cfg.format == "md" {
					require.Contains(t, report, "`"+cfg.commandLine()+"`", "the report's command line is the one that reproduces the run")
				}
				require.Contains(t, report, "sdk")
				require.Contains(t, report, "rueidis")
				require.Contains(t, report, "load")
				require.NotContains(t, report, "NaN")
				require.Contains(t, report, fmt.Sprintf("median of %d round(s)", cfg.rounds))
				if backend == "miniredis" {
					require.Contains(t, progress.String(), "WARNING")
				} else {
					require.NotContains(t, progress.String(), "WARNING")
					require.Contains(t, report, "used_memory")
				}
				require.Contains(t, progress.String(), "deleted the")
				if backend == "cluster" {
					require.Contains(t, report, "Cluster of")
				}
				if backend != "miniredis" {
					requireNoKeys(t, cfg.redisURL, cfg.prefix+":{"+cfg.name)
				}
			})
		}
	}
}

// TestLayout runs the layout report on a real Redis and a Cluster: every
// structure of both boards is sized (on a Cluster once the shards' recent
// versions expired, up to a minute), every node has its row, a move to new
// bounds is measured, and no key is left behind; miniredis, which lacks
// MEMORY USAGE, is refused.
func TestLayout(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		t.Run(backend, func(t *testing.T) {
			cfg, err := parseFlags([]string{"-layout", "-members", "2000", "-shards", "4", "-layout-submits", "300", "-c", "4"}, noEnv, io.Discard)
			require.NoError(t, err)
			cfg.redisURL = backendURL(t, backend)
			cfg.name = randomName()
			var out, progress bytes.Buffer
			err = run(context.Background(), cfg, &out, console{w: &progress})
			if backend == "miniredis" {
				require.ErrorContains(t, err, "miniredis")
				return
			}
			require.NoError(t, err)
			report := out.String()
			for _, want := range []string{"unsharded: period (sorted set)", "sharded: shards (sorted sets)", "sharded: partitions (hashes)",
				"Sharded ÷ unsharded bytes per member", "A sharded Submit costs Redis",
				"**Moving to new bounds**", "- FillShadow: 2000 members in", "A Submit that keeps the shadow against one that does not"} {
				require.Contains(t, report, want, report)
			}
			if backend == "cluster" {
				// The load's versions, sized, then waited out.
				require.Contains(t, report, "Sized once the shards' recent versions had expired", report)
				require.NotContains(t, report, recentKind, report)
			}
			c, err := connect(cfg.redisURL, 1, false)
			require.NoError(t, err)
			defer c.close()
			for _, a := range c.nodeAddrs() {
				require.Contains(t, report, "| "+a+" |", report)
			}
			require.NotContains(t, report, "NaN")
			requireNoKeys(t, cfg.redisURL, cfg.prefix+":{"+cfg.name)
		})
	}
}

// TestModes runs -walk and -remove-between at a small size on miniredis, a
// real Redis and a Cluster, unsharded and sharded: every round is
// reported with its figures, the latency monitor and SLOWLOG settings are
// as they were before, and no key is left behind.
func TestModes(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		for _, args := range [][]string{
			{"-walk", "-members", "2500", "-rounds", "2", "-commandstats"},
			{"-walk", "-members", "2500", "-rounds", "1", "-shards", "4", "-order", "lowest", "-tiebreak", "earlier"},
			{"-remove-between", "-members", "3000", "-remove", "1200", "-rounds", "2"},
			{"-remove-between", "-members", "3000", "-rounds", "1", "-shards", "4", "-policy", "accumulate"},
			{"-delete", "-members", "2000", "-rounds", "2", "-windows", "alltime,daily,weekly,monthly"},
			{"-batch", "-members", "2000", "-rounds", "2", "-d", "300ms", "-c", "8", "-burst", "10", "-policy", "accumulate"},
			{"-hot", "-members", "2000", "-rounds", "1", "-d", "300ms", "-c", "8", "-hot-trials", "5", "-hot-rate", "200"},
		} {
			if args[0] == "-hot" && backend == "miniredis" {
				continue // no client-side caching on miniredis: -hot refuses it
			}
			t.Run(backend+" "+strings.Join(args, " "), func(t *testing.T) {
				cfg, err := parseFlags(args, noEnv, io.Discard)
				require.NoError(t, err)
				cfg.redisURL = backendURL(t, backend)
				cfg.name = randomName()
				before := monitorSettings(t, cfg.redisURL)
				var out, progress bytes.Buffer
				require.NoError(t, run(context.Background(), cfg, &out, console{w: &progress}), progress.String())
				report := out.String()
				require.NotContains(t, report, "NaN")
				require.Contains(t, report, fmt.Sprintf("median of %d round(s)", cfg.rounds), report)
				require.Contains(t, report, "`"+cfg.commandLine()+"`", "the report's command line is the one that reproduces the run")
				if cfg.walk {
					require.Contains(t, report, "**All walk**", report)
					require.Contains(t, report, fmt.Sprintf("| %d | ", cfg.rounds), report)
					require.Contains(t, report, "All: entries/s >= 0.8x a raw ZRANGE walk", report)
					if cfg.commandStats && backend != "miniredis" {
						// Server-wide counts: other clients' commands may show
						// too, subcommands among them (client|caching).
						require.Regexp(t, `- All: [a-z|]+ \d+\.\d\d×`, report)
						require.Regexp(t, `- raw ZRANGE walk: .*zrange \d+\.\d\d×`, report)
					}
				} else if cfg.batch {
					require.Contains(t, report, "**Coalescing**", report)
					require.Contains(t, report, fmt.Sprintf("| %d | Batcher |", cfg.rounds), report)
					require.Contains(t, report, "commands sent per submission at most 0.1", report)
				} else if cfg.hot {
					require.Contains(t, report, "**Hot top**", report)
					// Cached Tops from memory (a write into the top costs a miss or two).
					require.Regexp(t, `\| (9\d|100)\.\d% \|`, report)
					require.Contains(t, report, "staleness p99 at most 10 ms", report)
				} else if cfg.delete {
					require.Contains(t, report, "**Delete**", report)
					require.Contains(t, report, fmt.Sprintf("| %d | Delete | %s |", cfg.rounds, thousands(float64(cfg.members))), report)
					// The raw set's members, not DEL's reply (one key).
					require.Contains(t, report, fmt.Sprintf("| %d | one DEL of the raw set | %s |", cfg.rounds, thousands(float64(cfg.members))), report)
				} else {
					require.Contains(t, report, "**RemoveBetween**", report)
					removed := thousands(float64(cfg.remove))
					require.Contains(t, report, fmt.Sprintf("| %d | RemoveBetween | %s |", cfg.rounds, removed), report)
					require.Contains(t, report, fmt.Sprintf("| %d | one ZREMRANGEBYSCORE | %s |", cfg.rounds, removed), report)
					if backend != "miniredis" {
						require.NotContains(t, report, "n/a", report)
					}
				}
				require.Equal(t, before, monitorSettings(t, cfg.redisURL), "settings not restored")
				if backend != "miniredis" {
					requireNoKeys(t, cfg.redisURL, cfg.prefix+":{"+cfg.name)
				}
			})
		}
	}
}

// monitorSettings are every node's latency monitor and SLOWLOG settings;
// nil on miniredis.
func monitorSettings(t *testing.T, url string) []map[string]string {
	if url == "" {
		return nil
	}
	c, err := connect(url, 1, false)
	require.NoError(t, err)
	defer c.close()
	var out []map[string]string
	for _, n := range c.nodes() {
		m, err := n.Do(context.Background(), n.B().ConfigGet().Parameter("latency-monitor-threshold", "slowlog-log-slower-than", "slowlog-max-len").Build()).AsStrMap()
		require.NoError(t, err)
		out = append(out, m)
	}
	return out
}

// requireNoKeys checks that no key starts with prefix (and deletes any).
func requireNoKeys(t *testing.T, url, prefix string) {
	c, err := connect(url, 1, false)
	require.NoError(t, err)
	defer c.close()
	n, err := c.deleteKeys(context.Background(), prefix)
	require.NoError(t, err)
	require.Zero(t, n, "the run left keys behind")
}

func TestParseFlags(t *testing.T) {
	cfg, err := parseFlags(nil, realEnv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1_000_000, cfg.members)
	require.Equal(t, []int{1, 64}, cfg.concurrency)
	require.Equal(t, []string{"submit", "submit-many", "top", "rank", "around", "page", "page-deep", "among", "count",
		"range", "between", "count-between", "around-score", "cutoff", "set"}, cfg.ops, "all, without -data: no data operations")
	require.Equal(t, 100_000, cfg.remove)
	require.Equal(t, []string{"alltime"}, cfg.windows)
	require.Equal(t, 2*time.Second, cfg.duration)
	require.Equal(t, 3, cfg.rounds)

	cfg, err = parseFlags([]string{"-windows", "4", "-ops", "rank, top"}, realEnv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"alltime", "daily", "weekly", "monthly"}, cfg.windows)
	require.Equal(t, []string{"rank", "top"}, cfg.ops)
	cfg, err = parseFlags([]string{"-data", "32"}, realEnv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, allOps, cfg.ops, "all, with -data")

	for _, bad := range [][]string{
		{"-members", "10"},
		{"-windows", "hourly"},
		{"-windows", "daily,daily"},
		{"-policy", "best"},
		{"-order", "up"},
		{"-ranking", "dense"},
		{"-shards", "1"},
		{"-tiebreak", "first"},
		{"-c", "0"},
		{"-c", "1,x"},
		{"-d", "0s"},
		{"-ops", "rank,fly"},
		{"-format", "html"},
		{"-rounds", "0"},
		{"-score-max", "1"},
		{"-load-c", "0"},
		{"-layout"},
		{"-layout", "-shards", "4", "-layout-submits", "0"},
		{"-ops", "top-data"},
		{"-data", "-1"},
		{"-data", "4097"},
		{"-walk", "-remove-between"},
		{"-delete", "-walk"},
		{"-walk", "-layout", "-shards", "4"},
		{"-remove-between", "-remove", "0"},
		{"-remove-between", "-members", "1000", "-remove", "1001"},
		{"extra"},
		// Flags that once failed only after connecting and loading.
		{"-batch", "-batch-window", "0"},
		{"-batch", "-batch-window", "-1s"},
		{"-batch", "-batch-window", "61s"},
		{"-batch", "-batch-size", "0"},
		{"-batch", "-batch-size", "1001"},
		{"-replicas", ""},
		{"-replicas", ","},
		{"-replicas", "127.0.0.1:6380,"},
		{"-replicas", "127.0.0.1"},
		{"-replicas", "127.0.0.1:6380,127.0.0.1:6380"},
		{"-prefix", ""},
		{"-prefix", "lb bench"},
		{"-prefix", "lb{x}"},
		{"-tiebreak", "earlier", "-score-max", "1099511627776"},
		// An operation measured twice.
		{"-ops", "top,top"},
		{"-ops", "rank, top,rank"},
		// No call may finish in so short a -d.
		{"-d", "99ms"},
	} {
		_, err := parseFlags(bad, realEnv, io.Discard)
		require.Error(t, err, "%v", bad)
	}
}

func TestPercentile(t *testing.T) {
	lat := make([]time.Duration, 1000)
	for i := range lat {
		lat[i] = time.Duration(i+1) * time.Microsecond
	}
	require.Equal(t, 500*time.Microsecond, percentile(lat, 0.5))
	require.Equal(t, 990*time.Microsecond, percentile(lat, 0.99))
	require.Equal(t, 999*time.Microsecond, percentile(lat, 0.999))
	require.Equal(t, time.Duration(0), percentile(nil, 0.5))
	require.Equal(t, 7*time.Second, percentile([]time.Duration{7 * time.Second}, 0.999))
}

func TestThousands(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 999: "999", 1000: "1,000", 1234567.4: "1,234,567", -45678: "-45,678"} {
		require.Equal(t, want, thousands(in))
	}
}

// TestMain lets a test run this binary as the program itself (main, with
// its own arguments and environment), the way a person runs it.
func TestMain(m *testing.M) {
	if os.Getenv("BENCH_RUN_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestHelpTouchesNothing: -h prints the usage, exits 0 and never connects
// to REDIS_URL (a listener that counts connections).
func TestHelpTouchesNothing(t *testing.T) {
	addr, accepted := testnet.CountingListener(t)
	for _, arg := range []string{"-h", "-help", "--help"} {
		// TestMain runs main before the testing flags are parsed: the
		// arguments are the program's alone.
		cmd := exec.CommandContext(t.Context(), os.Args[0], arg)
		cmd.Env = append(os.Environ(), "BENCH_RUN_MAIN=1", "REDIS_URL=redis://"+addr)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		require.NoError(t, cmd.Run(), stderr.String())
		require.Contains(t, stderr.String(), "Usage: go run ./examples/bench")
		require.Contains(t, stderr.String(), "REDIS_URL")
		require.Contains(t, stderr.String(), "-rounds")
		require.Empty(t, stdout.String())
	}
	require.Zero(t, accepted.Load(), "-h connected to REDIS_URL")
}

// TestMiniredisDefaults: without REDIS_URL the run is small unless the
// flags say otherwise; with it the defaults are the real ones.
func TestMiniredisDefaults(t *testing.T) {
	cfg, err := parseFlags(nil, noEnv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, miniMembers, cfg.members)
	require.Equal(t, miniDuration, cfg.duration)
	require.Equal(t, miniMembers/10, cfg.remove)
	cfg, err = parseFlags([]string{"-members", "500", "-d", "1s"}, noEnv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 500, cfg.members)
	require.Equal(t, time.Second, cfg.duration)
	cfg, err = parseFlags(nil, realEnv, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1_000_000, cfg.members)
}

// TestConnectURL: a trailing slash is the default database, and no error
// holds the URL's password, malformed or unreachable.
func TestConnectURL(t *testing.T) {
	mr := miniredis.RunT(t)
	c, err := connect("redis://"+mr.Addr()+"/", 1, false)
	require.NoError(t, err)
	c.close()
	for _, url := range []string{
		"redis://user:s3cr%zzet@127.0.0.1:6379",
		"redis://user:s3cr et@127.0.0.1:6379/",
		"redis://user:s3cret@127.0.0.1:6379/x",
		"redis://user:s3cret@127.0.0.1:1",
	} {
		_, err := connect(url, 1, false)
		require.Error(t, err, url)
		require.NotContains(t, err.Error(), "s3cr", url)
	}
}

// TestLoadProgressRates: on a terminal the bar's rates are never above
// what the load can do. Every batch takes at least 20 ms, so no rate can
// pass 1,000 members / 20 ms = 50,000 members/s; a bar whose clock starts
// at the first batch's end shows that batch over microseconds.
func TestLoadProgressRates(t *testing.T) {
	var out bytes.Buffer
	b := &bench{cfg: config{members: 5000, loadConcurrency: 1}}
	_, err := b.loadWith(context.Background(), console{w: &out, tty: true}, "test", func(ctx context.Context, lo, hi int) error {
		time.Sleep(20 * time.Millisecond)
		return nil
	})
	require.NoError(t, err)
	rates := regexp.MustCompile(`(\d+) members/s`).FindAllStringSubmatch(out.String(), -1)
	require.NotEmpty(t, rates, out.String())
	for _, m := range rates {
		v, err := strconv.Atoi(m[1])
		require.NoError(t, err)
		require.LessOrEqual(t, v, 50_000, "rate shown: %q", m[0])
	}
}

// TestLoadProgressLog: where stderr is no terminal, progress is whole lines
// (no carriage returns to flood a log file), with the load's rate at the end.
func TestLoadProgressLog(t *testing.T) {
	var out bytes.Buffer
	b := &bench{cfg: config{members: 5000, loadConcurrency: 2}}
	_, err := b.loadWith(context.Background(), console{w: &out}, "test", func(ctx context.Context, lo, hi int) error {
		time.Sleep(time.Millisecond)
		return nil
	})
	require.NoError(t, err)
	s := out.String()
	require.NotContains(t, s, "\r")
	require.LessOrEqual(t, strings.Count(s, "\n"), 3, s)
	require.Contains(t, s, "bench: load test: 5,000 members in ")
}

// TestVerdict: a verdict needs minVerdictRounds values, and "not met" only
// when no round met the target.
func TestVerdict(t *testing.T) {
	ge := func(vals ...float64) target { return target{vals: vals, meets: atLeast(0.9), show: ratioShow} }
	require.Contains(t, ge(0.53).verdict(), "no verdict")
	require.Contains(t, ge(0.53, 1.16).verdict(), "no verdict")
	require.Equal(t, "met", ge(1.0, 0.95, 1.2).verdict())
	require.Equal(t, "not met", ge(0.5, 0.6, 0.7).verdict())
	require.Equal(t, "undecided (2 of 3 rounds met it)", ge(0.53, 1.16, 1.0).verdict())
	require.Equal(t, "1.00x (0.53x..1.16x)", ge(1.16, 0.53, 1.0).measured())
	require.Equal(t, "0.53x", ge(0.53).measured())
	le := target{vals: []float64{0.4e-3, 0.5e-3, 1.2e-3}, meets: under(1e-3), show: secondsShow}
	require.Equal(t, "undecided (2 of 3 rounds met it)", le.verdict())
	require.Equal(t, "500µs (400µs..1.20ms)", le.measured())
}

// TestTargetsFromRounds: the targets table takes its ratios round by round
// and shows their spread: one noisy round cannot make "NOT met".
func TestTargetsFromRounds(t *testing.T) {
	fig := func(impl string, ops ...float64) figure {
		f := figure{op: "top", impl: impl, conc: 64, calls: 1, elapsed: time.Second}
		for _, o := range ops {
			f.rounds = append(f.rounds, roundFigure{calls: 1, opsPerSec: o, p50: time.Millisecond, p99: time.Millisecond})
		}
		return f
	}
	r := &report{cfg: config{concurrency: []int{64}, rounds: 3}, figures: []figure{
		fig("sdk", 53, 116, 100), fig("rueidis", 100, 100, 100),
	}}
	var b strings.Builder
	r.writeTargets(&b, false)
	require.Contains(t, b.String(), "top: ops/s at c=64 >= 0.9x rueidis")
	require.Contains(t, b.String(), "1.00x (0.53x..1.16x)")
	require.Contains(t, b.String(), "undecided")
	require.NotContains(t, b.String(), "not met")
}
