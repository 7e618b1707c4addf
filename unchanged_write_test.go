package leaderboard_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestUnchangedWriteWritesNothing: a write that leaves every stored score
// as it is leaves every key of the board as it is, whatever spelling the
// scripts and the Go side give one number. An Accumulate total is stored
// as a script prints it ("1000002", "0.30000000000000004"), a Set sends
// the Go side's shortest form ("1.000002e+06", "0.3" for another total):
// compared as text, the scripts of a sharded board took a Set of the
// total a member holds for a change and wrote its partition, its shards
// and (on a Cluster) a new version.
func TestUnchangedWriteWritesNothing(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for _, sharded := range []bool{false, true} {
			t.Run(map[bool]string{false: "plain", true: "sharded"}[sharded], func(t *testing.T) {
				ctx := context.Background()
				opts := []lb.Option{lb.WithPolicy(lb.Accumulate)}
				if sharded {
					opts = append(opts, lb.WithShards(1000, 1e6))
				}
				board, name := newBoard(t, b, opts...)
				totals := map[string][]float64{
					"a": {1e6, 2},         // 1000002
					"c": {0.25, 0.05},     // a decimal total
					"d": {0.1, 0.2},       // 0.30000000000000004
					"e": {123456.5, 0.25}, // a fraction under a shard bound
				}
				for m, adds := range totals {
					for _, s := range adds {
						_, err := board.Submit(ctx, m, s)
						require.NoError(t, err)
					}
				}
				before := b.Snapshot(t, name)
				for m, adds := range totals {
					require.NoError(t, board.Set(ctx, m, adds[0]+adds[1]), m)
				}
				require.NoError(t, board.SubmitMany(ctx, map[string]float64{"a": 0, "c": 0}))
				require.Equal(t, before, b.Snapshot(t, name), "writes that change no score rewrote the board")
			})
		}
	})
}
