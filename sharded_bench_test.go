package leaderboard_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// BenchmarkSharded compares Submit and Rank on a board split into 8 shards
// with the same board unsharded, on the real standalone Redis and on the
// Cluster, 100,000 members, 32 goroutines a CPU:
//
//	go test -run '^$' -bench Sharded -benchtime 3s .
func BenchmarkSharded(b *testing.B) {
	const members = 100_000
	bounds := []float64{1000, 2000, 3000, 4000, 5000, 6000, 7000} // 8 shards over 0..8000
	for _, backend := range []func(testing.TB) *testredis.Backend{testredis.Real, testredis.Cluster} {
		be := backend(b)
		for _, shards := range []int{1, 8} {
			opts := []lb.Option{}
			if shards > 1 {
				opts = append(opts, lb.WithShards(bounds...))
			}
			name := be.BoardName(b)
			b.Cleanup(func() {
				for _, k := range be.Keys(b, "*{"+name+"#*") {
					be.Client.Client.Do(context.Background(), be.Client.Client.B().Del().Key(k).Build())
				}
			})
			board, err := lb.New(be.Client.Client, name, opts...)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			batch := make(map[string]float64, 1000)
			for i := 0; i < members; i++ {
				batch["player:"+strconv.Itoa(i)] = float64(i % 8000)
				if len(batch) == 1000 {
					if err := board.SubmitMany(ctx, batch); err != nil {
						b.Fatal(err)
					}
					clear(batch)
				}
			}
			prefix := be.Name + "/shards=" + strconv.Itoa(shards)
			player := func(i int64) string { return "player:" + strconv.FormatInt(i%members, 10) }
			runParallel(b, prefix+"/Submit", func(i int64) error {
				_, err := board.Submit(ctx, player(i), float64(i%8000))
				return err
			})
			runParallel(b, prefix+"/Rank", func(i int64) error {
				_, err := board.Rank(ctx, player(i))
				return err
			})
		}
	}
}

// runParallel runs op from 32 goroutines per CPU, each call with the next
// number of a shared counter.
func runParallel(b *testing.B, name string, op func(i int64) error) {
	b.Run(name, func(b *testing.B) {
		var n atomic.Int64
		b.SetParallelism(32)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := op(n.Add(1)); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}
