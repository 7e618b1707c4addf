package leaderboard_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestShardedReadsWhileMoving: reads by position of a sharded board
// (Around, Cutoff, Range in the middle) while members cross a bound as
// fast as 8 writers can move them, on a board whose size never changes.
// On a Cluster they counted the shards, then read by position a round
// trip later: a shard that members left meanwhile put the positions past
// its end or beside them, so Around lacked its member (a third of the
// calls), Cutoff answered that the board was empty and Range(70, 70) of
// 140 members came back empty; and a member caught between its two shard
// writes read as unranked (Rank, Around). They now check what they read and read again
// (shiftTries), Around from the member's own shard.
func TestShardedReadsWhileMoving(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, rank := range []lb.RankMode{lb.Ordinal, lb.Competition} {
			t.Run(rank.String(), func(t *testing.T) {
				ctx := context.Background()
				board, err := lb.New(b.Client, shardName(t, b), lb.WithShards(0), lb.WithPolicy(lb.Replace), lb.WithRanking(rank))
				require.NoError(t, err)
				load := map[string]float64{}
				var statics []string
				for i := range 40 {
					m := fmt.Sprintf("s%02d", i)
					statics, load[m] = append(statics, m), 0.5
				}
				for i := range 100 {
					load[fmt.Sprintf("m%03d", i)] = float64(1 - 2*(i%2))
				}
				require.NoError(t, board.SubmitMany(ctx, load))
				stop := make(chan struct{})
				var wg sync.WaitGroup
				for g := range 8 {
					wg.Go(func() {
						r := rand.New(rand.NewPCG(uint64(g), 19))
						for {
							select {
							case <-stop:
								return
							default:
							}
							_, _ = board.Submit(ctx, fmt.Sprintf("m%03d", r.IntN(100)), float64(1-2*r.IntN(2)))
						}
					})
				}
				defer func() { close(stop); wg.Wait() }()
				deadline := time.Now().Add(2 * time.Second)
				for i := 0; time.Now().Before(deadline); i++ {
					m := statics[i%len(statics)]
					for _, radius := range []int{0, 2} {
						var q []lb.Query
						if i%2 == 1 {
							q = []lb.Query{lb.IncludeData()}
						}
						es, err := board.Around(ctx, m, radius, q...)
						require.NoError(t, err, "Around(%q, %d)", m, radius)
						require.True(t, slices.ContainsFunc(es, func(e lb.Entry) bool { return e.Member == m }), "Around(%q, %d) = %v", m, radius, es)
						require.Len(t, es, 2*radius+1, "Around(%q, %d) = %v", m, radius, es)
					}
					// A mover may be caught between its two shard writes.
					mover := fmt.Sprintf("m%03d", i%100)
					_, err := board.Rank(ctx, mover)
					require.NoError(t, err, "Rank(%q)", mover)
					es, err := board.Around(ctx, mover, 1)
					require.NoError(t, err, "Around(%q, 1)", mover)
					require.Len(t, es, 3, "Around(%q, 1) = %v", mover, es)
					e, err := board.Cutoff(ctx, 50)
					require.NoError(t, err, "Cutoff on a board of 140 members")
					require.NotEmpty(t, e.Member)
					es, err = board.Range(ctx, 70, 70)
					require.NoError(t, err)
					require.Len(t, es, 1, "Range(70, 70) of 140 members")
				}
			})
		}
	})
}
