// Package testredis gives the package's tests their Redis backends: every test
// body runs once against an embedded miniredis and once against a real Redis
// (REDIS_URL, default redis://127.0.0.1:6379), so behaviour that miniredis
// models differently from Redis shows up as a failing test, not in production.
package testredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisnode"
	"github.com/skiprank/leaderboard/internal/redisurl"
)

// Backend is one Redis a test body runs against.
type Backend struct {
	// Name is "miniredis" or "redis"; it names the subtest.
	Name string
	// Client talks to the backend; wrapped so tests can count round trips.
	Client *CountingClient
	// Mini is the embedded server, nil for a real Redis. Tests use it to move
	// time (SetTime, FastForward) where a real Redis cannot.
	Mini *miniredis.Miniredis
}

// URL is the real Redis the tests use.
func URL() string {
	if u := os.Getenv("REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379"
}

// InCI reports whether missing servers must fail the run instead of skipping.
func InCI() bool { return os.Getenv("CI") == "true" }

// ClusterAddrs are the seed nodes of the Redis Cluster the tests use
// (REDIS_CLUSTER_ADDRS, comma-separated; default the three masters the test
// command starts on 127.0.0.1:7000-7002).
func ClusterAddrs() []string {
	if a := os.Getenv("REDIS_CLUSTER_ADDRS"); a != "" {
		return strings.Split(a, ",")
	}
	return []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"}
}

// Each runs body once per backend, as subtests named after the backend:
// miniredis, a real standalone Redis, and a real Redis Cluster.
func Each(t *testing.T, body func(t *testing.T, b *Backend)) {
	t.Helper()
	t.Run("miniredis", func(t *testing.T) { body(t, Mini(t)) })
	t.Run("redis", func(t *testing.T) { body(t, Real(t)) })
	t.Run("cluster", func(t *testing.T) { body(t, Cluster(t)) })
}

// EachReal runs body on the real servers alone (a standalone Redis and a
// Cluster), as Each does: for what miniredis does not have (connections
// to close, rueidis's pools).
func EachReal(t *testing.T, body func(t *testing.T, b *Backend)) {
	t.Helper()
	t.Run("redis", func(t *testing.T) { body(t, Real(t)) })
	t.Run("cluster", func(t *testing.T) { body(t, Cluster(t)) })
}

// Mini starts an embedded miniredis for one test.
func Mini(t testing.TB) *Backend {
	t.Helper()
	mr := miniredis.RunT(t)
	// miniredis only moves its clock when told to (FastForward); fixing it
	// makes PEXPIRETIME exact, so snapshots compare equal.
	mr.SetTime(time.Now().Truncate(time.Millisecond))
	// miniredis answers CLUSTER commands as a one-node cluster; without
	// ForceSingleClient rueidis would build a cluster client for it.
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatalf("miniredis client: %v", err)
	}
	t.Cleanup(c.Close)
	if c.Mode() != rueidis.ClientModeStandalone {
		t.Fatalf("miniredis client mode = %v, want standalone", c.Mode())
	}
	return &Backend{Name: "miniredis", Client: &CountingClient{Client: c}, Mini: mr}
}

// Real connects to the real Redis. Without one it skips, or fails under
// CI=true. Its messages show REDIS_URL without its password.
func Real(t testing.TB) *Backend {
	t.Helper()
	opt, err := redisurl.Parse(URL())
	if err != nil {
		t.Fatalf("REDIS_URL: %v", err)
	}
	opt.DisableCache = true
	c, err := rueidis.NewClient(opt)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = c.Do(ctx, c.B().Ping().Build()).Error()
		cancel()
		if err != nil {
			c.Close()
		}
	}
	if err != nil {
		if InCI() {
			t.Fatalf("real Redis at %s is required under CI=true: %v", redisurl.Redact(URL()), err)
		}
		t.Skipf("no real Redis at %s (set REDIS_URL or run the test command): %v", redisurl.Redact(URL()), err)
	}
	t.Cleanup(c.Close)
	if c.Mode() != rueidis.ClientModeStandalone {
		t.Fatalf("REDIS_URL client mode = %v, want standalone", c.Mode())
	}
	return &Backend{Name: "redis", Client: &CountingClient{Client: c}}
}

// Cluster connects to the real Redis Cluster. Without one it skips, or
// fails under CI=true.
func Cluster(t testing.TB) *Backend {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: ClusterAddrs(), DisableCache: true})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		var info string
		info, err = c.Do(ctx, c.B().ClusterInfo().Build()).ToString()
		cancel()
		if err == nil && !strings.Contains(info, "cluster_state:ok") {
			err = fmt.Errorf("cluster_state is not ok")
		}
		if err != nil {
			c.Close()
		}
	}
	if err != nil {
		if InCI() {
			t.Fatalf("a Redis Cluster at %v is required under CI=true: %v", ClusterAddrs(), err)
		}
		t.Skipf("no Redis Cluster at %v (set REDIS_CLUSTER_ADDRS or run the test command): %v", ClusterAddrs(), err)
	}
	t.Cleanup(c.Close)
	if c.Mode() != rueidis.ClientModeCluster {
		t.Fatalf("cluster client mode = %v, want cluster", c.Mode())
	}
	return &Backend{Name: "cluster", Client: &CountingClient{Client: c}}
}

var seq atomic.Int64

// BoardName returns a board name unique to this run, so tests sharing one real
// Redis never see each other's keys, and registers cleanup of its keys.
func (b *Backend) BoardName(t testing.TB) string {
	t.Helper()
	var r [4]byte
	_, _ = rand.Read(r[:])
	// A hash tag's braces and a glob's characters are replaced, so that
	// the name tags its keys alone and Wipe's and Keys' patterns match it.
	name := strings.NewReplacer("/", ".", " ", "_", "{", "(", "}", ")",
		"[", "(", "]", ")", "*", "_", "?", "_", `\`, "_").Replace(t.Name())
	if len(name) > 60 {
		name = name[len(name)-60:]
	}
	name = name + "." + hex.EncodeToString(r[:]) + "." + itoa(seq.Add(1))
	t.Cleanup(func() { b.Wipe(t, name) })
	return name
}

// Wipe deletes every key of a board, its shards' ({name#s3.k2x9a1~41}) and
// partitions' ({name#p~1234}:17) included:
// what a Redis restart without persistence does to it.
func (b *Backend) Wipe(t testing.TB, name string) {
	t.Helper()
	ctx := context.Background()
	for _, pattern := range []string{"*{" + name + "}*", "*{" + name + "#*"} {
		for _, k := range b.Keys(t, pattern) {
			if err := b.Client.Client.Do(ctx, b.Client.Client.B().Del().Key(k).Build()).Error(); err != nil {
				t.Errorf("wipe %s: %v", k, err)
			}
		}
	}
}

// Keys lists the keys matching a glob pattern, with SCAN so a shared Redis is
// not blocked, on every primary of a cluster (a replica holds copies).
func (b *Backend) Keys(t testing.TB, pattern string) []string {
	t.Helper()
	var out []string
	err := redisnode.ScanPrimaries(context.Background(), b.Client.Client, pattern, func(keys []string) error {
		out = append(out, keys...)
		return nil
	})
	if err != nil {
		t.Fatalf("scan %s: %v", pattern, err)
	}
	return out
}

// Snapshot returns every key of a board, its shards' and partitions'
// included (Wipe's patterns), with its content and absolute expiry, so a
// test can prove a refused call wrote nothing.
func (b *Backend) Snapshot(t testing.TB, board string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, pattern := range []string{"*{" + board + "}*", "*{" + board + "#*"} {
		for _, k := range b.Keys(t, pattern) {
			out[k] = b.keyState(t, k)
		}
	}
	return out
}

// keyState is a key's content, whatever its type, sorted where Redis
// keeps no order, and its absolute expiry.
func (b *Backend) keyState(t testing.TB, k string) string {
	t.Helper()
	ctx := context.Background()
	c := b.Client.Client
	kind, err := c.Do(ctx, c.B().Type().Key(k).Build()).ToString()
	if err != nil {
		t.Fatalf("snapshot type %s: %v", k, err)
	}
	var read rueidis.Completed
	switch kind {
	case "hash":
		read = c.B().Hgetall().Key(k).Build()
	case "zset":
		read = c.B().Zrange().Key(k).Min("0").Max("-1").Withscores().Build()
	case "set":
		read = c.B().Smembers().Key(k).Build()
	case "string":
		read = c.B().Get().Key(k).Build()
	default:
		t.Fatalf("snapshot %s: type %q", k, kind)
	}
	res := c.DoMulti(ctx, read, c.B().Pexpiretime().Key(k).Build())
	var content []string
	switch kind {
	case "string":
		var v string
		v, err = res[0].ToString()
		content = []string{v}
	case "zset":
		var zs []rueidis.ZScore
		zs, err = res[0].AsZScores()
		for _, z := range zs {
			content = append(content, z.Member+"="+rueidisFloat(z.Score))
		}
	case "hash":
		var m map[string]string
		m, err = res[0].AsStrMap()
		for f, v := range m {
			content = append(content, f+"="+v)
		}
		sort.Strings(content)
	default:
		content, err = res[0].AsStrSlice()
		sort.Strings(content)
	}
	if err != nil {
		t.Fatalf("snapshot %s: %v", k, err)
	}
	exp, err := res[1].AsInt64()
	if err != nil {
		t.Fatalf("snapshot expiry %s: %v", k, err)
	}
	return kind + " " + strings.Join(content, " ") + " exp=" + itoa(exp)
}

// Caching is a second client to the backend's real Redis or Cluster with
// rueidis's client-side caching on (Redis tracks the keys it reads and
// tells it when they change), or nil on miniredis, which does not track.
func (b *Backend) Caching(t testing.TB) *CountingClient {
	t.Helper()
	var opt rueidis.ClientOption
	switch b.Name {
	case "redis":
		var err error
		if opt, err = redisurl.Parse(URL()); err != nil {
			t.Fatalf("REDIS_URL: %v", err)
		}
	case "cluster":
		opt = rueidis.ClientOption{InitAddress: ClusterAddrs()}
	default:
		return nil
	}
	opt.DisableCache = false
	c, err := rueidis.NewClient(opt)
	if err != nil {
		t.Fatalf("%s client with caching: %v", b.Name, err)
	}
	t.Cleanup(c.Close)
	return &CountingClient{Client: c}
}
