package leaderboard

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/testredis"
)

// BenchmarkOps measures every operation, one call per iteration, on
// miniredis and on a real Redis, with -benchmem figures for the client's
// allocations. Under miniredis the server runs in this process, so its
// allocations are counted too: read allocations off the redis runs.
//
//	go test -run '^$' -bench Ops -benchmem .
//	go test -run '^$' -bench 'Ops/redis/(Top|Rank)$' -benchmem -count 6 . | benchstat -
//
// examples/bench measures the same against raw commands, at any size and
// concurrency.
func BenchmarkOps(b *testing.B) {
	for _, backend := range []string{"miniredis", "redis"} {
		b.Run(backend, func(b *testing.B) {
			be := testredis.Mini(b)
			if backend == "redis" {
				be = testredis.Real(b)
			}
			benchOps(b, be)
		})
	}
}

// benchBoard is a new board on be, wiped after the benchmark.
func benchBoard(b *testing.B, be *testredis.Backend) *Leaderboard {
	return benchBoardOn(b, be, be.Client.Client)
}

// benchBoardOn is benchBoard through client (one of be's) with opts.
func benchBoardOn(b *testing.B, be *testredis.Backend, client rueidis.Client, opts ...Option) *Leaderboard {
	name := be.BoardName(b)
	board, err := New(client, name, opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { be.Wipe(b, name) })
	return board
}

func benchOps(b *testing.B, be *testredis.Backend) {
	const members = 10_000
	ctx := context.Background()
	board := benchBoard(b, be)
	member := func(i int64) string { return "player:" + strconv.FormatInt(i%members, 10) }
	batch := make(map[string]float64, 1000)
	for i := range int64(members) {
		batch[member(i)] = float64(i * 7 % 5000)
		if len(batch) == 1000 {
			if err := board.SubmitMany(ctx, batch); err != nil {
				b.Fatal(err)
			}
			clear(batch)
		}
	}
	many := make(map[string]float64, 1000)
	for i := range int64(1000) {
		many[member(i*7)] = float64(i)
	}
	friends := make([]string, 50)
	for i := range friends {
		friends[i] = member(int64(i) * 199)
	}
	var n atomic.Int64
	ops := []struct {
		name string
		call func() error
	}{
		{"Submit", func() error {
			i := n.Add(1)
			_, err := board.Submit(ctx, member(i), float64(i%7000))
			return err
		}},
		{"SubmitMany1000", func() error { return board.SubmitMany(ctx, many) }},
		{"Top10", func() error { _, err := board.Top(ctx, 10); return err }},
		{"Rank", func() error { _, err := board.Rank(ctx, member(n.Add(1))); return err }},
		{"Around5", func() error { _, err := board.Around(ctx, member(n.Add(1)), 5); return err }},
		{"Page1", func() error { _, err := board.Page(ctx, 1, 20); return err }},
		{"PageDeep", func() error { _, err := board.Page(ctx, members/2/20, 20); return err }},
		{"Among50", func() error { _, err := board.Among(ctx, friends); return err }},
		{"Count", func() error { _, err := board.Count(ctx); return err }},
	}
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := op.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkBatcher measures a Batcher's Submit beside the board's, from
// 512 goroutines at once (b.SetParallelism) to 1,000 members on a real
// Redis, with the client's allocations a submission: what the caller's
// side of a batch costs (examples/bench -batch measures both against
// Redis's work, in bursts).
//
//	go test -run '^$' -bench Batcher -benchmem -count 6 . | benchstat -
func BenchmarkBatcher(b *testing.B) {
	ctx := context.Background()
	board := benchBoard(b, testredis.Real(b))
	bt, err := board.NewBatcher()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = bt.Close(ctx) })
	for _, c := range []struct {
		name   string
		submit func(context.Context, string, float64, ...SubmitOption) (Result, error)
	}{{"Batcher", bt.Submit}, {"Submit", board.Submit}} {
		b.Run(c.name, func(b *testing.B) {
			var n atomic.Int64
			b.ReportAllocs()
			b.SetParallelism(256)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, err := c.submit(ctx, "player:"+strconv.FormatInt(i%1000, 10), float64(i%7000)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkHotTop measures a Top(10) answered from this process's memory
// (WithHotTop on a client that tracks keys) on a real Redis, from 64
// goroutines, with the client's allocations a call: the SDK's side of a
// cached read, which bounds it (examples/bench -hot measures it against
// the uncached Top).
//
//	go test -run '^$' -bench HotTop -benchmem -count 6 . | benchstat -
func BenchmarkHotTop(b *testing.B) {
	ctx := context.Background()
	be := testredis.Real(b)
	// Not counting: its counters would be measured too.
	board := benchBoardOn(b, be, be.Caching(b).Client, WithHotTop(10))
	scores := make(map[string]float64, 1000)
	for i := range 1000 {
		scores["player:"+strconv.Itoa(i)] = float64(i)
	}
	if err := board.SubmitMany(ctx, scores); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetParallelism(32) // 32 goroutines a CPU: 64 on two
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if es, err := board.Top(ctx, 10); err != nil || len(es) != 10 {
				b.Errorf("Top(10): %d entries, %v", len(es), err)
				return
			}
		}
	})
}
