package leaderboard_test

import (
	"context"
	"fmt"
	"iter"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// walkKinds are the boards All walks in its tests: unsharded, and sharded
// with bounds among the scores the tests submit (0..99), so that a walk
// crosses shards and ties straddle no bound.
func walkKinds() []struct {
	name string
	opts []lb.Option
} {
	return []struct {
		name string
		opts []lb.Option
	}{
		{"plain", nil},
		{"sharded", []lb.Option{lb.WithShards(20.5, 50.5, 80.5)}},
	}
}

// newWalkBoard is a Replace board of one kind, cleaned up after the test.
func newWalkBoard(t *testing.T, b *testredis.Backend, opts []lb.Option, order lb.Order) *lb.Leaderboard {
	t.Helper()
	board, err := lb.New(b.Client, shardName(t, b), append([]lb.Option{lb.WithPolicy(lb.Replace), lb.WithOrder(order)}, opts...)...)
	require.NoError(t, err)
	return board
}

// walk collects All's entries, failing on an error.
func walk(t *testing.T, seq iter.Seq2[lb.Entry, error]) []lb.Entry {
	t.Helper()
	var out []lb.Entry
	for e, err := range seq {
		require.NoError(t, err)
		out = append(out, e)
	}
	return out
}

// TestAllWhileWriting walks boards of several chunks while 64 goroutines
// submit random scores for a third of the members: every member that was
// not written is yielded exactly once, and in the board's order.
func TestAllWhileWriting(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range walkKinds() {
			for _, order := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
				t.Run(fmt.Sprintf("%s/%v", kind.name, order), func(t *testing.T) {
					runAllWhileWriting(t, b, kind.opts, order)
				})
			}
		}
	})
}

func runAllWhileWriting(t *testing.T, b *testredis.Backend, opts []lb.Option, order lb.Order) {
	ctx := context.Background()
	board := newWalkBoard(t, b, opts, order)
	const n = 2*lb.MaxN + 500
	rng := rand.New(rand.NewPCG(7, uint64(order)))
	scores := make(map[string]float64, n)
	var movers []string
	for i := range n {
		m := fmt.Sprintf("m%05d", i)
		scores[m] = float64(rng.IntN(100)) // many ties: the walk resumes inside tie blocks
		if i%3 == 0 {
			movers = append(movers, m)
		}
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	want, err := board.Range(ctx, 1, lb.MaxN)
	require.NoError(t, err)
	before := walk(t, board.All(ctx)) // the order of the members that will stay still
	require.Len(t, before, n)
	require.Equal(t, want, before[:lb.MaxN], "All's first chunk is Range(1, MaxN)")

	moving := map[string]bool{}
	for _, m := range movers {
		moving[m] = true
	}
	var stop atomic.Bool
	var writes atomic.Int64
	var wg sync.WaitGroup
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 99))
			for !stop.Load() {
				m := movers[r.IntN(len(movers))]
				if _, err := board.Submit(ctx, m, float64(r.IntN(100))); err != nil {
					t.Errorf("Submit(%q): %v", m, err)
					return
				}
				writes.Add(1)
			}
		}()
	}
	var got []lb.Entry
	for e, err := range board.All(ctx) {
		require.NoError(t, err)
		got = append(got, e)
		if len(got)%200 == 0 {
			// Let the writers move members between the walk's chunks.
			for w := writes.Load(); writes.Load() < w+20; {
				time.Sleep(time.Millisecond)
			}
		}
	}
	stop.Store(true)
	wg.Wait()
	require.Positive(t, writes.Load())

	var stillWant, stillGot []string
	for _, e := range before {
		if !moving[e.Member] {
			stillWant = append(stillWant, e.Member)
		}
	}
	for _, e := range got {
		if !moving[e.Member] {
			stillGot = append(stillGot, e.Member)
		}
	}
	require.Equal(t, stillWant, stillGot, "every member that did not move, once each, in order (%d writes during the walk)", writes.Load())
}

// TestAllResumesAfterMovedMember: the member a chunk ended with moves, or
// leaves, before the next chunk is read; the walk resumes where it would
// have stood, inside a block of equal scores, and yields every other member
// once. That chunk takes the two round trips the docs give: its MULTI
// finds the entry moved, then the script reads it (on a sharded Cluster
// board three calls, the MULTI's pipeline sent beside the other shards').
func TestAllResumesAfterMovedMember(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range walkKinds() {
			for _, order := range []lb.Order{lb.HighestFirst, lb.LowestFirst} {
				for _, how := range []string{"moves", "leaves"} {
					t.Run(fmt.Sprintf("%s/%v/%s", kind.name, order, how), func(t *testing.T) {
						runAllResumes(t, b, kind.opts, kind.name == "sharded", order, how)
					})
				}
			}
		}
	})
}

func runAllResumes(t *testing.T, b *testredis.Backend, opts []lb.Option, sharded bool, order lb.Order, how string) {
	ctx := context.Background()
	name := shardName(t, b)
	// Each walk from a board value of its own: none has seen counts, so
	// each plans its chunks alike.
	fresh := func() *lb.Leaderboard {
		board, err := lb.New(b.Client, name, append([]lb.Option{lb.WithPolicy(lb.Replace), lb.WithOrder(order)}, opts...)...)
		require.NoError(t, err)
		return board
	}
	board := fresh()
	scores := map[string]float64{}
	for i := range lb.MaxN + 300 {
		scores[fmt.Sprintf("t%05d", i)] = 42 // one block of ties across a chunk's end
	}
	for i := range 200 {
		scores[fmt.Sprintf("o%03d", i)] = float64(i % 100)
	}
	require.NoError(t, board.SubmitMany(ctx, scores))
	all := walk(t, fresh().All(ctx))
	require.Len(t, all, len(scores))
	end := -1 // the first chunk's end inside the block of ties
	for _, i := range chunkEnds(t, b, fresh().All(ctx)) {
		if scores[all[i].Member] == 42 && end < 0 {
			end = i
		}
	}
	require.GreaterOrEqual(t, end, 0, "a chunk ends inside the block of ties")
	// A walk with data runs the scripts a moved entry's chunk is read by:
	// loaded, they cost no round trip more below (NOSCRIPT).
	walk(t, fresh().All(ctx, lb.IncludeData()))

	next, stop := iter.Pull2(fresh().All(ctx))
	defer stop()
	var got []string
	for range end + 1 {
		e, err, ok := next()
		require.True(t, ok)
		require.NoError(t, err)
		got = append(got, e.Member)
	}
	last := got[len(got)-1]
	require.Equal(t, all[end].Member, last)
	if how == "moves" {
		_, err := board.Submit(ctx, last, 99.5)
		require.NoError(t, err)
	} else {
		require.NoError(t, board.Remove(ctx, last))
	}
	wantCalls := int64(2)
	if sharded && b.Name == "cluster" {
		wantCalls = 3
	}
	for i := 0; ; i++ {
		before := b.Client.Calls()
		e, err, ok := next()
		if i == 0 {
			require.Equal(t, wantCalls, b.Client.Calls()-before, "calls of the chunk after the moved entry")
		}
		if !ok {
			break
		}
		require.NoError(t, err)
		got = append(got, e.Member)
	}
	var want []string
	for _, e := range all {
		want = append(want, e.Member)
	}
	if how == "moves" && order == lb.LowestFirst {
		want = append(want, last) // met again at its new place, after the walk's
	}
	require.Equal(t, want, got)
}

// chunkEnds walks seq and returns the positions (0-based) of the entries
// that ended a chunk: the next entry took a round trip on b's client.
func chunkEnds(t *testing.T, b *testredis.Backend, seq iter.Seq2[lb.Entry, error]) []int {
	t.Helper()
	next, stop := iter.Pull2(seq)
	defer stop()
	var ends []int
	for i := 0; ; i++ {
		before := b.Client.Calls()
		_, err, ok := next()
		if !ok {
			return ends
		}
		require.NoError(t, err)
		if i > 0 && b.Client.Calls() > before {
			ends = append(ends, i-1)
		}
	}
}

// TestAllRoundTrips: a walk costs one round trip a chunk of up to MaxN
// (two on a sharded board with IncludeData), and no more: a board of
// exactly k*MaxN members is walked in k chunks, not k and an empty one;
// on a sharded board whose counts a read has seen, a chunk takes MaxN
// entries across the shards, not fewer. Each walk yields every member once,
// in the order of the board's pages.
func TestAllRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, kind := range walkKinds() {
			for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
				t.Run(fmt.Sprintf("%s/%v", kind.name, rank), func(t *testing.T) {
					runAllRoundTrips(t, b, kind.opts, rank, kind.name == "sharded")
				})
			}
		}
	})
}

func runAllRoundTrips(t *testing.T, b *testredis.Backend, opts []lb.Option, rank lb.RankMode, sharded bool) {
	ctx := context.Background()
	board := newWalkBoard(t, b, append([]lb.Option{lb.WithRanking(rank)}, opts...), lb.HighestFirst)
	rng := rand.New(rand.NewPCG(11, 12))
	size := 0
	for _, n := range []int{lb.MaxN - 1, lb.MaxN, lb.MaxN + 1, 2 * lb.MaxN} {
		scores := map[string]float64{}
		for ; size < n; size++ {
			scores[fmt.Sprintf("m%05d", size)] = float64(rng.IntN(100))
		}
		require.NoError(t, board.SubmitMany(ctx, scores))
		var want []lb.Entry
		for p := 1; p <= (n+lb.MaxN-1)/lb.MaxN; p++ {
			page, err := board.Page(ctx, p, lb.MaxN)
			require.NoError(t, err)
			want = append(want, page.Entries...)
		}
		for _, q := range [][]lb.Query{nil, {lb.IncludeData()}} {
			perChunk := int64(1)
			if sharded && q != nil {
				perChunk = 2
			}
			walk(t, board.All(ctx, q...)) // the counts a sharded walk plans by
			before := b.Client.Calls()
			got := walk(t, board.All(ctx, q...))
			calls := b.Client.Calls() - before
			require.Len(t, got, n)
			if q == nil {
				require.Equal(t, want, got, "%d members: All is the board's pages", n)
			}
			chunks := int64((n + lb.MaxN - 1) / lb.MaxN)
			wantCalls := chunks * perChunk
			if b.Name == "cluster" && sharded && rank == lb.Ordinal && q == nil {
				// A chunk that resumes inside a shard reads it by a MULTI
				// beside the other shards' commands: two pipelines at once,
				// one round trip's time, two calls of the client.
				wantCalls += chunks - 1
			}
			require.Equal(t, wantCalls, calls, "%d members, %d queries: calls", n, len(q))
		}
	}
}
