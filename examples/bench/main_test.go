package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"
)

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

func reachable(t *testing.T, url string) string {
	opt, err := rueidis.ParseURL(url)
	require.NoError(t, err)
	opt.DisableCache = true
	c, err := rueidis.NewClient(opt)
	if err == nil {
		err = c.Do(context.Background(), c.B().Ping().Build()).Error()
		c.Close()
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("real Redis at %s is required under CI=true: %v", url, err)
		}
		t.Skipf("no Redis at %s: %v", url, err)
	}
	return url
}

// TestRun runs the whole tool at a small size, every operation, on
// miniredis, a real Redis and a Redis Cluster, and checks that it reports every figure
// and leaves no key behind.
func TestRun(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		for _, args := range [][]string{
			{"-members", "500", "-d", "50ms", "-c", "1,3", "-format", "md", "-commandstats"},
			{"-members", "300", "-d", "30ms", "-c", "2", "-windows", "4", "-policy", "accumulate", "-order", "lowest", "-tiebreak", "later", "-ops", "submit,submit-many,around,among"},
			{"-members", "300", "-d", "30ms", "-c", "2", "-shards", "4", "-ops", "submit,rank,top,page-deep,count", "-rounds", "2", "-no-auto-pipelining"},
		} {
			t.Run(backend+" "+strings.Join(args, " "), func(t *testing.T) {
				cfg, err := parseFlags(args, io.Discard)
				require.NoError(t, err)
				switch backend {
				case "redis":
					cfg.redisURL = realURL(t)
				case "cluster":
					cfg.redisURL = clusterURL(t)
				default:
					cfg.redisURL = ""
				}
				cfg.name = randomName()
				var out, progress bytes.Buffer
				require.NoError(t, run(context.Background(), cfg, &out, &progress))
				report := out.String()
				for _, op := range cfg.ops {
					if cfg.format == "md" {
						require.Contains(t, report, "**"+op+"**", report)
					} else {
						require.Contains(t, report, "== "+op+":", report)
					}
				}
				require.Contains(t, report, "sdk")
				require.Contains(t, report, "rueidis")
				require.Contains(t, report, "load")
				require.NotContains(t, report, "NaN")
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
	cfg, err := parseFlags(nil, io.Discard)
	require.NoError(t, err)
	require.Equal(t, 1_000_000, cfg.members)
	require.Equal(t, []int{1, 64}, cfg.concurrency)
	require.Equal(t, allOps, cfg.ops)
	require.Equal(t, []string{"alltime"}, cfg.windows)
	require.Equal(t, 3*time.Second, cfg.duration)

	cfg, err = parseFlags([]string{"-windows", "4", "-ops", "rank, top"}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, []string{"alltime", "daily", "weekly", "monthly"}, cfg.windows)
	require.Equal(t, []string{"rank", "top"}, cfg.ops)

	for _, bad := range [][]string{
		{"-members", "10"},
		{"-windows", "hourly"},
		{"-windows", "daily,daily"},
		{"-policy", "best"},
		{"-order", "up"},
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
		{"extra"},
	} {
		_, err := parseFlags(bad, io.Discard)
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

func TestRedact(t *testing.T) {
	require.Equal(t, "redis://user:xxxxx@10.0.0.1:6379", redact("redis://user:secret@10.0.0.1:6379"))
	require.Equal(t, "redis://127.0.0.1:6379", redact("redis://127.0.0.1:6379"))
}
