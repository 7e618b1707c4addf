package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// errStretch is what aroundStretches returns when the stretches it read
// miss a position of the slice: a member found in two shards (a move in
// flight, a crashed write) read its window instead of its edges. Around
// then reads the slice the two-step way.
var errStretch = errors.New("a position of the slice is in no stretch read")

// shardStretch is a run of one shard's entries, read by shard_read.lua's
// 'around'.
type shardStretch struct {
	lo       int64   // position in the shard of the first entry
	betterIn int64   // members of the shard strictly better than the first entry
	es       []Entry // plain scores, no ranks yet
}

// aroundStretches is Around on a Cluster in one round trip, for an Around
// that reads its members' data in a second (IncludeData): beside the
// member's partition (which copy counts: see locateCluster), every shard
// answers shard_read.lua's 'around', its count, the member's place, and
// every stretch of it the slice may need: the member's neighbours within
// 2*radius in its own shard, the best and worst 2*radius+1 of the others
// (the slice takes from the shards beside the member's only their edges).
// The slice is then cut from the stretches by the shards' counts.
func (lb *shardedBackend) aroundStretches(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	n, count := len(lb.bounds)+1, int64(2*radius+1)
	calls := []scripts.Call{lb.hgetCall(lb.partKey(member, tg), member)}
	for i := 0; i < n; i++ {
		calls = append(calls, scripts.ShardAroundCall(lb.readHeader(), lb.shardKey(i, tg), member, int(count)))
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	truth, hasTruth, err := optResult(res[0], optString)
	if err != nil {
		return nil, err
	}
	right := -1
	if hasTruth {
		right = lb.shardOfString(truth)
	}
	st := shardStanding{cards: make([]int64, n), shard: -1}
	stretches := make([][]shardStretch, n)
	var in shardProbe
	for _, i := range lb.bestFirst {
		v, err := res[1+i].ToArray()
		if err != nil {
			return nil, err
		}
		if len(v) < 5 {
			return nil, fmt.Errorf("shard around returned %d values", len(v))
		}
		p, err := probeScript(v[:5])
		if err != nil {
			return nil, err
		}
		st.cards[i] = p.card
		if p.found && (!st.found || i == right) {
			st.found, st.shard, st.stored, in = true, i, p.stored, p
		}
		if stretches[i], err = lb.stretchesOf(v[5:]); err != nil {
			return nil, err
		}
	}
	switch {
	case !st.found && hasTruth:
		return nil, errStretch // crossing a bound: see locate
	case !st.found:
		return nil, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	st.total = sum(st.cards)
	st.pos, _ = lb.globalRank(st.cards, st.shard, in.posIn, 0)
	return lb.cutSlice(st, stretches, max(0, min(st.pos-int64(radius), st.total-count)), count)
}

// cutSlice takes the global positions [start, start+count) from the
// shards' stretches, ranked.
func (lb *shardedBackend) cutSlice(st shardStanding, stretches [][]shardStretch, start, count int64) ([]Entry, error) {
	es := make([]Entry, 0, count)
	var firstRank int64
	offset := int64(0)
	for _, i := range lb.bestFirst {
		lo, hi := max(start-offset, 0), min(start+count-offset, st.cards[i])
		for q := lo; q < hi; q++ {
			e, betterIn, ok := pickStretch(stretches[i], q)
			if !ok {
				return nil, errStretch
			}
			if len(es) == 0 {
				firstRank, _ = lb.globalRank(st.cards, i, betterIn+1, 0)
			}
			es = append(es, e)
		}
		offset += st.cards[i]
	}
	seen := make(map[string]bool, len(es))
	for _, e := range es {
		if seen[e.Member] {
			return nil, errStretch // a member twice: see errStretch
		}
		seen[e.Member] = true
	}
	if lb.ranking == Ordinal {
		firstRank = 0
	}
	lb.rankEntries(es, start, firstRank)
	return es, nil
}

// pickStretch finds position q of a shard in its stretches: the entry, and
// the members of the shard strictly better than it (by plain score: ties
// share the count of the first of them).
func pickStretch(ss []shardStretch, q int64) (Entry, int64, bool) {
	for _, s := range ss {
		j := q - s.lo
		if j < 0 || j >= int64(len(s.es)) {
			continue
		}
		return s.es[j], stretchBetter(s, int(j)), true
	}
	return Entry{}, 0, false
}

// stretchesOf decodes the stretches after a shard's 'around' standing:
// each {first position, strictly better, n, n member, value pairs}.
func (lb *shardedBackend) stretchesOf(v []rueidis.RedisMessage) ([]shardStretch, error) {
	var out []shardStretch
	for len(v) > 0 {
		if len(v) < 3 {
			return nil, fmt.Errorf("shard around: a stretch of %d values", len(v))
		}
		var head [3]int64
		for k := range head {
			var err error
			if head[k], err = v[k].AsInt64(); err != nil {
				return nil, err
			}
		}
		if int64(len(v)) < 3+2*head[2] {
			return nil, fmt.Errorf("shard around: a stretch of %d entries in %d values", head[2], len(v))
		}
		es, err := lb.entries(v[3 : 3+2*head[2]])
		if err != nil {
			return nil, err
		}
		out = append(out, shardStretch{lo: head[0], betterIn: head[1], es: es})
		v = v[3+2*head[2]:]
	}
	return out, nil
}

// aroundNear is Around on a Cluster under Competition ranks without data,
// in two round trips: every shard's count beside the member's partition,
// whose value names its shard (cardsAndPart); then that shard's 'around'
// by shard_read.lua (the member's place and its neighbours within radius,
// or 2*radius near an end of the board) beside the stretch of each other
// shard the slice may reach, by those counts (edgeCalls): one script, and
// one a better shard within reach (mostly none or one), where
// locateCluster would run one on every shard, each reading the member's
// score before it can count the members strictly better.
// errStretch when the member's shard does not hold it at its partition's
// value, or the counts moved past a stretch read: Around then reads the
// slice the two-step way.
func (lb *shardedBackend) aroundNear(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	count := int64(2*radius + 1)
	cards, v, _, err := lb.cardsAndPart(ctx, tg, member)
	if err != nil {
		return nil, err
	}
	if v == "" {
		return nil, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	want, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return nil, err
	}
	s := lb.shardOfString(v)
	// The slice is the radius entries either side of the member unless it
	// lies within radius of an end of the board, where it reaches up to
	// 2*radius one way: ask the shards for no more than it can take.
	reach := count - 1
	if better, worse := lb.globalRank(cards, s, 0, 0); better >= int64(radius) && worse >= int64(radius) {
		reach = int64(radius)
	}
	edges, calls := lb.edgeCalls(tg, cards, s, reach)
	calls = append(calls, scripts.ShardAroundCall(lb.readHeader(), lb.periodShardKeys(tg)[s], member, int(reach+1)))
	res := scripts.ExecMulti(ctx, lb.client, calls)
	stretches := make([][]shardStretch, len(cards))
	for k, e := range edges {
		if stretches[e.shard], err = lb.edgeStretch(e, res[k]); err != nil {
			return nil, err
		}
	}
	own, err := res[len(edges)].ToArray()
	if err != nil {
		return nil, err
	}
	if len(own) < 5 {
		return nil, fmt.Errorf("shard around returned %d values", len(own))
	}
	p, err := probeScript(own[:5])
	if err != nil || !p.found || p.stored != want {
		return nil, errors.Join(errStretch, err)
	}
	if stretches[s], err = lb.stretchesOf(own[5:]); err != nil {
		return nil, err
	}
	cards[s] = p.card
	st := shardStanding{found: true, stored: p.stored, shard: s, cards: cards, total: sum(cards)}
	st.pos, _ = lb.globalRank(cards, s, p.posIn, 0)
	return lb.cutSlice(st, stretches, max(0, min(st.pos-int64(radius), st.total-count)), count)
}

// edgeRead is one stretch of a shard beside the member's that an Around
// reads: positions [lo, lo+n).
type edgeRead struct {
	shard int
	lo, n int64
	tail  bool // a better shard's worst entries, read by script
}

// edgeCalls reads, by the shards' counts, the reach positions either side
// of shard s the slice may take from other shards: the worst entries of
// the better shards nearest s by shard_read.lua's 'range' (a stretch's
// first entry may be the slice's, whose rank needs the count of its ties
// in its shard, and only a script can count the ties of a score it has
// not read), and the best entries of the worse shards nearest s by a
// ZRANGE (a shard's best entry has no member of its shard better).
func (lb *shardedBackend) edgeCalls(tg target, cards []int64, s int, reach int64) ([]edgeRead, []scripts.Call) {
	at := slices.Index(lb.bestFirst, s)
	var edges []edgeRead
	for left, k := reach, at-1; left > 0 && k >= 0; k-- {
		i := lb.bestFirst[k]
		if n := min(cards[i], left); n > 0 {
			edges, left = append(edges, edgeRead{shard: i, lo: cards[i] - n, n: n, tail: true}), left-n
		}
	}
	for left, k := reach, at+1; left > 0 && k < len(lb.bestFirst); k++ {
		i := lb.bestFirst[k]
		if n := min(cards[i], left); n > 0 {
			edges, left = append(edges, edgeRead{shard: i, n: n}), left-n
		}
	}
	sk := lb.periodShardKeys(tg)
	calls := make([]scripts.Call, len(edges))
	for k, e := range edges {
		key := sk[e.shard]
		if e.tail {
			calls[k] = scripts.ShardRangeCall(lb.readHeader(), key, e.lo, e.n)
		} else {
			calls[k] = scripts.Call{Cmd: func() rueidis.Completed { return lb.rangeCmd(key, 0, e.n-1) }}
		}
	}
	return edges, calls
}

// edgeStretch decodes an edge read's reply as its shard's one stretch.
func (lb *shardedBackend) edgeStretch(e edgeRead, r rueidis.RedisResult) ([]shardStretch, error) {
	if !e.tail {
		es, err := lb.zEntries(&r)
		return []shardStretch{{es: es}}, err
	}
	es, betterIn, err := lb.shardRangeReply(r)
	return []shardStretch{{lo: e.lo, betterIn: betterIn, es: es}}, err
}
