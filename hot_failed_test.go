package leaderboard_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// Tests of a hot top (WithHotTop) whose write, or the mirror's upkeep in
// the write's round trip, fails after the write applied.

// hotTwins are a hot board of kind on fc (a faultClient over b's client)
// and the same board without the hot top on b's client: what the hot
// board must read.
func hotTwins(t *testing.T, b *testredis.Backend, fc *faultClient, kind []lb.Option, more ...lb.Option) (hot, plain *lb.Leaderboard) {
	t.Helper()
	name := shardName(t, b)
	hot, err := lb.New(fc, name, slices.Concat([]lb.Option{lb.WithHotTop(3)}, more, kind)...)
	require.NoError(t, err)
	plain, err = lb.New(b.Client, name, slices.Concat(more, kind)...)
	require.NoError(t, err)
	return hot, plain
}

// hotMatches requires the hot board's Top(3) to be the plain board's.
func hotMatches(t *testing.T, hot, plain *lb.Leaderboard, what string) {
	t.Helper()
	ctx := context.Background()
	want, err := plain.Top(ctx, 3)
	require.NoError(t, err)
	got, err := hot.Top(ctx, 3)
	require.NoError(t, err)
	require.Equal(t, want, got, "%s: the hot top against the board", what)
}

// TestHotTopAfterALostReply: a write whose last step applied and whose
// reply was lost (the network; a ctx that ended while it was in flight)
// returns an error, and may have reached the top k all the same: its
// mirror must not keep the top from before it (it kept it for up to 10
// seconds, as the rewrite that follows a write into the top was not
// sent). Here an Accumulate increment of a member below the top (which
// no process expects to reach it) by Submit, and by a Batcher; on every
// kind of board, the write's last round trip lost (the shards' step on a
// sharded Cluster board); and a Reset whose reply was lost.
func TestHotTopAfterALostReply(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		fc := &faultClient{Client: b.Client}
		hot, plain := hotTwins(t, b, fc, kind, lb.WithPolicy(lb.Accumulate))
		require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "z": 0}))
		bt, err := hot.NewBatcher(lb.WithBatchWindow(time.Millisecond))
		require.NoError(t, err)
		defer func() { require.NoError(t, bt.Close(ctx)) }()
		writes := []struct {
			name   string
			submit func(member string, score float64) error
		}{
			{"Submit", func(m string, s float64) error { _, err := hot.Submit(ctx, m, s); return err }},
			{"Batcher", func(m string, s float64) error { _, err := bt.Submit(ctx, m, s); return err }},
		}
		for i, w := range writes {
			hotMatches(t, hot, plain, "before") // this process has seen the mirror full
			// The calls a write below the top takes (scripts loaded).
			require.NoError(t, w.submit("z", 0.25))
			before := fc.calls.Load()
			require.NoError(t, w.submit("z", 0.25))
			calls := fc.calls.Load() - before
			hotMatches(t, hot, plain, w.name+" below the top")

			fc.lost.Store(true)
			fc.nth.Store(calls) // the write's last call: sent, its reply lost
			require.Error(t, w.submit([]string{"a", "b"}[i], 100), w.name)
			fc.lost.Store(false)
			hotMatches(t, hot, plain, w.name+" lost")
		}

		// Reset: on a sharded Cluster board its mirror goes in a round
		// trip after the keys, not sent when theirs failed.
		fc.lost.Store(true)
		fc.nth.Store(1)
		require.Error(t, hot.Reset(ctx))
		fc.lost.Store(false)
		hotMatches(t, hot, plain, "Reset lost")
	})
}

// TestHotTopDropFailsAfterAWrite: a write that deletes the mirror in its
// own round trip, after it (RemoveBetween; on a sharded board on one node
// Remove and SubmitMany too), and whose delete fails where the write
// applied, must delete it in one more round trip, as a failed rewrite
// does: it left the mirror as it was, with members it had removed, for
// up to 10 seconds. A sharded board on a Cluster deletes its mirror in a
// round trip of its own after the write, which tries once more already.
func TestHotTopDropFailsAfterAWrite(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		sharded := len(kind) > 0
		if sharded && b.Name == "cluster" {
			return // no delete in the write's round trip: see above
		}
		ctx := context.Background()
		fc := &faultClient{Client: b.Client}
		hot, plain := hotTwins(t, b, fc, kind)
		require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}))
		mirror := lb.HotKey(hot)
		writes := []struct {
			name  string
			write func() error
		}{
			{"RemoveBetween", func() error { _, err := hot.RemoveBetween(ctx, 5, 5); return err }},
		}
		if sharded {
			writes = append(writes,
				struct {
					name  string
					write func() error
				}{"Remove", func() error { return hot.Remove(ctx, "d") }},
				struct {
					name  string
					write func() error
				}{"SubmitMany", func() error { return hot.SubmitMany(ctx, map[string]float64{"x": 100}) }})
		}
		for _, w := range writes {
			hotMatches(t, hot, plain, "before "+w.name)
			fc.failing.Store(&mirror) // the mirror's UNLINK fails, the write is sent
			err := w.write()
			fc.failing.Store(nil)
			require.NoError(t, err, w.name)
			hotMatches(t, hot, plain, w.name)
		}
	})
}

// TestHotTopNeverOutlivesItsPeriod: a mirror expires no later than its
// period's data. A board's clock behind the server's (here yesterday's
// period, which Redis expires in a second, read as live by a board
// clock an hour before its end) reads a period Redis has expired; its
// mirror, written for 10 seconds whatever the period had left, showed
// the members Redis had expired with the period, where the board itself
// read none. On every kind of board (a sharded Cluster board puts its
// mirror from the client: hot_put.lua).
func TestHotTopNeverOutlivesItsPeriod(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		now := time.Now().Truncate(time.Millisecond)
		if b.Mini != nil {
			b.Mini.SetTime(now) // miniredis's clock, which it moves when told to
		}
		midnight := now.UTC().Truncate(24 * time.Hour)
		expire := now.Add(time.Second).Truncate(time.Millisecond)
		opts := []lb.Option{lb.WithWindows(lb.Daily()), lb.WithRetention(expire.Sub(midnight)), lb.WithClock(fixed(midnight.Add(-time.Hour)))}
		hot, plain := hotTwins(t, b, &faultClient{Client: b.Client}, kind, opts...)
		require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4}))
		top, err := hot.Top(ctx, 3)
		require.NoError(t, err)
		require.Len(t, top, 3, "read before the period expired")
		c := b.Client.Client
		at, err := c.Do(ctx, c.B().Pexpiretime().Key(lb.HotKey(hot)).Build()).AsInt64()
		require.NoError(t, err)
		require.LessOrEqual(t, at, expire.UnixMilli(), "the mirror expires after its period")
		if b.Mini != nil {
			b.Mini.FastForward(expire.Sub(now) + 100*time.Millisecond)
		} else {
			time.Sleep(time.Until(expire) + 100*time.Millisecond)
		}
		hotMatches(t, hot, plain, "once Redis expired the period")
		top, err = hot.Top(ctx, 3)
		require.NoError(t, err)
		require.Empty(t, top)
	})
}

// TestHotTopLostReplyDropsOnce: a Submit expected to reach the top sends
// the mirror's rewrite in its own round trip (withHot), which deals with a
// failed rewrite by deleting the mirror; a write whose reply was lost then
// deletes it once, in one more round trip, not a second time for the
// write's own failure (hotSubmitFailed).
func TestHotTopLostReplyDropsOnce(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		fc := &faultClient{Client: b.Client}
		hot, plain := hotTwins(t, b, fc, kind)
		require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}))
		hotMatches(t, hot, plain, "before") // this process has seen the mirror full
		fc.lost.Store(true)
		fc.nth.Store(1) // the write's first call: sent, its reply lost
		before := fc.calls.Load()
		_, err := hot.Submit(ctx, "z", 100)
		require.Error(t, err)
		fc.lost.Store(false)
		require.Equal(t, int64(2), fc.calls.Load()-before, "the write's round trip, then the mirror's delete once")
		hotMatches(t, hot, plain, "lost")
	})
}

// onceFailing fails, once armed, the commands of the next call that name
// a key starting with prefix (not sent) and sends the others of it.
type onceFailing struct {
	faultClient
	armed atomic.Bool
}

func (c *onceFailing) Do(ctx context.Context, cmd rueidis.Completed) rueidis.RedisResult {
	return c.DoMulti(ctx, cmd)[0]
}

func (c *onceFailing) DoMulti(ctx context.Context, multi ...rueidis.Completed) []rueidis.RedisResult {
	p := c.failing.Load()
	names := func(cmd rueidis.Completed) bool {
		return slices.ContainsFunc(cmd.Commands(), func(a string) bool { return strings.HasPrefix(a, *p) })
	}
	if p != nil && slices.ContainsFunc(multi, names) && c.armed.CompareAndSwap(true, false) {
		return c.doMultiFailing(ctx, *p, multi)
	}
	return c.Client.DoMulti(ctx, multi...)
}

// TestHotTopResetDropFails: a Reset or a Delete on a sharded board whose
// keys went and whose delete of the mirror failed (on one node last in the
// keys' pipeline, on a Cluster in a round trip of its own after them; an
// unsharded board's mirror goes in the keys' own UNLINK) returns
// no error, as the write applied (a Delete with a store returned
// ErrPending as if Redis still held the board), and deletes the mirror in
// one more round trip: on a sharded Cluster board it was left showing the
// top the Reset emptied, for up to 10 seconds.
func TestHotTopResetDropFails(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		if len(kind) == 0 {
			return // unsharded: see above
		}
		ctx := context.Background()
		for _, w := range []struct {
			name  string
			write func(*lb.Leaderboard) error
		}{
			{"Reset", func(hot *lb.Leaderboard) error { return hot.Reset(ctx) }},
			{"Delete", func(hot *lb.Leaderboard) error { return hot.Delete(ctx) }},
		} {
			name := shardName(t, b)
			store := newMemStore()
			opts := append([]lb.Option{lb.WithStore(store)}, kind...)
			fc := &onceFailing{faultClient: faultClient{Client: b.Client}}
			hot, err := lb.New(fc, name, append(slices.Clone(opts), lb.WithHotTop(3))...)
			require.NoError(t, err)
			plain, err := lb.New(b.Client, name, opts...)
			require.NoError(t, err)
			require.NoError(t, hot.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4}))
			hotMatches(t, hot, plain, "before "+w.name)
			mirror := lb.HotKey(hot)
			fc.failing.Store(&mirror)
			fc.armed.Store(true)
			require.NoError(t, w.write(hot), w.name)
			require.False(t, fc.armed.Load(), "%s: the mirror's delete was not sent", w.name)
			hotMatches(t, hot, plain, w.name)
		}
	})
}

// TestHotTopBuildAtMaxmemory: on a Redis over its maxmemory under
// noeviction, a Top or a Page that finds no mirror, whose build (a write)
// Redis refuses, reads the period itself, as a client that reaches only a
// replica does: with WithReplicaReads, whose board reads no MULTI and is
// not read again another way, they failed with OOM whenever the mirror
// was missing (never built, deleted by a write, expired), on every kind
// of board.
func TestHotTopBuildAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	c := s.client()
	ctx := context.Background()
	type pair struct{ hot, truth *lb.Leaderboard }
	boards := map[string]pair{}
	for _, kind := range hotKinds {
		for _, more := range [][]lb.Option{nil, {lb.WithReplicaReads()}} {
			name := fmt.Sprintf("mh-%s-%d", kind.name, len(more))
			opts := slices.Concat(kind.opts, more)
			hot, err := lb.New(c, name, append(slices.Clone(opts), lb.WithHotTop(3))...)
			require.NoError(t, err)
			truth, err := lb.New(c, name, opts...)
			require.NoError(t, err)
			require.NoError(t, truth.SubmitMany(ctx, map[string]float64{"a": 1, "b": 20, "c": 300, "d": 4}))
			boards[name] = pair{hot, truth}
		}
	}
	overMaxmemory(t, s, c)
	for name, p := range boards {
		want, err := p.truth.Top(ctx, 3)
		require.NoError(t, err, name)
		got, err := p.hot.Top(ctx, 3)
		require.NoError(t, err, "%s: Top over maxmemory with no mirror", name)
		require.Equal(t, want, got, name)
		page, err := p.hot.Page(ctx, 1, 2)
		require.NoError(t, err, "%s: Page over maxmemory with no mirror", name)
		require.Equal(t, want[:2], page.Entries, name)
	}
}
