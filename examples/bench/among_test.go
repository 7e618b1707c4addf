package main

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAmongByHand checks that the "rueidis" Among returns what the SDK's
// Among returns: on boards of many ties (scores in [0, 20) over 300
// members), lowest and highest first, ordinal and competition ranks, the
// same members in the same order with the same ranks, every friend list of the run (50
// members drawn from 300: repeats in most), one with a member twice and
// one unranked, on miniredis, a real Redis and the Cluster.
func TestAmongByHand(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		for _, args := range [][]string{
			{"-order", "lowest"},
			{"-order", "highest"},
			{"-order", "lowest", "-ranking", "competition"},
		} {
			t.Run(backend+" "+strings.Join(args, " "), func(t *testing.T) {
				b := tieBench(t, backend, args...)
				ctx := context.Background()
				lists := append(b.friends[:20:20], []string{member(3), "nobody", member(3), member(7)})
				for i, ms := range lists {
					want, err := b.board.Among(ctx, ms)
					require.NoError(t, err)
					got, err := b.amongByHand(ctx, b.raw[0].key, ms)
					require.NoError(t, err)
					require.Len(t, got, len(want), "list %d", i)
					for j, e := range want {
						require.Equal(t, e, got[j], "list %d: entry %d", i, j)
					}
				}
			})
		}
	}
}

// tieBench is a loaded bench of 300 members with scores in [0, 20) on
// backend, with args added to its flags; its keys go when the test ends.
func tieBench(t *testing.T, backend string, args ...string) *bench {
	t.Helper()
	cfg, err := parseFlags(append([]string{"-members", "300", "-score-max", "20"}, args...), noEnv, io.Discard)
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
	t.Cleanup(c.close)
	b, err := newBench(cfg, c)
	require.NoError(t, err)
	t.Cleanup(func() { b.deleteKeys(io.Discard) })
	_, err = b.load(context.Background(), console{w: io.Discard})
	require.NoError(t, err)
	return b
}
