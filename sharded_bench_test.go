package leaderboard_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"

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

// BenchmarkShardedReplicaSubmit measures a sharded Cluster board's Submit
// through a client that sends read-only commands to replicas, without and
// with WithReplicaReads, which sends the second step's reads of the other
// shards (their counts, the member's copies) to the primaries in a MULTI a
// shard: what a Result from the primaries costs. 1,000 members, random
// scores over four shards, 32 goroutines a CPU:
//
//	go test -run '^$' -bench ShardedReplicaSubmit -benchtime 2s -count 5 .
func BenchmarkShardedReplicaSubmit(b *testing.B) {
	be := testredis.Cluster(b)
	c, err := rueidis.NewClient(rueidis.ClientOption{
		InitAddress:    testredis.ClusterAddrs(),
		SendToReplicas: func(cmd rueidis.Completed) bool { return cmd.IsReadOnly() },
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	for _, replicaReads := range []bool{false, true} {
		b.Run("replicaReads="+strconv.FormatBool(replicaReads), func(b *testing.B) {
			opts := []lb.Option{lb.WithShards(250, 500, 750)}
			if replicaReads {
				opts = append(opts, lb.WithReplicaReads())
			}
			board, err := lb.New(c, be.BoardName(b), opts...)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { _ = board.Delete(context.Background()) })
			var n atomic.Int64
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					i := n.Add(1)
					if _, err := board.Submit(context.Background(), "m"+strconv.FormatInt(i*7919%1000, 10), float64(i*104729%1000)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}
