package testredis

import (
	"context"
	"testing"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/redisurl"
)

// TestRedialAfterDrop: after Redis closed a OneConn's connections, the
// next write fails on the network (what a test that writes right after a
// restart or a drop met, depending on the connection its write took);
// after Redial the first write succeeds, on the real Redis and on the
// Cluster (every node's connection dropped).
func TestRedialAfterDrop(t *testing.T) {
	EachReal(t, func(t *testing.T, b *Backend) {
		opt := rueidis.ClientOption{InitAddress: ClusterAddrs()}
		if b.Name == "redis" {
			var err error
			if opt, err = redisurl.Parse(URL()); err != nil {
				t.Fatal(err)
			}
		}
		opt.DisableCache = true
		opt.Dialer.KeepAlive = -1 // no ping of rueidis's sees the close first
		c := NewOneConn(t, opt)
		key := "{" + b.BoardName(t) + "}:n"
		// Calls without a deadline or a Done channel, one at a time, go
		// on rueidis's synchronous path: no reader runs on the connection
		// to see it closed before the next call does.
		ctx := context.Background()
		incr := func() error { return c.Do(ctx, c.B().Incr().Key(key).Build()).Error() }
		if err := incr(); err != nil {
			t.Fatal(err)
		}
		dropConns(t, b, c)
		err := incr()
		// On the Cluster the write sometimes succeeds, a call of rueidis's
		// own having had the close seen first: the hazard is pinned on one
		// node.
		if _, isRedis := rueidis.IsRedisErr(err); b.Name == "redis" && (err == nil || isRedis) {
			t.Fatalf("a write on the closed connection: %v, want a network error", err)
		}
		// The write healed its own node's connection alone: the others
		// are dialled again before they are asked their ids.
		c.Redial(t)
		dropConns(t, b, c)
		c.Redial(t)
		if err := incr(); err != nil {
			t.Fatalf("the first write after Redial: %v", err)
		}
	})
}

// dropConns has every node close c's connection to it (one a node), from
// b's client.
func dropConns(t *testing.T, b *Backend, c OneConn) {
	t.Helper()
	admin := b.Client.Nodes()
	for addr, n := range c.Nodes() {
		id, err := n.Do(context.Background(), n.B().ClientId().Build()).AsInt64()
		if err != nil {
			t.Fatalf("CLIENT ID on %s: %v", addr, err)
		}
		a, ok := admin[addr]
		if !ok {
			t.Fatalf("no admin connection to %s", addr)
		}
		if err := a.Do(t.Context(), a.B().ClientKill().Id(id).Build()).Error(); err != nil {
			t.Fatalf("CLIENT KILL ID %d on %s: %v", id, addr, err)
		}
	}
}
