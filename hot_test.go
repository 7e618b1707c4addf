package leaderboard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// hotKinds are the kinds of board a hot top is tested on: unsharded, and
// sharded with the top 10 of TestHotTopCache in the best shard.
var hotKinds = []struct {
	name string
	opts []lb.Option
}{{"plain", nil}, {"sharded", []lb.Option{lb.WithShards(0, 50, 2000)}}}

// eachHotKind runs run on every backend, for every kind of board.
func eachHotKind(t *testing.T, run func(t *testing.T, b *testredis.Backend, kind []lb.Option)) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range hotKinds {
			t.Run(kind.name, func(t *testing.T) { run(t, b, kind.opts) })
		}
	})
}

// newHotBoard is a new board of kind on b with WithHotTop(k) and more,
// and its name.
func newHotBoard(t *testing.T, b *testredis.Backend, kind []lb.Option, k int, more ...lb.Option) (*lb.Leaderboard, string) {
	t.Helper()
	name := shardName(t, b)
	board, err := lb.New(b.Client, name, slices.Concat([]lb.Option{lb.WithHotTop(k)}, more, kind)...)
	require.NoError(t, err)
	return board, name
}

// hotTrips is how many round trips a Submit takes on a board of kind k on
// b: writing (one; two on a sharded Cluster board) and, with rewrite, the
// mirror's rewrite after a write this process did not expect to reach the
// top: none more where one script does it in the write's round trip,
// three on a sharded Cluster board (turn, shards, put).
func hotTrips(b *testredis.Backend, sharded, rewrite bool) int64 {
	if !sharded || b.Name != "cluster" {
		return 1
	}
	if rewrite {
		return 5
	}
	return 2
}

// TestHotTopCache: with WithHotTop and a client that tracks keys, Top and
// Range within the top k come from the client's memory, a write below the
// top leaves them there, and a write into the top (from this process or
// another) reaches them within moments; on every kind of board. On
// miniredis, which does not track keys, every read reaches the mirror in
// Redis: the answers are the same.
func TestHotTopCache(t *testing.T) { eachHotKind(t, runHotTopCache) }

// loadHotBoard loads m00..m99 with scores 0..99, then sends a member
// through every shard, into the top and out, so that every script the
// board sends is loaded on every node before anything is counted; it
// returns the Top(10).
func loadHotBoard(t *testing.T, board *lb.Leaderboard) []lb.Entry {
	t.Helper()
	ctx := context.Background()
	scores := map[string]float64{}
	for i := range 100 {
		scores[fmt.Sprintf("m%02d", i)] = float64(i)
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	for _, s := range []float64{-5, 10, 60, 3000, 1} {
		_, err := board.Submit(ctx, "warm", s)
		require.NoError(t, err)
	}
	want, err := board.Top(ctx, 10)
	require.NoError(t, err)
	require.Equal(t, "m99", want[0].Member)
	return want
}

// warmHotCache reads Top(10) until it comes from the cache. The first read
// found no mirror and built it; the next ones read it from Redis into the
// cache, once the invalidations of the writes before have arrived. An
// invalidation that arrives late drops a copy filled after it: warm up
// twice, a moment apart.
func warmHotCache(t *testing.T, c *testredis.CountingClient, board *lb.Leaderboard) {
	t.Helper()
	for range 2 {
		time.Sleep(100 * time.Millisecond)
		for tries := 0; ; tries++ {
			hits := c.CacheHits()
			_, err := board.Top(context.Background(), 10)
			require.NoError(t, err)
			if c.CacheHits() > hits {
				break
			}
			require.Less(t, tries, 1000, "Top(10) never came from the cache")
			time.Sleep(time.Millisecond)
		}
	}
}

// hotEventually reads Top(10) until member is at rank, for up to 2 s.
func hotEventually(t *testing.T, board *lb.Leaderboard, member string, rank int64) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Second)
	for {
		got, err := board.Top(context.Background(), 10)
		require.NoError(t, err)
		if got[rank-1].Member == member {
			return
		}
		require.True(t, time.Now().Before(deadline), "%s not at %d in %v", member, rank, got)
		time.Sleep(time.Millisecond)
	}
}

func runHotTopCache(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	sharded := len(kind) > 0
	ctx := context.Background()
	c := b.Caching(t)
	caching := c != nil
	if !caching {
		c = b.Client
	}
	name := shardName(t, b)
	opts := append([]lb.Option{lb.WithHotTop(10), lb.WithPolicy(lb.Replace)}, kind...)
	board, err := lb.New(c, name, opts...)
	require.NoError(t, err)
	other, err := lb.New(b.Client, name, opts...) // another process
	require.NoError(t, err)
	want := loadHotBoard(t, board)
	if caching {
		warmHotCache(t, c, board)
	}
	// Served from memory: rueidis's cache, or a snapshot it confirmed a
	// moment before (TestHotTopRecheck); a cache miss counts as a call.
	served := func(what string, read func() error) {
		t.Helper()
		before := c.Calls()
		require.NoError(t, read(), what)
		if caching {
			require.Equal(t, before, c.Calls(), "%s reached Redis", what)
		}
	}
	served("Top(10)", func() error { _, err := board.Top(ctx, 10); return err })
	served("Top(3)", func() error { _, err := board.Top(ctx, 3); return err })
	served("Range(2, 9)", func() error {
		got, err := board.Range(ctx, 2, 9)
		require.Equal(t, want[1:9], got)
		return err
	})
	// An answer is its caller's: changing it changes no later answer,
	// which may come from the same cached read.
	for _, read := range []func() ([]lb.Entry, error){
		func() ([]lb.Entry, error) { return board.Top(ctx, 10) },
		func() ([]lb.Entry, error) { return board.Top(ctx, 4) },
		func() ([]lb.Entry, error) { return board.Range(ctx, 1, 6) },
	} {
		served("an answer its caller changes", func() error {
			got, err := read()
			for i := range got {
				got[i] = lb.Entry{Member: "changed", Score: -1}
			}
			return err
		})
		served("Top(10) after", func() error {
			got, err := board.Top(ctx, 10)
			require.Equal(t, want, got, "a caller's change to its answer reached the next one")
			return err
		})
	}

	// A write below the top does not touch the mirror: the cached
	// copy stays, and stays right.
	before := c.Calls()
	_, err = board.Submit(ctx, "low", 5)
	require.NoError(t, err)
	require.Equal(t, before+hotTrips(b, sharded, false), c.Calls(), "a Submit below the top: as without a hot top")
	time.Sleep(50 * time.Millisecond) // an invalidation would have arrived
	served("Top(10) after a write below the top", func() error {
		got, err := board.Top(ctx, 10)
		require.Equal(t, want, got)
		return err
	})

	// Writes into the top, from this process and from another, show.
	eventually := func(member string, rank int64) { t.Helper(); hotEventually(t, board, member, rank) }
	before = c.Calls()
	_, err = board.Submit(ctx, "star", 1000)
	require.NoError(t, err)
	require.Equal(t, before+hotTrips(b, sharded, true), c.Calls(), "a Submit into the top that this process expects")
	eventually("star", 1)
	_, err = other.Submit(ctx, "rival", 500)
	require.NoError(t, err)
	eventually("rival", 2)
	_, err = other.Submit(ctx, "star", 1) // leaves the top
	require.NoError(t, err)
	eventually("rival", 1)
	before = b.Client.Calls()
	require.NoError(t, other.Remove(ctx, "rival"))
	// The mirror's delete rides in the Remove's round trip; on a sharded
	// Cluster board it follows the Remove's two, with a turn.
	removeTrips := int64(1)
	if sharded && b.Name == "cluster" {
		removeTrips = 3
	}
	require.Equal(t, before+removeTrips, b.Client.Calls(), "a Remove from the top")
	eventually("m99", 1)
}

// TestHotTopAfterRebuild: a Rebuild replaces a period with the store's
// truth and drops its top mirror, which the next read builds from the
// rebuilt period: no member the store does not know stays on the cached
// top; on every kind of board.
func TestHotTopAfterRebuild(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		name := shardName(t, b)
		board, err := lb.New(b.Client, name, append([]lb.Option{lb.WithStore(newMemStore()), lb.WithHotTop(3)}, kind...)...)
		require.NoError(t, err)
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"ana": 30, "ben": 20, "cai": 10}))
		// A member written around the SDK (and its store) into the
		// sorted set that holds the best, then the mirror built
		// again with it.
		c := b.Client.Client
		key := "lb:{" + name + "}:alltime"
		if len(kind) > 0 {
			key = shardKey(name, []float64{0, 50, 2000}, 2, "alltime", "alltime")
		}
		require.NoError(t, c.Do(ctx, c.B().Zadd().Key(key).ScoreMember().ScoreMember(99, "rogue").Build()).Error())
		require.NoError(t, c.Do(ctx, c.B().Del().Key(lb.HotKey(board)).Build()).Error())
		top, err := board.Top(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, "rogue", top[0].Member)

		_, err = board.Rebuild(ctx)
		require.NoError(t, err)
		top, err = board.Top(ctx, 3)
		require.NoError(t, err)
		require.Equal(t, []string{"ana", "ben", "cai"}, []string{top[0].Member, top[1].Member, top[2].Member})
	})
}

// TestHotTopOptions: k is 1..MaxN, on every kind of board.
func TestHotTopOptions(t *testing.T) {
	c := testredis.Mini(t).Client
	for _, kind := range hotKinds {
		for _, k := range []int{0, -1, lb.MaxN + 1} {
			_, err := lb.New(c, "b", append([]lb.Option{lb.WithHotTop(k)}, kind.opts...)...)
			require.ErrorIs(t, err, lb.ErrInvalidArgument, "%s k=%d", kind.name, k)
		}
		for _, k := range []int{1, lb.MaxN} {
			_, err := lb.New(c, "b", append([]lb.Option{lb.WithHotTop(k)}, kind.opts...)...)
			require.NoError(t, err, "%s k=%d", kind.name, k)
		}
	}
}

// TestHotTopTurns: on a sharded Cluster board the client reads the shards
// and puts the mirror; a reader whose turn has passed (it read before a
// write that reached the top and finished since) cannot put what it read
// over the write's rewrite, while the reader holding the last turn can.
func TestHotTopTurns(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		if b.Name != "cluster" {
			return // one node rewrites a mirror in one script, atomically
		}
		ctx := context.Background()
		name := shardName(t, b)
		board, err := lb.New(b.Client, name, lb.WithHotTop(3), lb.WithShards(0, 50, 2000))
		require.NoError(t, err)
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"ana": 30, "ben": 20, "cai": 10}))
		c := b.Client.Client
		turnKey := "lb:{" + name + "}::turn:alltime"
		// A reader takes its turn and reads the top as it is now.
		stale, err := c.Do(ctx, c.B().Incr().Key(turnKey).Build()).AsInt64()
		require.NoError(t, err)
		// A write reaches the top and rewrites the mirror after it.
		_, err = board.Submit(ctx, "star", 3000)
		require.NoError(t, err)
		names := func() []string {
			top, err := board.Top(ctx, 3)
			require.NoError(t, err)
			out := make([]string, len(top))
			for i, e := range top {
				out[i] = e.Member
			}
			return out
		}
		require.Equal(t, []string{"star", "ana", "ben"}, names())
		// The reader puts what it read: refused, the mirror keeps the write.
		put, err := lb.HotPut(ctx, board, stale, []string{"ana", "ben", "cai"}, []string{"30", "20", "10"})
		require.NoError(t, err)
		require.Zero(t, put, "a put whose turn had passed")
		require.Equal(t, []string{"star", "ana", "ben"}, names())
		// The reader holding the last turn puts.
		last, err := c.Do(ctx, c.B().Get().Key(turnKey).Build()).AsInt64()
		require.NoError(t, err)
		put, err = lb.HotPut(ctx, board, last, []string{"cai"}, []string{"10"})
		require.NoError(t, err)
		require.Equal(t, int64(1), put)
		require.Equal(t, []string{"cai"}, names())
	})
}

// TestHotTopConcurrent: processes writing and reading one board at once,
// with Submit, SubmitMany and Remove, leave every mirror as the board: once
// the writes are done a Top from the mirror is the Top of the board itself
// (read by a board without a hot top); on every kind of board and backend.
// Reads run beside the writes, so mirrors are also rebuilt by readers
// while writes land.
func TestHotTopConcurrent(t *testing.T) { eachHotKind(t, runHotTopConcurrent) }

func runHotTopConcurrent(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	ctx := context.Background()
	name := shardName(t, b)
	opts := append([]lb.Option{lb.WithPolicy(lb.Replace)}, kind...)
	truth, err := lb.New(b.Client, name, opts...)
	require.NoError(t, err)
	const writers, steps, k = 6, 60, 5
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		board, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(k))...) // a process of its own
		require.NoError(t, err)
		rng := rand.New(rand.NewPCG(uint64(w), 77))
		wg.Go(func() { errs <- runHotWriter(ctx, board, rng, steps, k) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	hotSurprise(t, b, name, opts, k)
	want, err := truth.Top(ctx, k)
	require.NoError(t, err)
	for w := range 2 {
		board, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(k))...)
		require.NoError(t, err)
		got, err := board.Top(ctx, k)
		require.NoError(t, err)
		require.Equal(t, want, got, "reader %d: the mirror against the board", w)
	}
}

// runHotWriter is one process of TestHotTopConcurrent: Submits mostly,
// Tops, and now and then a Remove or a SubmitMany; last a Submit into the
// top.
func runHotWriter(ctx context.Context, board *lb.Leaderboard, rng *rand.Rand, steps, k int) error {
	for range steps {
		m := fmt.Sprintf("m%d", rng.IntN(20))
		var err error
		switch x := rng.IntN(20); {
		case x == 0:
			err = board.Remove(ctx, m)
		case x == 1:
			err = board.SubmitMany(ctx, map[string]float64{m: float64(rng.IntN(3000)), "m19": -1})
		case x < 8:
			_, err = board.Top(ctx, k)
		default:
			_, err = board.Submit(ctx, m, float64(rng.IntN(3100)-100))
		}
		if err != nil {
			return err
		}
	}
	// The last write enters the top: a mirror left behind it shows.
	_, err := board.Submit(ctx, fmt.Sprintf("m%d", rng.IntN(20)), float64(4000+rng.IntN(1000)))
	return err
}

// hotSurprise: process r reads the top (its snapshot of the mirror holds
// the k-th score, its floor), process o removes the best member and reads
// the top again (building a new mirror), then r submits a score between its
// floor and the new k-th (the scores of the top are set apart first, by
// a SubmitMany): r does not expect it to reach the top, and its
// reply shows that it did, which must rewrite the mirror.
func hotSurprise(t *testing.T, b *testredis.Backend, name string, opts []lb.Option, k int) {
	ctx := context.Background()
	r, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(k))...)
	require.NoError(t, err)
	o, err := lb.New(b.Client, name, append(opts, lb.WithHotTop(k))...)
	require.NoError(t, err)
	best := map[string]float64{}
	for i := range k + 1 {
		best[fmt.Sprintf("best%d", i)] = float64(10000 + 10*i)
	}
	require.NoError(t, o.SubmitMany(ctx, best))
	top, err := r.Top(ctx, k+1)
	require.NoError(t, err)
	require.Len(t, top, k+1)
	_, err = r.Top(ctx, k)
	require.NoError(t, err)
	require.NoError(t, o.Remove(ctx, top[0].Member))
	_, err = o.Top(ctx, k)
	require.NoError(t, err)
	floor, next := top[k-1].Score, top[k].Score
	res, err := r.Submit(ctx, "surprise", (floor+next)/2)
	require.NoError(t, err)
	require.Equal(t, int64(k), res.Standing.Rank)
}

// TestHotTopEmpty: the mirror of an empty period holds only its k, so
// reads find it (one GET, from the cache on a client that tracks keys)
// rather than build it again on every call; on every kind of board.
func TestHotTopEmpty(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		board, name := newHotBoard(t, b, kind, 5)
		for i := range 3 {
			before := b.Client.Calls()
			top, err := board.Top(ctx, 5)
			require.NoError(t, err)
			require.Empty(t, top)
			if i > 0 {
				require.Equal(t, int64(1), b.Client.Calls()-before, "read %d of an empty period's mirror", i)
			}
		}
		require.Len(t, b.Keys(t, "lb:{"+name+"}::topk:*"), 1)
	})
}

// TestHotTopUnchangedMirror: a rewrite that finds the mirror as the
// period's top leaves it as it is, expiry and all (a write would
// invalidate every client's cached copy); one that changes it sets it
// again, with the mirror's own expiry. The mirror's expiry is moved far
// out first: a rewrite would bring it back to ten seconds.
func TestHotTopUnchangedMirror(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		board, _ := newHotBoard(t, b, kind, 3)
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 30, "b": 20, "c": 10, "d": 5}))
		top, err := board.Top(ctx, 3) // builds the mirror
		require.NoError(t, err)
		require.Len(t, top, 3)
		c, mirror := b.Client, lb.HotKey(board)
		pttl := func() int64 {
			t.Helper()
			ms, err := c.Do(ctx, c.B().Pttl().Key(mirror).Build()).AsInt64()
			require.NoError(t, err)
			return ms
		}
		require.NoError(t, c.Do(ctx, c.B().Pexpire().Key(mirror).Milliseconds(time.Hour.Milliseconds()).Build()).Error())

		// A member of the top submits less than it holds (KeepBest keeps
		// it): the write reaches the top, the rewrite finds it unchanged.
		_, err = board.Submit(ctx, "b", 1)
		require.NoError(t, err)
		require.Greater(t, pttl(), (10 * time.Second).Milliseconds(), "an unchanged mirror was written again")

		_, err = board.Submit(ctx, "d", 40)
		require.NoError(t, err)
		require.LessOrEqual(t, pttl(), (10 * time.Second).Milliseconds(), "a changed mirror kept an expiry it was not given")
		hotEventually(t, board, "d", 1)
	})
}

// TestHotTopTwoK: processes whose WithHotTop k differ (a rollout of a new
// k) share a period's mirror, which holds the k of its last writer: a
// board reads its top from it only when that is its own k, and reads the
// period otherwise, so that neither gets a short or stale answer from a
// mirror kept for another k.
func TestHotTopTwoK(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		three, name := newHotBoard(t, b, kind, 3)
		five, err := lb.New(b.Client, name, append([]lb.Option{lb.WithHotTop(5)}, kind...)...)
		require.NoError(t, err)
		require.NoError(t, three.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7}))
		mirrorK := func() string {
			t.Helper()
			text, err := b.Client.Do(ctx, b.Client.B().Get().Key(lb.HotKey(three)).Build()).ToString()
			require.NoError(t, err)
			return text[:strings.IndexByte(text, ';')]
		}
		tops := func(want ...string) {
			t.Helper()
			for _, board := range []*lb.Leaderboard{three, five, three} {
				for n := 1; n <= 5; n++ {
					top, err := board.Top(ctx, n)
					require.NoError(t, err)
					var got []string
					for _, e := range top {
						got = append(got, e.Member)
					}
					require.Equal(t, want[:n], got, "Top(%d)", n)
				}
				p, err := board.Page(ctx, 2, 2) // positions 3 and 4
				require.NoError(t, err)
				require.Len(t, p.Entries, 2)
				require.Equal(t, want[2:4], []string{p.Entries[0].Member, p.Entries[1].Member})
			}
		}
		tops("g", "f", "e", "d", "c")
		require.Equal(t, "3", mirrorK(), "a read of another k rebuilt the mirror")

		// A write of the board of 5 into its top puts its own mirror.
		_, err = five.Submit(ctx, "h", 4.5)
		require.NoError(t, err)
		require.Equal(t, "5", mirrorK())
		tops("g", "f", "e", "h", "d")
		// One of the board of 3 into its top, its own.
		_, err = three.Submit(ctx, "c", 10)
		require.NoError(t, err)
		require.Equal(t, "3", mirrorK())
		tops("c", "g", "f", "e", "h")
	})
}

// TestHotTopUpkeepFails: a mirror's upkeep that fails after its write
// applied (here the mirror's key holds a hash, so every rewrite fails) is
// not the write's failure: Submit and a Batcher return the write's answer,
// the score is added once (a retry would add an Accumulate score twice),
// the broken mirror is deleted in one more round trip, and the next read
// builds it from the period. Both ways a Submit reaches the mirror: a
// member this process saw in the top (its rewrite in the write's round
// trip, on one node) and one it did not (a rewrite after the reply).
func TestHotTopUpkeepFails(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		board, _ := newHotBoard(t, b, kind, 3, lb.WithPolicy(lb.Accumulate))
		require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5}))
		c, mirror := b.Client, lb.HotKey(board)
		breakMirror := func() {
			t.Helper()
			top, err := board.Top(ctx, 3) // the mirror, and what this process saw of it
			require.NoError(t, err)
			require.Len(t, top, 3)
			require.NoError(t, c.Do(ctx, c.B().Del().Key(mirror).Build()).Error())
			require.NoError(t, c.Do(ctx, c.B().Hset().Key(mirror).FieldValue().FieldValue("not", "a mirror").Build()).Error())
		}
		mended := func(first string, score float64) {
			t.Helper()
			kind, err := c.Do(ctx, c.B().Type().Key(mirror).Build()).ToString()
			require.NoError(t, err)
			require.NotEqual(t, "hash", kind, "the broken mirror was left")
			top, err := board.Top(ctx, 3)
			require.NoError(t, err)
			require.Equal(t, lb.Entry{Member: first, Score: score, Rank: 1}, top[0])
		}

		breakMirror()
		res, err := board.Submit(ctx, "a", 100) // not in the top this process saw
		require.NoError(t, err)
		require.Equal(t, lb.Entry{Member: "a", Score: 101, Rank: 1}, res.Standing.Entry)
		mended("a", 101)

		breakMirror()
		res, err = board.Submit(ctx, "e", 200) // in it
		require.NoError(t, err)
		require.Equal(t, lb.Entry{Member: "e", Score: 205, Rank: 1}, res.Standing.Entry)
		mended("e", 205)

		breakMirror()
		bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
		require.NoError(t, err)
		res, err = bt.Submit(ctx, "b", 300)
		require.NoError(t, err)
		require.NoError(t, bt.Close(ctx))
		require.Equal(t, lb.Entry{Member: "b", Score: 302, Rank: 1}, res.Standing.Entry)
		mended("b", 302)
	})
}

// TestHotTopFollowsAReloadedWrite: a write that reaches the top carries
// the mirror's rewrite in its round trip, after it. When the server has
// the rewrite's script but not the write's (a restart, then a read that
// rebuilt the mirror), the write fails with NOSCRIPT and is sent again
// after the rewrite ran: the rewrite runs again after it, so the mirror
// shows the write.
func TestHotTopFollowsAReloadedWrite(t *testing.T) {
	for _, b := range []*testredis.Backend{testredis.Mini(t), testredis.Real(t)} {
		t.Run(b.Name, func(t *testing.T) {
			ctx := context.Background()
			board, _ := newBoard(t, b, lb.WithHotTop(3))
			for i, m := range []string{"a", "b", "c", "d"} {
				_, err := board.Submit(ctx, m, float64(10*(i+1)))
				require.NoError(t, err)
			}
			flushScripts(t, b)
			c := b.Client.Client
			require.NoError(t, c.Do(ctx, c.B().Unlink().Key(lb.HotKey(board)).Build()).Error())
			top, err := board.Top(ctx, 1) // rebuilds the mirror: loads its script
			require.NoError(t, err)
			require.Equal(t, "d", top[0].Member)
			_, err = board.Submit(ctx, "best", 1000, lb.WithID("first")) // a script: not loaded
			require.NoError(t, err)
			top, err = board.Top(ctx, 1)
			require.NoError(t, err)
			require.Equal(t, "best", top[0].Member, "the mirror after the reloaded write")
		})
	}
}

// TestHotSnapshotsBounded: a process keeps its snapshots of top mirrors
// for the periods still readable only. A board of two windows run through
// 40 days, every day's mirror written and read, keeps a few snapshots,
// not one a period it ever saw (it kept 46 before); a retained period read
// At keeps its own until its expiry.
func TestHotSnapshotsBounded(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		ctx := context.Background()
		clock := future
		board, _ := newHotBoard(t, b, kind, 5, lb.WithWindows(lb.Daily(), lb.Weekly()),
			lb.WithRetention(24*time.Hour), lb.WithClock(func() time.Time { return clock }))
		const days = 40
		for d := range days {
			for i := range 8 {
				_, err := board.Submit(ctx, fmt.Sprintf("p%d", i), float64(10*i+d))
				require.NoError(t, err)
			}
			for _, w := range []lb.Window{lb.Daily(), lb.Weekly()} {
				_, err := board.Top(ctx, 5, lb.In(w))
				require.NoError(t, err)
			}
			if d > 0 { // yesterday's, still readable
				es, err := board.Top(ctx, 5, lb.At(clock.Add(-24*time.Hour)))
				require.NoError(t, err)
				require.Len(t, es, 5)
			}
			// Today's and yesterday's of each window, at most.
			require.LessOrEqual(t, lb.HotSnaps(board), 4, "day %d", d)
			clock = clock.Add(24 * time.Hour)
		}
	})
}

// TestHotTopSet: a Set (an operator's correction) keeps a top mirror as a
// Submit does, on every policy and kind of board: a correction below the top
// leaves the mirror as it was (its cached reads served on; it deleted the
// mirror on an unsharded board, so the next Top rebuilt it), one that takes
// a member out of the top or into it shows in Top, and Top equals the
// board read past the mirror after each; a Set this process expects to
// reach the top rewrites the mirror in its own round trip (on an
// Accumulate board it took one more, guessed as an increment).
func TestHotTopSet(t *testing.T) {
	eachHotKind(t, func(t *testing.T, b *testredis.Backend, kind []lb.Option) {
		for _, policy := range []lb.Policy{lb.KeepBest, lb.Replace, lb.Accumulate} {
			t.Run(fmt.Sprint(policy), func(t *testing.T) {
				ctx := context.Background()
				board, _ := newHotBoard(t, b, kind, 3, lb.WithPolicy(policy))
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 40, "b": 30, "c": 20, "d": 10, "e": 5}))
				_, err := board.Top(ctx, 3) // builds the mirror
				require.NoError(t, err)
				c, mirror := b.Client, lb.HotKey(board)
				text := func() string {
					t.Helper()
					s, err := c.Do(ctx, c.B().Get().Key(mirror).Build()).ToString()
					require.NoError(t, err, "the mirror")
					return s
				}
				// A cached Top may trail a write by the invalidation's
				// moment (WithHotTop): it must match within a second.
				exact := func(what string, want ...string) {
					t.Helper()
					read, err := board.Range(ctx, 1, 4) // past the mirror's 3: the board
					require.NoError(t, err, what)
					var got []string
					for _, e := range read[:3] {
						got = append(got, e.Member)
					}
					require.Equal(t, want, got, what)
					deadline := time.Now().Add(time.Second)
					for {
						top, err := board.Top(ctx, 3)
						require.NoError(t, err, what)
						if slices.Equal(read[:3], top) {
							return
						}
						require.True(t, time.Now().Before(deadline), "%s: Top %v, the board %v", what, top, read[:3])
						time.Sleep(time.Millisecond)
					}
				}
				before := text()
				require.NoError(t, board.Set(ctx, "e", 6)) // below the top
				require.Equal(t, before, text(), "a Set below the top changed or deleted the mirror")
				exact("below", "a", "b", "c")
				require.NoError(t, board.Set(ctx, "a", 1)) // out of the top
				exact("out", "b", "c", "d")
				// Into it: this process expects that (50 is above the k-th
				// it saw), so the rewrite goes in the Set's round trip, on
				// an Accumulate board too (a Set's value is no increment).
				calls := b.Client.Calls()
				require.NoError(t, board.Set(ctx, "e", 50))
				require.Equal(t, hotTrips(b, len(kind) > 0, true), b.Client.Calls()-calls, "round trips of a Set into the top")
				exact("in", "e", "b", "c")
			})
		}
	})
}

// TestHotTopOnAReplicaOnlyClient: a board whose client reaches only a
// replica (a reader service) builds no mirror, which is a write: where it
// finds none (never built, deleted by a write, expired after 10 s) Top
// and Page read the period itself. They failed READONLY.
func TestHotTopOnAReplicaOnlyClient(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		if r.Name != "redis" {
			return // a Cluster's replica-only client needs a client per slot; the standalone one shows it
		}
		ctx := context.Background()
		primary := r.Primaries[0]
		name := fmt.Sprintf("replica-hot-%d", time.Now().UnixNano())
		writer, err := lb.New(primary, name)
		require.NoError(t, err)
		t.Cleanup(func() { _ = writer.Delete(context.Background()) })
		require.NoError(t, writer.SubmitMany(ctx, map[string]float64{"a": 1, "b": 2, "c": 3, "d": 4}))
		require.NoError(t, primary.Do(ctx, primary.B().Wait().Numreplicas(1).Timeout(2000).Build()).Error())
		want, err := writer.Top(ctx, 3)
		require.NoError(t, err)

		reader, err := lb.New(r.Replicas[0], name, lb.WithHotTop(3))
		require.NoError(t, err)
		got, err := reader.Top(ctx, 3)
		require.NoError(t, err, "Top on a replica-only client")
		require.Equal(t, want, got)
		p, err := reader.Page(ctx, 1, 2)
		require.NoError(t, err, "Page on a replica-only client")
		require.Equal(t, want[:2], p.Entries)
	})
}

// TestHotTopRoundTrips counts, on a client without the cache (every cached
// read reaches Redis: one round trip), what WithHotTop's doc gives: the
// writes that delete the mirror (SubmitMany, Reset) in their own round
// trip, on a sharded Cluster board in one more after the write; the read
// after them, which builds the mirror again after its cached read finds
// none (two round trips, four on a sharded Cluster board: the turn, the
// shards' first k, the put); a Page within the top, the mirror and the
// count; a Submit into the top that this process did not expect (its
// snapshot showed a full top above it; another process emptied the period)
// one round trip more for the rewrite, and then, expected, none more (a
// sharded Cluster board's three more either way); on every kind of board
// and backend.
func TestHotTopRoundTrips(t *testing.T) { eachHotKind(t, runHotTopRoundTrips) }

func runHotTopRoundTrips(t *testing.T, b *testredis.Backend, kind []lb.Option) {
	ctx := context.Background()
	board, name := newHotBoard(t, b, kind, 10, lb.WithPolicy(lb.Replace))
	other, err := lb.New(b.Client, name, slices.Concat([]lb.Option{lb.WithHotTop(10), lb.WithPolicy(lb.Replace)}, kind)...)
	require.NoError(t, err)
	loadHotBoard(t, board)
	apart := len(kind) > 0 && b.Name == "cluster" // mirror and shards in other slots
	// by picks the doc's figure, or a sharded Cluster board's.
	by := func(n, onCluster int64) int64 {
		if apart {
			return onCluster
		}
		return n
	}
	top := func() error { _, err := board.Top(ctx, 10); return err }
	for _, o := range []struct {
		name string
		want int64
		fn   func() error
	}{
		{"Top", 1, top},
		{"Page within the top", 2, func() error { _, err := board.Page(ctx, 1, 5); return err }},
		{"SubmitMany into the top", by(1, 3), func() error { return board.SubmitMany(ctx, map[string]float64{"many": 900}) }},
		{"Top after SubmitMany", by(2, 4), top},
		{"Top again", 1, top},
		{"Reset", by(1, 2), func() error { return board.Reset(ctx) }},
		{"Top after Reset", by(2, 4), top},
		{"load", -1, func() error { loadHotBoard(t, board); return nil }},
		{"Top of a full top", 1, top},
		{"Reset by another process", by(1, 2), func() error { return other.Reset(ctx) }},
		{"Submit into the top, not expected", hotTrips(b, len(kind) > 0, true) + by(1, 0), func() error { _, err := board.Submit(ctx, "m50", 50.5); return err }},
		{"Submit into the top, expected", hotTrips(b, len(kind) > 0, true), func() error { _, err := board.Submit(ctx, "m51", 51.5); return err }},
	} {
		before := b.Client.Calls()
		require.NoError(t, o.fn(), o.name)
		if o.want >= 0 {
			require.Equal(t, o.want, b.Client.Calls()-before, "[%s] %s round trips", b.Name, o.name)
		}
	}
}
