package main

import (
	"context"
	"io"
	"testing"

	"github.com/redis/rueidis"
	"github.com/stretchr/testify/require"

	"github.com/skiprank/leaderboard"
)

// TestCompetitionByHand checks that the "rueidis competition" versions
// read the ranks the SDK returns: on a board of many ties (scores in
// [0, 20) over 300 members), every slice read by hand, from the plain set
// and from the board's own shards, holds the entries and ranks of the
// SDK's Range over the same positions, on miniredis, a real Redis and the
// Cluster.
func TestCompetitionByHand(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		t.Run(backend, func(t *testing.T) {
			cfg, err := parseFlags([]string{"-members", "300", "-score-max", "20", "-shards", "4", "-ranking", "competition"}, noEnv, io.Discard)
			require.NoError(t, err)
			cfg.redisURL = backendURL(t, backend)
			cfg.name = randomName()
			var c *conn
			if cfg.redisURL == "" {
				c, err = connectMini(1, false)
			} else {
				c, err = connect(cfg.redisURL, 1, false)
			}
			require.NoError(t, err)
			defer c.close()
			b, err := newBench(cfg, c)
			require.NoError(t, err)
			defer b.deleteKeys(io.Discard)
			ctx := context.Background()
			_, err = b.load(ctx, console{w: io.Discard})
			require.NoError(t, err)
			for _, start := range []int64{0, 1, 7, 100, 150, 289} {
				want, err := b.board.Range(ctx, start+1, start+10)
				require.NoError(t, err)
				zs, ranks, _, err := b.competitionSlice(ctx, b.raw[0].key, start, start+9)
				require.NoError(t, err)
				requireSameSlice(t, want, zs, ranks, "plain set from %d", start)
				zs, ranks, _, err = b.shardsCompetitionSlice(ctx, func(int64) int64 { return start }, 10)
				require.NoError(t, err)
				requireSameSlice(t, want, zs, ranks, "shards from %d", start)
			}
		})
	}
}

// requireSameSlice checks a slice read by hand against the SDK's entries.
func requireSameSlice(t *testing.T, want []leaderboard.Entry, zs []rueidis.ZScore, ranks []int64, what string, args ...any) {
	t.Helper()
	require.Len(t, zs, len(want), append([]any{what}, args...)...)
	for i, e := range want {
		require.Equal(t, e.Member, zs[i].Member, append([]any{what + ": entry %d"}, append(args, i)...)...)
		require.Equal(t, e.Score, zs[i].Score, append([]any{what + ": entry %d"}, append(args, i)...)...)
		require.Equal(t, e.Rank, ranks[i], append([]any{what + ": rank of entry %d"}, append(args, i)...)...)
	}
}
