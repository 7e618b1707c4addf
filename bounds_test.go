package leaderboard

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProposeBoundsPure(t *testing.T) {
	seq := func(lo, n int) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(lo + i)
		}
		return out
	}
	for _, c := range []struct {
		name   string
		scores []float64
		shards int
		want   []float64
	}{
		{"uniform", seq(0, 100), 4, []float64{25, 50, 75}},
		{"a spike at the bottom keeps a shard of its own", append(make([]float64, 40), seq(1, 60)...), 4, []float64{5e-324, 21, 41}},
		{"a spike in the middle", append(append(seq(0, 30), slices.Repeat([]float64{50}, 40)...), seq(100, 30)...), 4, []float64{15, 50, math.Nextafter(50, 101)}},
		{"one score", slices.Repeat([]float64{7}, 64), 4, []float64{}},
		{"fewer distinct scores than shards", []float64{1, 1, 2, 2, 3, 3}, 8, []float64{2, 3}},
		{"spikes side by side, one bound", []float64{1, 1, 1, 2, 2, 2, 5, 6}, 2, []float64{2}},
		{"spikes side by side", []float64{1, 1, 1, 2, 2, 2, 5, 6}, 3, []float64{2, math.Nextafter(2, 3)}},
		{"empty", nil, 4, []float64{}},
		{"a spike at the least negative number", append(slices.Repeat([]float64{-5e-324}, 40), seq(1, 60)...), 4, []float64{0, 21, 41}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := proposeBounds(c.scores, c.shards)
			require.Equal(t, c.want, got)
			for _, b := range got {
				require.False(t, math.Signbit(b) && b == 0, "a bound of -0 in %v", got) // Equal takes -0 for 0
			}
		})
	}
}

// TestProposeBoundsProperties: on random samples with spikes, the bounds are
// strictly ascending scores of the sample above its lowest, at most
// shards-1; no spike is split; and without spikes every shard holds its
// share of the sample, give or take one.
func TestProposeBoundsProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 2000 {
		shards := 2 + rng.IntN(20)
		m := rng.IntN(boundSamples*shards + 1)
		var scores []float64
		spikes := rng.IntN(3)
		for len(scores) < m {
			if spikes > 0 && rng.IntN(10) == 0 {
				spikes--
				v := float64(rng.IntN(1000))
				scores = append(scores, slices.Repeat([]float64{v}, 1+rng.IntN(m/2+1))...)
				continue
			}
			scores = append(scores, float64(rng.IntN(1000))+rng.Float64())
		}
		scores = scores[:m]
		slices.Sort(scores)
		bs := proposeBounds(scores, shards)
		require.LessOrEqual(t, len(bs), shards-1)
		for i, b := range bs {
			require.True(t, slices.Contains(scores, b) || slices.Contains(scores, math.Nextafter(b, math.Inf(-1))),
				"%v is neither a score of the sample nor just above one", b)
			require.Greater(t, b, scores[0])
			if i > 0 {
				require.Less(t, bs[i-1], b)
			}
		}
		// Shard sizes under these bounds.
		sizes := make([]int, len(bs)+1)
		for _, s := range scores {
			i, _ := slices.BinarySearch(bs, s)
			if i < len(bs) && bs[i] == s {
				i++ // a bound belongs to the shard above it
			}
			sizes[i]++
		}
		distinct := len(slices.Compact(slices.Clone(scores)))
		if distinct == m && m >= shards {
			share := float64(m) / float64(shards)
			require.Len(t, bs, shards-1, "%v", scores)
			for _, n := range sizes {
				require.InDelta(t, share, float64(n), 1.5, "sizes %v of %d in %d shards", sizes, m, shards)
			}
		}
	}
}
