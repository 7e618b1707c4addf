package testredis

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/rueidis"
)

// TestCountingClientCountsWhatReachesRedis: CountingClient counts a round
// trip for a call that reaches Redis and none for one rueidis sends
// nothing of: a DoMulti, DoMultiCache or DoMultiStream of no commands,
// which rueidis answers itself. miniredis counts the commands it was
// sent, so the two counts are compared with what the server saw.
func TestCountingClientCountsWhatReachesRedis(t *testing.T) {
	mr := miniredis.RunT(t)
	rc, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{mr.Addr()}, DisableCache: true, ForceSingleClient: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rc.Close)
	c := &CountingClient{Client: rc}
	ctx := t.Context()
	for _, o := range []struct {
		name        string
		call        func()
		calls, cmds int64
	}{
		{"empty DoMulti", func() { c.DoMulti(ctx) }, 0, 0},
		{"empty DoMultiCache", func() { c.DoMultiCache(ctx) }, 0, 0},
		{"empty DoMultiStream", func() { c.DoMultiStream(ctx) }, 0, 0},
		{"DoMulti of two", func() { c.DoMulti(ctx, c.B().Ping().Build(), c.B().Ping().Build()) }, 1, 2},
		{"DoMultiCache of one", func() { c.DoMultiCache(ctx, rueidis.CT(c.B().Get().Key("k").Cache(), time.Second)) }, 1, 0},
	} {
		sent, calls, cmds := mr.CommandCount(), c.Calls(), c.Commands()
		o.call()
		if got := c.Calls() - calls; got != o.calls {
			t.Errorf("%s: %d round trips counted, want %d", o.name, got, o.calls)
		}
		if got := c.Commands() - cmds; got != o.cmds {
			t.Errorf("%s: %d commands counted, want %d", o.name, got, o.cmds)
		}
		if o.calls == 0 && mr.CommandCount() != sent {
			t.Errorf("%s: miniredis was sent %d commands; the test assumes rueidis sends none", o.name, mr.CommandCount()-sent)
		}
	}
}

// TestCountingClientCacheAnsweredMultiCache: a DoMultiCache whose every
// key the client's cache answers reaches no server, and counts no round
// trip (a cache hit instead); one with a key the cache lacks counts one.
func TestCountingClientCacheAnsweredMultiCache(t *testing.T) {
	b := Real(t)
	c := b.Caching(t)
	ctx := t.Context()
	name := b.BoardName(t)
	t.Cleanup(func() { b.Wipe(t, name) })
	key := "lb:{" + name + "}:cached"
	if err := c.Do(ctx, c.B().Set().Key(key).Value("1").Build()).Error(); err != nil {
		t.Fatal(err)
	}
	read := func() (calls, hits int64) {
		calls, hits = c.Calls(), c.CacheHits()
		for _, r := range c.DoMultiCache(ctx, rueidis.CT(c.B().Get().Key(key).Cache(), time.Minute)) {
			if err := r.Error(); err != nil {
				t.Fatal(err)
			}
		}
		return c.Calls() - calls, c.CacheHits() - hits
	}
	if calls, hits := read(); calls != 1 || hits != 0 {
		t.Errorf("first read: %d round trips, %d hits; want 1, 0", calls, hits)
	}
	if calls, hits := read(); calls != 0 || hits != 1 {
		t.Errorf("cached read: %d round trips, %d hits; want 0, 1", calls, hits)
	}
}
