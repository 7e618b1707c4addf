package leaderboard

import (
	"context"
	"fmt"
	"math"
	"slices"
)

// MaxProposedShards is the most shards ProposeBounds plans for.
const MaxProposedShards = 256

// boundSamples is how many members ProposeBounds reads per shard it plans:
// each bound then lands within about 1/boundSamples of a shard's share of
// where an exact quantile would put it.
const boundSamples = 16

// ProposeBounds proposes bounds for WithShards that split the members of the
// current period of one window (the default, or In(w); At reads another period)
// into shards (2..MaxProposedShards) of about equal size: the plain scores at
// the quantiles 1/shards, 2/shards, ... of its members, read from a sample of
// 16 members per shard spread evenly over the board's order. Equal scores
// always share a shard (a bound belongs to the shard above it), so a score many
// members share, such as a starting score of 0, is never split; one held by at
// least half a shard's share of the sample (a spike) gets a shard of its own,
// bounded by its score and the float64 just above it (math.Nextafter: 5e-324
// above a spike at 0). Fewer than shards-1 bounds come back when the board has
// too few distinct scores to fill them; none for an empty board. A bound is a
// score that members hold, so with a tie-break it keeps the tie-break's
// precision. Apply them to a live board with WithShadowShards (README:
// "Changing bounds"), or to a board you rebuild from its store with WithShards
// and Rebuild. It reads the period's member count, then the sample: two round
// trips, three on a sharded board (which reads its shards' counts to find the
// sample's positions).
func (lb *Leaderboard) ProposeBounds(ctx context.Context, shards int, q ...Query) (_ []float64, err error) {
	defer endedWith(ctx, &err)
	if shards < 2 || shards > MaxProposedShards {
		return nil, fmt.Errorf("%w: shards = %d, want 2..%d", ErrInvalidArgument, shards, MaxProposedShards)
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if err := notStarted(ctx, "propose bounds"); err != nil {
		return nil, err
	}
	n, err := lb.be.count(ctx, tg)
	if err != nil {
		return nil, wrap("propose bounds", err)
	}
	if n == 0 {
		return []float64{}, nil
	}
	m := min(n, int64(boundSamples*shards))
	positions := make([]int64, m)
	for k := range positions {
		// The k-th of m members spread evenly from the lowest score up.
		up := int64(k) * n / m
		positions[k] = up
		if lb.high() {
			positions[k] = n - 1 - up
		}
	}
	es, err := lb.be.entriesAt(ctx, tg, positions)
	if err != nil {
		return nil, wrap("propose bounds", err)
	}
	scores := make([]float64, 0, len(es))
	for _, e := range es {
		scores = append(scores, e.Score)
	}
	// A member that left between the count and the sample can leave a gap
	// or shift a position: the sample stays a sample, sorted.
	slices.Sort(scores)
	return proposeBounds(scores, shards), nil
}

// proposeBounds picks at most shards-1 strictly ascending bounds from
// scores, a sorted sample spread evenly over the members. A spike (a run of
// equal scores at least half a shard's share of the sample long) gets a
// bound at its score and one just above it; the bounds left are shared
// out among the stretches between spikes by their sizes (shareOut), each
// cut at its own quantiles, so that the shards come out as even as the
// spikes allow. When the spikes alone need more bounds than
// there are, the largest spikes keep theirs. No bound sits at or below the
// lowest score: it would leave the shard below it empty.
func proposeBounds(scores []float64, shards int) []float64 {
	m := len(scores)
	if m == 0 {
		return []float64{}
	}
	share := float64(m) / float64(shards)
	var spikes, stretches [][2]int // [lo, hi) runs of the sample
	lo := 0                        // start of the stretch being walked
	for i := 0; i < m; {
		j := i + 1
		for j < m && scores[j] == scores[i] {
			j++
		}
		if j-i >= 2 && float64(j-i) >= share/2 {
			if lo < i {
				stretches = append(stretches, [2]int{lo, i})
			}
			spikes = append(spikes, [2]int{i, j})
			lo = j
		}
		i = j
	}
	if lo < m {
		stretches = append(stretches, [2]int{lo, m})
	}
	out := append([]float64{}, spikeBounds(scores, spikes, shards-1)...)
	for k, c := range shareOut(stretches, shards-1-len(out)) {
		r := stretches[k]
		for j := 1; j <= c; j++ {
			out = append(out, scores[r[0]+j*(r[1]-r[0])/(c+1)])
		}
	}
	slices.Sort(out)
	return nonEmpty(scores, slices.Compact(out))
}

// nonEmpty drops the bounds at or below the lowest score, and of two
// bounds with no score of the sample between them (a spike's end right
// before the next spike's start) keeps the second, a score members hold;
// a bound of -0 comes out as 0, the same bound.
func nonEmpty(scores, bounds []float64) []float64 {
	kept := bounds[:0]
	for _, b := range bounds {
		if b <= scores[0] {
			continue
		}
		if n := len(kept); n > 0 {
			if i, _ := slices.BinarySearch(scores, kept[n-1]); i == len(scores) || scores[i] >= b {
				kept[n-1] = b
				continue
			}
		}
		kept = append(kept, b)
	}
	for i, b := range kept {
		if b == 0 {
			kept[i] = 0 // -0 (a score of -0; Nextafter above -5e-324) reads as 0
		}
	}
	return kept
}

// spikeBounds are the bounds around spikes, at most most of them, the
// largest spikes' first: a spike's score, and just above it, or the next
// spike's score where one follows right after it (one bound between two
// spikes, not two).
func spikeBounds(scores []float64, spikes [][2]int, most int) []float64 {
	starts := map[int]bool{}
	for _, sp := range spikes {
		starts[sp[0]] = true
	}
	bySize := slices.Clone(spikes)
	slices.SortStableFunc(bySize, func(a, b [2]int) int { return (b[1] - b[0]) - (a[1] - a[0]) })
	var out []float64
	for _, sp := range bySize {
		var bs []float64
		if sp[0] > 0 && !slices.Contains(out, scores[sp[0]]) {
			bs = append(bs, scores[sp[0]])
		}
		switch {
		case sp[1] == len(scores):
		case starts[sp[1]]:
			if !slices.Contains(out, scores[sp[1]]) && !slices.Contains(bs, scores[sp[1]]) {
				bs = append(bs, scores[sp[1]])
			}
		default:
			bs = append(bs, math.Nextafter(scores[sp[0]], math.Inf(1)))
		}
		if len(out)+len(bs) > most {
			continue
		}
		out = append(out, bs...)
	}
	return out
}

// shareOut gives budget cuts to stretches, one at a time to the stretch
// whose shards are the largest: a stretch of length L holding c cuts makes
// c+1 shards of about L/(c+1). A stretch takes no more cuts than it has
// members after its first.
func shareOut(stretches [][2]int, budget int) []int {
	cuts := make([]int, len(stretches))
	for range budget {
		best, bestSize := -1, -1.0
		for k, r := range stretches {
			size := float64(r[1]-r[0]) / float64(cuts[k]+1)
			if cuts[k]+1 < r[1]-r[0] && size > bestSize {
				best, bestSize = k, size
			}
		}
		if best < 0 {
			break
		}
		cuts[best]++
	}
	return cuts
}
