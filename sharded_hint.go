package leaderboard

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// The reads whose entries hang on every shard's count (a Page or Range
// past the best shard, a Cutoff) take the counts first on a Cluster, then
// the entries; with IncludeData the entries' data would be a third round
// trip. So with IncludeData they read, beside the counts, the entries
// where the counts some read last saw (seenCards) place them, with
// hintMargin positions more on either side; the counts read with them
// decide what the slice is, cut from what was read when it covers the
// slice (cutSlice), and the data follow in the second round trip. When the
// counts moved by more than the margin since, or there were none yet, the
// read goes the two-step way: three round trips then.

// hintMargin is how many positions a hinted read reads beyond its slice on
// either side: how far every shard's count may move between two reads.
const hintMargin = 32

// seen records cards as the counts a read of tg's window last saw.
func (lb *shardedBackend) seen(tg target, cards []int64) {
	if p := lb.seenCards[tg.window.Name()]; p != nil {
		p.Store(&cards)
	}
}

// slice reads the slice place(total) gives (start, count: 0-based
// positions) and the total, with IncludeData: on a Cluster in two round
// trips where the counts last seen place it well, else in three.
func (lb *shardedBackend) slice(ctx context.Context, tg target, place func(total int64) (int64, int64)) ([]Entry, int64, error) {
	es, cards, err := lb.hintedSlice(ctx, tg, place)
	if err != nil {
		return nil, 0, err
	}
	total := sum(cards)
	if es == nil {
		if es, total, err = lb.countedRange(ctx, tg, cards, place); err != nil {
			return nil, 0, err
		}
	}
	return es, total, lb.fillData(ctx, es)
}

// hintedSlice reads the slice place(total) gives with the counts, in one
// round trip. es is nil when the counts read show that what it read misses
// a position of the slice (or a member twice), and cards nil too when no
// counts were seen before.
func (lb *shardedBackend) hintedSlice(ctx context.Context, tg target, place func(total int64) (int64, int64)) (es []Entry, cards []int64, err error) {
	p := lb.seenCards[tg.window.Name()]
	if p == nil || p.Load() == nil {
		return nil, nil, nil
	}
	sk := lb.periodShardKeys(tg)
	hint := *p.Load()
	start, count := place(sum(hint))
	from, to := start-hintMargin, start+count+hintMargin
	n := len(lb.bestFirst)
	calls := make([]scripts.Call, 0, 2*n)
	for i := 0; i < n; i++ {
		calls = append(calls, lb.zcardCall(sk[i]))
	}
	var spans []shardSpan
	offset := int64(0)
	for _, i := range lb.bestFirst {
		lo, hi := max(from-offset, 0), to-offset
		if hi > 0 && lo < hint[i]+hintMargin {
			spans = append(spans, shardSpan{i, lo, hi})
			calls = append(calls, scripts.ShardRangeCall(lb.readHeader(), sk[i], lo, hi-lo))
		}
		offset += hint[i]
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	st := shardStanding{}
	if st.cards, err = int64s(res[:n]); err != nil {
		return nil, nil, err
	}
	lb.seen(tg, st.cards)
	st.total = sum(st.cards)
	stretches := make([][]shardStretch, n)
	for k, sp := range spans {
		got, betterIn, err := lb.shardRangeReply(res[n+k])
		if err != nil {
			return nil, nil, err
		}
		stretches[sp.shard] = []shardStretch{{lo: sp.lo, betterIn: betterIn, es: got}}
	}
	start, count = place(st.total)
	es, err = lb.cutSlice(st, stretches, start, min(count, max(st.total-start, 0)))
	if errors.Is(err, errStretch) {
		return nil, st.cards, nil
	}
	return es, st.cards, err
}

// newSeenCards is one empty hint per window.
func newSeenCards(lb *Leaderboard) map[string]*atomic.Pointer[[]int64] {
	out := make(map[string]*atomic.Pointer[[]int64], len(lb.windows))
	for _, w := range lb.windows {
		out[w.Name()] = &atomic.Pointer[[]int64]{}
	}
	return out
}
