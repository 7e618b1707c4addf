package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestRemoveBetweenReadsPrimaries: with a client that sends read-only
// commands to replicas (WithReplicaReads), RemoveBetween reads the members
// it removes where its writes go. It read them as Between does, from a
// replica (with a store on every board, without one on a sharded board),
// so a member submitted just before, not yet on the replica, stayed in
// the range after RemoveBetween returned.
func TestRemoveBetweenReadsPrimaries(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		bounds := []float64{0, 100}
		for _, c := range []struct {
			name  string
			shard bool
			store bool
		}{{"plain store", false, true}, {"sharded", true, false}, {"sharded store", true, true}} {
			t.Run(c.name, func(t *testing.T) {
				ctx := context.Background()
				name := fmt.Sprintf("rbprimary-%d", time.Now().UnixNano())
				opts := []lb.Option{lb.WithPolicy(lb.Replace)}
				if c.shard {
					opts = append(opts, lb.WithShards(bounds...))
				}
				if c.store {
					opts = append(opts, lb.WithStore(newMemStore()))
				}
				board, err := lb.New(r.Reader, name, append([]lb.Option{lb.WithReplicaReads()}, opts...)...)
				require.NoError(t, err)
				truth, err := lb.New(primaryClient(t, r), name, opts...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = truth.Delete(context.Background()) })

				scores := map[string]float64{}
				for i := range 20 {
					scores[fmt.Sprintf("m%02d", i)] = float64(10 + i)
				}
				require.NoError(t, board.SubmitMany(ctx, scores))
				time.Sleep(100 * time.Millisecond) // the replicas catch up
				lagNodes(t, r)
				_, err = board.Submit(ctx, "late", 50)
				require.NoError(t, err)
				n, err := board.RemoveBetween(ctx, 0, 99)
				require.NoError(t, err)
				time.Sleep(500 * time.Millisecond)
				left, err := truth.Between(ctx, 0, 99, lb.MaxN)
				require.NoError(t, err)
				require.Empty(t, left, "members left in the range after RemoveBetween")
				require.Equal(t, int64(21), n)
			})
		}
	})
}

// primaryClient is a client of r's primaries that reads them too.
func primaryClient(t *testing.T, r *testredis.Replicated) rueidis.Client {
	t.Helper()
	if r.Name != "cluster" {
		return r.Primaries[0]
	}
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: testredis.ClusterAddrs(), DisableCache: true})
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c
}

// TestFillShadowReadsPrimaries: with a replica-reading client
// (WithReplicaReads), FillShadow lists the members it copies into the new
// layout from the primaries' partitions. It listed them from replicas, so
// a member submitted just before, not yet on a replica, was left out of
// the shadow, whose old shards the fill had deleted first.
func TestFillShadowReadsPrimaries(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		ctx := context.Background()
		name := fmt.Sprintf("fillprimary-%d", time.Now().UnixNano())
		opts := []lb.Option{lb.WithPolicy(lb.Replace), lb.WithShards(0, 100)}
		board, err := lb.New(r.Reader, name, append([]lb.Option{lb.WithReplicaReads(), lb.WithShadowShards(50)}, opts...)...)
		require.NoError(t, err)
		moved, err := lb.New(primaryClient(t, r), name, lb.WithPolicy(lb.Replace), lb.WithShards(50))
		require.NoError(t, err)
		t.Cleanup(func() { _ = moved.Delete(context.Background()) })
		t.Cleanup(func() { _ = board.Delete(context.Background()) })

		scores := map[string]float64{}
		for i := range 20 {
			scores[fmt.Sprintf("m%02d", i)] = float64(10 * i)
		}
		require.NoError(t, board.SubmitMany(ctx, scores))
		time.Sleep(100 * time.Millisecond)
		// A member of a partition the fill reads in its first round trip,
		// while the replicas still trail.
		late := "late"
		for n := 0; keys.PartitionOf(late) >= 32; n++ {
			late = fmt.Sprintf("late%d", n)
		}
		lagNodes(t, r)
		_, err = board.Submit(ctx, late, 75)
		require.NoError(t, err)
		_, err = board.FillShadow(ctx)
		require.NoError(t, err)
		time.Sleep(500 * time.Millisecond)
		es, err := moved.Top(ctx, lb.MaxN)
		require.NoError(t, err)
		require.Contains(t, names(es), late, "the shadow after FillShadow")
		require.Len(t, es, 21)
	})
}

// TestCheckReadsPrimaries: with WithReplicaReads, Check compares the
// partitions and shards of the primaries, so a member written moments
// before, not yet on a replica, counts (it read the replicas: a member
// short, or, one command at a time, a difference that is none).
func TestCheckReadsPrimaries(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		ctx := context.Background()
		name := fmt.Sprintf("checkprimary-%d", time.Now().UnixNano())
		board, err := lb.New(r.Reader, name, lb.WithReplicaReads(), lb.WithPolicy(lb.Replace), lb.WithShards(0, 100))
		require.NoError(t, err)
		t.Cleanup(func() { _ = board.Delete(context.Background()) })
		scores := map[string]float64{}
		for i := range 20 {
			scores[fmt.Sprintf("m%02d", i)] = float64(10 * i)
		}
		require.NoError(t, board.SubmitMany(ctx, scores))
		time.Sleep(100 * time.Millisecond)
		lagNodes(t, r)
		_, err = board.Submit(ctx, "late", 75)
		require.NoError(t, err)
		reports, err := board.Check(ctx, false)
		require.NoError(t, err)
		require.Len(t, reports, 1)
		require.True(t, reports[0].Clean(), "%+v", reports[0])
		require.Equal(t, int64(21), reports[0].Members, "the member written before Check counts")
	})
}

// lagNodes holds every replica behind its primary for a moment: a large
// write on each primary (a key in a slot it serves, on a Cluster).
func lagNodes(t *testing.T, r *testredis.Replicated) {
	t.Helper()
	ctx := context.Background()
	tags := []string{"{lagpad}"}
	if r.Name == "cluster" {
		tags = tagsOnEveryNode(t, r.Reader)
	}
	pad := strings.Repeat("x", 64<<20)
	for _, tag := range tags {
		key := "lagpad" + tag
		t.Cleanup(func() { _ = r.Reader.Do(context.Background(), r.Reader.B().Unlink().Key(key).Build()).Error() })
		require.NoError(t, r.Reader.Do(ctx, r.Reader.B().Set().Key(key).Value(pad).Build()).Error())
	}
}

// tagsOnEveryNode finds a hash tag in the slots of each primary of a
// Cluster.
func tagsOnEveryNode(t *testing.T, c rueidis.Client) []string {
	t.Helper()
	ctx := context.Background()
	slots, err := c.Do(ctx, c.B().ClusterSlots().Build()).ToArray()
	require.NoError(t, err)
	var tags []string
	for _, s := range slots {
		rng, err := s.ToArray()
		require.NoError(t, err)
		lo, err := rng[0].AsInt64()
		require.NoError(t, err)
		hi, err := rng[1].AsInt64()
		require.NoError(t, err)
		for n := 0; ; n++ {
			tag := fmt.Sprintf("{n%d}", n)
			slot, err := c.Do(ctx, c.B().ClusterKeyslot().Key(tag).Build()).AsInt64()
			require.NoError(t, err)
			if slot >= lo && slot <= hi {
				tags = append(tags, tag)
				break
			}
		}
	}
	return tags
}

// TestSealReadsPrimaries: with a replica-reading client (WithReplicaReads),
// Seal reads the standings it seals for good from the primaries. It read
// them as the board's reads do, from replicas, so a submission
// acknowledged just before the period closed, not yet on a replica, was
// missing from the sealed standings.
func TestSealReadsPrimaries(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		for _, shards := range [][]float64{nil, {0, 100}} {
			t.Run(fmt.Sprint("shards ", shards), func(t *testing.T) { sealReadsPrimaries(t, r, shards) })
		}
	})
}

func sealReadsPrimaries(t *testing.T, r *testredis.Replicated, shards []float64) {
	ctx := context.Background()
	now := time.Now().UTC()
	clock := &testClock{now: now}
	name := fmt.Sprintf("sealprimary-%d", time.Now().UnixNano())
	opts := []lb.Option{lb.WithReplicaReads(), lb.WithWindows(lb.Daily()), lb.WithStore(newMemStore()), lb.WithClock(clock.Now)}
	if shards != nil {
		opts = append(opts, lb.WithShards(shards...))
	}
	board, err := lb.New(r.Reader, name, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = board.Delete(context.Background()) })
	_, err = board.Rebuild(ctx) // Present: Seal's precondition
	require.NoError(t, err)
	scores := map[string]float64{}
	for i := range 20 {
		scores[fmt.Sprintf("m%02d", i)] = float64(i)
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	time.Sleep(100 * time.Millisecond)
	lagNodes(t, r)
	_, err = board.Submit(ctx, "late", 1000)
	require.NoError(t, err)
	clock.Set(lb.Daily().Period(now).End.Add(time.Second))
	sealed, err := board.Seal(ctx, nil)
	require.NoError(t, err)
	require.Len(t, sealed, 1)
	require.Contains(t, names(sealed[0].Entries), "late", "the sealed standings")
	require.Len(t, sealed[0].Entries, 21)
}

// TestSubmitResultFromPrimaries: with WithReplicaReads, the standing a
// Submit or a Batcher's Submit returns is the primaries' (the README
// tells a player to read their own new standing from it, as reads may
// trail). On a sharded Cluster board a Submit's second step counted the
// other shards with plain ZCARDs, which a replica-reading client sends to
// the replicas: with the best shard's replica behind, 50 members written
// just before were missing from the rank (rank 1 of 2 where the primaries
// had 51 of 52).
func TestSubmitResultFromPrimaries(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		for _, batch := range []bool{false, true} {
			for _, unchanged := range []bool{false, true} {
				t.Run(fmt.Sprintf("batch=%v/unchanged=%v", batch, unchanged), func(t *testing.T) {
					submitResultFromPrimaries(t, r, batch, unchanged)
				})
			}
		}
	})
}

func submitResultFromPrimaries(t *testing.T, r *testredis.Replicated, batch, unchanged bool) {
	ctx := context.Background()
	name := fmt.Sprintf("resultprimary-%d", time.Now().UnixNano())
	// KeepBest: an unchanged write (a score below the best) changes no
	// shard, and its Result is the member's standing as it was.
	opts := []lb.Option{lb.WithPolicy(lb.KeepBest), lb.WithShards(100)}
	board, err := lb.New(r.Reader, name, append([]lb.Option{lb.WithReplicaReads()}, opts...)...)
	require.NoError(t, err)
	truth, err := lb.New(primaryClient(t, r), name, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = truth.Delete(context.Background()) })
	bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
	require.NoError(t, err)
	defer bt.Close(ctx)
	submit := board.Submit
	if batch {
		submit = bt.Submit
	}
	// The scripts loaded on every node; x's best, for an unchanged write.
	_, err = submit(ctx, "warm", 1)
	require.NoError(t, err)
	score := 50.0
	if unchanged {
		_, err = submit(ctx, "x", score)
		require.NoError(t, err)
		score = 10
	}
	time.Sleep(100 * time.Millisecond)
	lagNodes(t, r)
	best := map[string]float64{} // 50 members in the best shard, not yet on the replicas
	for i := range 50 {
		best[fmt.Sprintf("b%02d", i)] = float64(500 + i)
	}
	require.NoError(t, board.SubmitMany(ctx, best))
	res, err := submit(ctx, "x", score)
	require.NoError(t, err)
	st, err := truth.Rank(ctx, "x")
	require.NoError(t, err)
	require.Equal(t, int64(51), st.Rank, "the primaries")
	require.Equal(t, st, res.Standing, "the Result against the primaries")
}

// TestPresentAndVerifyReadPrimaries: with WithReplicaReads, Present looks
// for Rebuild's markers on the primaries, and Verify compares the store
// with the primaries: read from a trailing replica, Present reported false
// right after a Rebuild (calling for another, which may undo writes), and
// Verify reported a member written just before it as missing.
func TestPresentAndVerifyReadPrimaries(t *testing.T) {
	testredis.EachReplicated(t, func(t *testing.T, r *testredis.Replicated) {
		for _, kind := range []struct {
			name string
			opts []lb.Option
		}{{"plain", nil}, {"sharded", []lb.Option{lb.WithShards(0, 100)}}} {
			t.Run(kind.name, func(t *testing.T) {
				ctx := context.Background()
				name := fmt.Sprintf("presentprimary-%d", time.Now().UnixNano())
				opts := append([]lb.Option{lb.WithReplicaReads(), lb.WithStore(newMemStore())}, kind.opts...)
				board, err := lb.New(r.Reader, name, opts...)
				require.NoError(t, err)
				t.Cleanup(func() { _ = board.Delete(context.Background()) })
				_, err = board.Submit(ctx, "first", 10)
				require.NoError(t, err)
				time.Sleep(100 * time.Millisecond)

				lagNodes(t, r)
				_, err = board.Rebuild(ctx)
				require.NoError(t, err)
				ok, err := board.Present(ctx)
				require.NoError(t, err)
				require.True(t, ok, "Present right after Rebuild")

				lagNodes(t, r)
				_, err = board.Submit(ctx, "late", 75)
				require.NoError(t, err)
				reports, err := board.Verify(ctx)
				require.NoError(t, err)
				for _, rep := range reports {
					require.True(t, rep.Clean(), "%+v", rep)
				}
			})
		}
	})
}
