package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAroundScoreByHand: on an unsharded board AroundScore under Ordinal
// ranks is one MULTI, so its targets hold it to a "rueidis MULTI"
// version, which returns the SDK's place and entries with their ranks,
// for scores at both ends, inside runs of ties and between them
// (scores in [0, 20) over 300 members), lowest and highest first, on
// miniredis, a real Redis and the Cluster.
func TestAroundScoreByHand(t *testing.T) {
	for _, backend := range []string{"miniredis", "redis", "cluster"} {
		for _, order := range []string{"lowest", "highest"} {
			t.Run(backend+" "+order, func(t *testing.T) {
				b := tieBench(t, backend, "-order", order)
				var names []string
				for _, im := range b.operation("around-score").impls {
					names = append(names, im.name)
				}
				require.Contains(t, names, "rueidis MULTI")
				ctx := context.Background()
				for _, score := range []float64{-1, 0, 0.5, 1, 7, 7.5, 13, 19, 19.5, 20, 30} {
					place, want, err := b.board.AroundScore(ctx, score, aroundScoreRadius)
					require.NoError(t, err)
					better, got, err := b.aroundScoreMulti(ctx, b.raw[0].key, score)
					require.NoError(t, err)
					require.Equal(t, place, better+1, "score %v", score)
					require.Equal(t, want, got, "score %v", score)
				}
			})
		}
	}
}
