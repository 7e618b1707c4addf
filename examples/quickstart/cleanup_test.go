package main

import (
	"context"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisnode"
	"github.com/skiprank/leaderboard/internal/redisurl"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestKeepHintNamesTheRedis: with -keep the command printed to delete the
// board's keys names the Redis REDIS_URL names, its database too, and on
// a Cluster the node holding the board's slot with -c (the seed given
// first here holds another): run as printed (where redis-cli is
// installed), it deletes every key of the board, there and only there.
func TestKeepHintNamesTheRedis(t *testing.T) {
	testredis.Real(t)
	u, err := url.Parse(testredis.URL())
	if err != nil {
		t.Fatal(err)
	}
	u.Path = "/5"
	addrs := testredis.ClusterAddrs()
	cluster := "redis://" + addrs[len(addrs)-1]
	for i, a := range addrs[:len(addrs)-1] {
		cluster += map[bool]string{true: "?", false: "&"}[i == 0] + "addr=" + a
	}
	for _, tc := range []struct {
		name, url string
		want      *regexp.Regexp
	}{
		{"redis db 5", u.String(), regexp.MustCompile(`^redis-cli -h \S+ -p \d+ -n 5 --scan --pattern '[^']+' \| xargs redis-cli -h \S+ -p \d+ -n 5 unlink$`)},
		{"cluster", cluster, regexp.MustCompile(`^redis-cli -c -h \S+ -p \d+ --scan --pattern '[^']+' \| xargs redis-cli -c -h \S+ -p \d+ unlink$`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "cluster" {
				testredis.Cluster(t)
			}
			p, out, _ := testProgram(env(map[string]string{"REDIS_URL": tc.url}))
			client := urlClient(t, tc.url)
			defer func() { _, _ = redisnode.Unlink(context.Background(), client, p.pattern()) }()
			if err := p.run(context.Background(), []string{"-keep"}); err != nil {
				t.Fatal(err)
			}
			hint := hintOf(t, out.String())
			if !tc.want.MatchString(hint) {
				t.Fatalf("hint %q, want %v", hint, tc.want)
			}
			if client.Mode() == rueidis.ClientModeCluster {
				cmd := client.B().Get().Key(strings.Replace(p.pattern(), "*", "x", 1)).Build()
				owner, ok := slotNode(context.Background(), client, strings.Replace(p.pattern(), "*", "x", 1))
				if !ok || !strings.Contains(hint, "-h "+strings.Replace(owner, ":", " -p ", 1)+" ") {
					t.Fatalf("hint %q does not name %s, the node of slot %d", hint, owner, cmd.Slot())
				}
			}
			if keys(t, client, p.pattern()) == 0 {
				t.Fatal("-keep left no keys")
			}
			if _, err := exec.LookPath("redis-cli"); err != nil {
				t.Skip("no redis-cli to run the hint with")
			}
			sh := exec.CommandContext(t.Context(), "sh", "-c", hint)
			if o, err := sh.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v\n%s", hint, err, o)
			}
			if n := keys(t, client, p.pattern()); n != 0 {
				t.Errorf("%d keys left after %s", n, hint)
			}
		})
	}
}

// TestKeepHintHidesThePassword: a REDIS_URL with a password gets a hint
// that holds neither it nor the user, and says how to give them.
func TestKeepHintHidesThePassword(t *testing.T) {
	mr := miniredis.RunT(t)
	mr.RequireUserAuth("lbuser", "s3cret")
	p, out, _ := testProgram(env(map[string]string{"REDIS_URL": "redis://lbuser:s3cret@" + mr.Addr() + "/"}))
	if err := p.run(context.Background(), []string{"-keep"}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	hint := hintOf(t, s)
	if strings.Contains(s, "s3cret") || strings.Contains(hint, "lbuser") {
		t.Errorf("the password or user printed:\n%s", s)
	}
	if !strings.Contains(hint, "-h 127.0.0.1 -p "+mr.Port()+" ") || !strings.Contains(s, "REDISCLI_AUTH") {
		t.Errorf("no host, port or REDISCLI_AUTH:\n%s", s)
	}
}

// TestKeepOnMiniredis: -keep without REDIS_URL says the keys go with the
// embedded miniredis, and prints no command for another Redis.
func TestKeepOnMiniredis(t *testing.T) {
	p, out, _ := testProgram(env(nil))
	if err := p.run(context.Background(), []string{"-keep"}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "ends with the program") || strings.Contains(s, "redis-cli") {
		t.Errorf("-keep on miniredis:\n%s", s)
	}
}

// TestReplicaDeletesNothing: on a read-only replica the run fails on its
// first write, and says nothing of deleting keys it could not delete.
func TestReplicaDeletesNothing(t *testing.T) {
	u := "redis://" + testredis.ReplicaAddr()
	c := urlClient(t, u)
	if redisnode.IsPrimary(context.Background(), c) {
		t.Skipf("%s is no replica", testredis.ReplicaAddr())
	}
	p, out, _ := testProgram(env(map[string]string{"REDIS_URL": u}))
	err := p.run(context.Background(), nil)
	if err == nil || !strings.Contains(err.Error(), "READONLY") {
		t.Errorf("run on a replica: %v, want READONLY", err)
	}
	if strings.Contains(out.String(), "Deleted") {
		t.Errorf("deleted keys on a replica:\n%s", out)
	}
}

// hintOf is the command the output says deletes the keys.
func hintOf(t *testing.T, out string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^Delete them with: (.*)$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no cleanup hint:\n%s", out)
	}
	return m[1]
}

// urlClient is a client of the Redis url names; it skips without one.
func urlClient(t *testing.T, raw string) rueidis.Client {
	t.Helper()
	opt, err := redisurl.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	opt.DisableCache = true
	c, err := rueidis.NewClient(opt)
	if err != nil {
		if testredis.InCI() && !strings.Contains(raw, testredis.ReplicaAddr()) {
			t.Fatal(err)
		}
		t.Skipf("no Redis at %s: %v", redisurl.Redact(raw), err)
	}
	t.Cleanup(c.Close)
	return c
}

// keys counts the keys matching pattern on every primary of c.
func keys(t *testing.T, c rueidis.Client, pattern string) int {
	t.Helper()
	n := 0
	if err := redisnode.ScanPrimaries(context.Background(), c, pattern, func(ks []string) error { n += len(ks); return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
