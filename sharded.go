package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync/atomic"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// shardOf returns the shard of a stored value: the number of bounds at or
// below its plain score.
func (lb *shardedBackend) shardOf(v float64) int {
	p := lb.plain(v)
	return sort.Search(len(lb.bounds), func(i int) bool { return lb.bounds[i] > p })
}

func (lb *shardedBackend) shardOfString(v string) int {
	f, _ := strconv.ParseFloat(v, 64)
	return lb.shardOf(f)
}

// better reports whether shard i ranks before shard j.
func (lb *shardedBackend) betterShard(i, j int) bool {
	if lb.high() {
		return i > j
	}
	return i < j
}

// bestFirstOf lists n shards in the board's order: the highest first on a
// HighestFirst board.
func bestFirstOf(n int, high bool) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
		if high {
			out[i] = n - 1 - i
		}
	}
	return out
}

func (lb *shardedBackend) shardKey(i int, tg target) string {
	return lb.periodShardKeys(tg)[i]
}

// periodShardKeys are tg's shard keys in this layout, by shard (read
// only): those resolve built with the period (target.shards), as every
// target comes from resolve.
func (lb *shardedBackend) periodShardKeys(tg target) []string {
	if lb.isShadow {
		return tg.shadowShards
	}
	return tg.shards
}

// buildShardKeys are this layout's shard keys of a window's period.
func (lb *shardedBackend) buildShardKeys(window, period string) []string {
	ks := make([]string, len(lb.shards))
	for i, s := range lb.shards {
		ks[i] = s.Period(window, period)
	}
	return ks
}

func (lb *shardedBackend) layoutKeys(window, period string) (shards, shadow []string) {
	if lb.shadow != nil {
		shadow = lb.shadow.buildShardKeys(window, period)
	}
	return lb.buildShardKeys(window, period), shadow
}

// partKey is the hash of member's partition in tg.
func (lb *shardedBackend) partKey(member string, tg target) string {
	return lb.parts.Of(keys.PartitionOf(member)).Period(tg.window.Name(), tg.period.ID)
}

// shardedBackend is a board split by score into shards (WithShards), each
// a sorted set with a hash tag of its own, beside partitions that hold
// each member's stored value, chosen by a hash of the member, which
// serialize the member's writes. cluster is whether the keys may live on
// several nodes: a write then takes two steps (partition, shards), else
// one script reaches every key.
type shardedBackend struct {
	*Leaderboard
	// bounds are this layout's bounds: the board's (WithShards), or its
	// shadow's (WithShadowShards). They hide the Leaderboard's.
	bounds []float64
	// shadow is the layout every write also keeps (WithShadowShards) and
	// no read uses; nil when there is none (always nil in a shadow).
	shadow  *shardedBackend
	cluster bool
	// shards are the shards' key bases, spread evenly over the Cluster's
	// slots (keys.Board.Shards).
	shards []keys.Board
	// parts are the partitions' key bases, 32 a hash tag, one tag every
	// 128 slots (keys.Board.Partitions).
	parts keys.PartitionSet
	// bestFirst lists the shards in the board's order, best first.
	bestFirst []int
	// scale and boundArgs are the tie-break's 10^decimals and the bounds
	// as the one-node scripts take them (scriptBounds).
	scale     string
	boundArgs []string
	// bestHolds is, per window name, how many members the best shard of
	// its period held when a Top or Page last looked (at least that many
	// after one served from it alone): whether they may read it alone. It
	// decides round trips, never answers.
	bestHolds map[string]*atomic.Int64
	// seenCards is, per window name, every shard's count when a read of
	// its period last counted them: where a Cluster read with IncludeData
	// looks for its entries beside the counts (see hintedSlice). Like
	// bestHolds it decides round trips, never answers.
	seenCards map[string]*atomic.Pointer[[]int64]
	// isShadow is whether this layout is a board's shadow
	// (WithShadowShards), whose shard keys a target holds in shadowShards.
	isShadow bool
}

// globalRank turns a rank inside shard s into a rank on the board: every
// member of a better shard has a strictly better plain score. worseIn is the
// members strictly worse inside s (Competition), completed with the worse
// shards.
func (lb *shardedBackend) globalRank(cards []int64, s int, inShard, worseIn int64) (rank, worse int64) {
	rank, worse = inShard, worseIn
	for i, c := range cards {
		switch {
		case i == s:
		case lb.betterShard(i, s):
			rank += c
		default:
			worse += c
		}
	}
	return rank, worse
}

// shardRange reads count entries from the global position start, given the
// shards' member counts, best first (one copy of a member found in two
// shards: see readSpans). It also returns the competition rank of the
// first entry (0 under Ordinal ranks, which do not need it), and whether
// a shard held fewer entries than its count promised: counted in an
// earlier round trip, it shrank since (members left it across a bound),
// so the positions read are not the ones asked (see shiftTries).
func (lb *shardedBackend) shardRange(ctx context.Context, tg target, cards []int64, start, count int64) (es []Entry, first int64, shifted bool, err error) {
	var spans []shardSpan
	offset := int64(0)
	for _, i := range lb.bestFirst {
		lo, hi := max(start-offset, 0), min(start+count-offset, cards[i])
		if lo < hi {
			spans = append(spans, shardSpan{i, lo, hi})
		}
		offset += cards[i]
	}
	comp := lb.ranking == Competition
	es, held, betterIn, err := lb.readSpans(ctx, tg, spans, comp)
	if err != nil {
		return nil, 0, false, err
	}
	for k, sp := range spans {
		shifted = shifted || int64(held[k]) < sp.hi-sp.lo
	}
	if !comp || len(spans) == 0 {
		return es, 0, shifted, nil
	}
	first, _ = lb.globalRank(cards, spans[0].shard, betterIn+1, 0)
	return es, first, shifted, nil
}

// shiftTries is how many times a read by position in two round trips (on
// a Cluster Cutoff and Around, on any sharded board Page and Range past
// the best shard) counts the shards and reads
// its positions when what it read shows that members crossed a bound
// between its two round trips (a shard held fewer than counted, or
// Around's slice lacks its member or entries), and a Cluster's locate
// when the member was crossing a bound: the last try's answer stands.
// Each try reads the counts afresh, so a board that shrank (a Remove)
// settles at the next; only a storm of moves across one bound, under
// load, takes more than one.
const shiftTries = 5

// shardSpan is the positions [lo, hi) of one shard.
type shardSpan struct {
	shard  int
	lo, hi int64
}

// readSpans reads spans, in their order, in one round trip: one ZRANGE
// each, but with better the first through shard_read.lua, which also counts
// the members of its shard strictly better than its first entry (betterIn,
// for Competition ranks). It returns the entries (see spanEntries) and how
// many each span held.
func (lb *shardedBackend) readSpans(ctx context.Context, tg target, spans []shardSpan, better bool) (all []Entry, held []int, betterIn int64, err error) {
	sk := lb.periodShardKeys(tg)
	held = make([]int, len(spans))
	if len(spans) == 0 {
		return []Entry{}, held, 0, nil
	}
	calls := make([]scripts.Call, len(spans))
	shards := make([]int, len(spans))
	for k, sp := range spans {
		key := sk[sp.shard]
		shards[k] = sp.shard
		if k == 0 && better {
			calls[k] = scripts.ShardRangeCall(lb.readHeader(), key, sp.lo, sp.hi-sp.lo)
			continue
		}
		calls[k] = scripts.Call{Cmd: func() rueidis.Completed { return lb.rangeCmd(key, sp.lo, sp.hi-1) }}
	}
	lists := make([][]Entry, len(spans))
	for k, r := range scripts.ExecMulti(ctx, lb.client, calls) {
		if k == 0 && better {
			lists[k], betterIn, err = lb.shardRangeReply(r)
		} else {
			lists[k], err = lb.zEntries(&r)
		}
		if err != nil {
			return nil, nil, 0, err
		}
		held[k] = len(lists[k])
	}
	all, err = lb.spanEntries(ctx, tg, lists, shards)
	return all, held, betterIn, err
}

// spanEntries joins the entries read from shards (lists[k] from shard
// shards[k], in the board's order) into one list. A member found in two
// shards (a move in flight, or a write that crashed between its steps)
// keeps the copy in the shard of its partition's value, read in one more
// round trip when it happens (keepCurrent).
func (lb *shardedBackend) spanEntries(ctx context.Context, tg target, lists [][]Entry, shards []int) ([]Entry, error) {
	if len(lists) == 1 { // one shard: no member twice
		if lists[0] == nil {
			return []Entry{}, nil
		}
		return lists[0], nil
	}
	all := []Entry{}
	var from []int // shard of each entry
	seen := map[string]bool{}
	var twice []string
	for k, es := range lists {
		for _, e := range es {
			if seen[e.Member] {
				twice = append(twice, e.Member)
			}
			seen[e.Member] = true
			all, from = append(all, e), append(from, shards[k])
		}
	}
	if len(twice) > 0 {
		return lb.keepCurrent(ctx, tg, all, from, twice)
	}
	return all, nil
}

// shardRangeReply decodes shard_read.lua's 'range' reply: the members strictly
// better than the first entry, and the entries.
func (lb *Leaderboard) shardRangeReply(r rueidis.RedisResult) ([]Entry, int64, error) {
	m, err := r.ToMessage()
	if err != nil {
		return nil, 0, err
	}
	es, _, betterIn, err := lb.shardRangeMessage(&m)
	return es, betterIn, err
}

// shardRangeMessage is shardRangeReply of a reply inside a transaction's,
// with the members of the set read as well.
func (lb *Leaderboard) shardRangeMessage(m *rueidis.RedisMessage) (es []Entry, card, betterIn int64, err error) {
	v, err := m.ToArray()
	if err != nil {
		return nil, 0, 0, err
	}
	if len(v) < 2 {
		return nil, 0, 0, fmt.Errorf("shard read returned %d values", len(v))
	}
	if card, err = v[0].AsInt64(); err != nil {
		return nil, 0, 0, err
	}
	if betterIn, err = v[1].AsInt64(); err != nil {
		return nil, 0, 0, err
	}
	es, err = lb.entries(v[2:])
	return es, card, betterIn, err
}

// keepCurrent drops, of each member in twice, the copies outside the shard
// of its partition's value (all but the first when it has none).
func (lb *shardedBackend) keepCurrent(ctx context.Context, tg target, all []Entry, from []int, twice []string) ([]Entry, error) {
	vals, err := lb.stored(ctx, tg, twice)
	if err != nil {
		return nil, err
	}
	right := map[string]int{}
	for j, m := range twice {
		right[m] = -1
		if v, ok, err := optFloat(&vals[j]); err == nil && ok {
			right[m] = lb.shardOf(v)
		}
	}
	inRight := map[string]bool{} // a copy sits in the right shard
	for k, e := range all {
		if want, dup := right[e.Member]; dup && from[k] == want {
			inRight[e.Member] = true
		}
	}
	out := make([]Entry, 0, len(all))
	kept := map[string]bool{}
	for k, e := range all {
		want, dup := right[e.Member]
		switch {
		case !dup:
		case kept[e.Member], inRight[e.Member] && from[k] != want:
			continue
		default:
			kept[e.Member] = true
		}
		out = append(out, e)
	}
	return out, nil
}

// shardCards reads every shard's member count and their sum, in one round
// trip.
func (lb *shardedBackend) shardCards(ctx context.Context, tg target) ([]int64, int64, error) {
	cards, total, _, err := lb.shardCardsWith(ctx, tg)
	return cards, total, err
}

// shardCardsWith is shardCards with at most one more command in the same
// round trip, whose result it returns.
func (lb *shardedBackend) shardCardsWith(ctx context.Context, tg target, extra ...rueidis.Completed) ([]int64, int64, rueidis.RedisResult, error) {
	sk := lb.periodShardKeys(tg)
	n := len(lb.bounds) + 1
	cmds := make(rueidis.Commands, 0, n+1)
	for i := 0; i < n; i++ {
		cmds = append(cmds, lb.client.B().Zcard().Key(sk[i]).Build())
	}
	cmds = append(cmds, extra...)
	res := lb.client.DoMulti(ctx, cmds...)
	cards := make([]int64, n)
	for i := range cards {
		var err error
		if cards[i], err = res[i].AsInt64(); err != nil {
			return nil, 0, rueidis.RedisResult{}, err
		}
	}
	var more rueidis.RedisResult
	if len(res) > n {
		more = res[n]
	}
	lb.seen(tg, cards)
	return cards, sum(cards), more, nil
}

// doApart sends cmds in one round trip, the first ntx of them one
// MULTI/EXEC on one shard's slot: one pipeline on one node; on a Cluster
// two pipelines at once, as rueidis cannot pipeline a MULTI beside other
// slots' commands (it panics). The results come back in the order of cmds.
// The callers build one slice, the MULTI first, so that one node's
// pipeline needs no copy of them.
func (lb *shardedBackend) doApart(ctx context.Context, cmds rueidis.Commands, ntx int) []rueidis.RedisResult {
	if !lb.cluster || ntx == 0 || ntx == len(cmds) {
		return lb.client.DoMulti(ctx, cmds...)
	}
	done := make(chan []rueidis.RedisResult, 1)
	go func() { done <- lb.client.DoMulti(ctx, cmds[:ntx]...) }()
	others := lb.client.DoMulti(ctx, cmds[ntx:]...)
	return append(<-done, others...)
}

// shardStanding is a member's place found by reading every shard at once.
type shardStanding struct {
	found         bool
	stored        float64
	shard         int
	pos           int64 // 0-based position on the board
	better, worse int64 // members strictly better, worse (plain scores)
	cards         []int64
	total         int64 // members in the shards
	// moving: not found in any shard, but its partition holds it (a
	// write between its two shards as the shards were read, on a Cluster).
	moving bool
}

// locate finds member on a sharded board in one round trip: on one node
// with one script (locateLocal), on a Cluster by reading every shard
// (locateCluster). The extra calls ride in the same round trip; their
// results come back in order.
func (lb *shardedBackend) locate(ctx context.Context, tg target, member string, extra ...scripts.Call) (shardStanding, []rueidis.RedisResult, error) {
	if !lb.cluster {
		st, _, more, err := lb.locateLocal(ctx, tg, member, -1, extra...)
		return st, more, err
	}
	// A member found in no shard while its partition holds it was
	// crossing a bound as the shards were read (see WithShards): read
	// again rather than call a ranked member unranked.
	for try := 1; ; try++ {
		st, more, err := lb.locateCluster(ctx, tg, member, extra...)
		if err != nil || !st.moving || try == shiftTries {
			return st, more, err
		}
	}
}

// shardProbe is what one shard holds of a member.
type shardProbe struct {
	card                     int64
	found                    bool
	stored                   float64
	posIn, betterIn, worseIn int64 // inside the shard; better, worse: Competition
}

// locateCluster reads, in one round trip, the member's partition and from
// every shard its count and the member's place: with plain commands under
// Ordinal ranks (ZCARD, Z(REV)RANK, ZSCORE), with shard_read.lua under
// Competition ranks, which count the members strictly better than a score.
// A member found in two shards (a move in flight, or a crashed write) is
// taken from the shard of its partition's value, else from the best.
func (lb *shardedBackend) locateCluster(ctx context.Context, tg target, member string, extra ...scripts.Call) (shardStanding, []rueidis.RedisResult, error) {
	n := len(lb.bounds) + 1
	calls := []scripts.Call{lb.hgetCall(lb.partKey(member, tg), member)}
	for i := 0; i < n; i++ {
		calls = append(calls, lb.probeCalls(lb.shardKey(i, tg), member)...)
	}
	per := len(calls[1:]) / n // calls a shard
	res := scripts.ExecMulti(ctx, lb.client, append(calls, extra...))
	more := res[len(calls):]
	truth, hasTruth, err := optResult(res[0], optString)
	if err != nil {
		return shardStanding{}, nil, err
	}
	right := -1
	if hasTruth {
		right = lb.shardOfString(truth)
	}
	st := shardStanding{cards: make([]int64, n), shard: -1}
	var in shardProbe
	for _, i := range lb.bestFirst {
		p, err := lb.probe(res[1+per*i : 1+per*(i+1)])
		if err != nil {
			return st, nil, err
		}
		st.cards[i] = p.card
		if p.found && (!st.found || i == right) {
			st.found, st.shard, st.stored, in = true, i, p.stored, p
		}
	}
	st.total = sum(st.cards)
	st.moving = hasTruth && !st.found
	if st.found {
		st.pos, _ = lb.globalRank(st.cards, st.shard, in.posIn, 0)
		st.better, st.worse = lb.globalRank(st.cards, st.shard, in.betterIn, in.worseIn)
	}
	return st, more, nil
}

// hgetCall reads field of hash key.
func (lb *shardedBackend) hgetCall(key, field string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Hget().Key(key).Field(field).Build() }}
}

// probeCalls read what shard key holds of member, for probe: under
// Competition ranks shard_read.lua's 'rank', which counts the members
// strictly better than a score; else ZCARD, Z(REV)RANK and ZSCORE.
func (lb *shardedBackend) probeCalls(key, member string) []scripts.Call {
	if lb.ranking == Competition {
		return []scripts.Call{scripts.ShardRankCall(lb.readHeader(), key, member)}
	}
	return []scripts.Call{lb.zcardCall(key), {Cmd: func() rueidis.Completed { return lb.rankCmd(key, member) }}, lb.zscoreCall(key, member)}
}

// probe decodes one shard's replies of locateCluster: shard_read.lua's
// 'rank' reply, or ZCARD, Z(REV)RANK and ZSCORE.
func (lb *shardedBackend) probe(res []rueidis.RedisResult) (shardProbe, error) {
	var p shardProbe
	var err error
	if len(res) == 3 {
		if p.card, err = res[0].AsInt64(); err != nil {
			return p, err
		}
		var ok bool
		if p.posIn, ok, err = optResult(res[1], optInt); err != nil || !ok {
			return p, err
		}
		p.stored, p.found, err = optResult(res[2], optFloat)
		// Three commands of one pipeline, not a transaction (see
		// WithShards): a write run between them can leave the count short
		// of the place read after it. The place proves the shard held that
		// many, so that a rank never passes its total.
		if p.found {
			p.card = max(p.card, p.posIn+1)
		}
		return p, err
	}
	v, err := res[0].ToArray()
	if err != nil {
		return p, err
	}
	if len(v) != 5 {
		return p, fmt.Errorf("shard read returned %d values, want 5", len(v))
	}
	return probeScript(v)
}

// probeScript decodes shard_read.lua's 'rank' reply (and the head of its
// 'around' reply): {members, stored value or nil, position, strictly
// better, strictly worse}.
func probeScript(v []rueidis.RedisMessage) (shardProbe, error) {
	var p shardProbe
	var err error
	if p.card, err = v[0].AsInt64(); err != nil || v[1].IsNil() {
		return p, err
	}
	if p.stored, err = v[1].AsFloat64(); err != nil {
		return p, err
	}
	ints := []*int64{&p.posIn, &p.betterIn, &p.worseIn}
	for k, x := range ints {
		if *x, err = v[2+k].AsInt64(); err != nil {
			return p, err
		}
	}
	p.found = true
	return p, nil
}

// optResult reads a reply that may be nil with read (optString, optInt,
// optFloat).
func optResult[T any](r rueidis.RedisResult, read func(*rueidis.RedisMessage) (T, bool, error)) (T, bool, error) {
	m, err := r.ToMessage()
	if err != nil {
		var zero T
		if rueidis.IsRedisNil(err) {
			return zero, false, nil
		}
		return zero, false, err
	}
	return read(&m)
}

// locateLocal is locate on one node: the member's partition says which
// shard to look in, and one script reads it and every shard's count (see
// shard_locate.lua); with radius 0 or more, also the slice around the
// member (rest: its first position, its first entry's competition rank,
// then member, value pairs).
func (lb *shardedBackend) locateLocal(ctx context.Context, tg target, member string, radius int, extra ...scripts.Call) (shardStanding, []rueidis.RedisMessage, []rueidis.RedisResult, error) {
	scale, bounds := lb.scriptBounds()
	ks := lb.appendShardKeys([]string{lb.partKey(member, tg)}, tg)
	call := scripts.ShardLocateCall(lb.readHeader(), ks, member, scale, radius, bounds)
	var res rueidis.RedisResult
	var more []rueidis.RedisResult
	if len(extra) == 0 {
		res = call.Exec(ctx, lb.client)
	} else {
		all := scripts.ExecMulti(ctx, lb.client, append([]scripts.Call{call}, extra...))
		res, more = all[0], all[1:]
	}
	v, err := res.ToArray()
	if err != nil {
		return shardStanding{}, nil, nil, err
	}
	st, rest, err := lb.locateReply(v)
	return st, rest, more, err
}

// locateReply decodes shard_locate.lua's reply: the standing, and what
// follows the counts (the slice, for Around).
func (lb *shardedBackend) locateReply(v []rueidis.RedisMessage) (shardStanding, []rueidis.RedisMessage, error) {
	n := len(lb.bounds) + 1
	if len(v) < 5+n {
		return shardStanding{}, nil, fmt.Errorf("locate returned %d values, want %d or more", len(v), 5+n)
	}
	st := shardStanding{cards: make([]int64, n)}
	var err error
	for i := range st.cards {
		if st.cards[i], err = v[5+i].AsInt64(); err != nil {
			return st, nil, err
		}
	}
	st.total = sum(st.cards)
	if v[0].IsNil() {
		return st, nil, nil
	}
	var ints [4]int64
	for k := range ints {
		if ints[k], err = v[1+k].AsInt64(); err != nil {
			return st, nil, err
		}
	}
	if st.stored, err = v[0].AsFloat64(); err != nil {
		return st, nil, err
	}
	st.found, st.shard = true, int(ints[0])
	st.pos, _ = lb.globalRank(st.cards, st.shard, ints[1], 0)
	st.better, st.worse = lb.globalRank(st.cards, st.shard, ints[2], ints[3])
	return st, v[5+n:], nil
}

// aroundLocal is Around on one node: one script (see shard_locate.lua).
func (lb *shardedBackend) aroundLocal(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	st, rest, _, err := lb.locateLocal(ctx, tg, member, radius)
	if err != nil {
		return nil, wrap("around", err)
	}
	if !st.found {
		return nil, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	if len(rest) < 2 || len(rest)%2 != 0 {
		return nil, wrap("around", fmt.Errorf("around returned %d values after the counts", len(rest)))
	}
	start, err := rest[0].AsInt64()
	if err != nil {
		return nil, wrap("around", err)
	}
	first, err := rest[1].AsInt64()
	if err != nil {
		return nil, wrap("around", err)
	}
	es, err := lb.entries(rest[2:])
	if err != nil {
		return nil, wrap("around", err)
	}
	es = onceEach(es)
	lb.rankEntries(es, start, first)
	return es, nil
}

// keepOnce drops the extra copies of members es holds twice (read from
// two shards: a move in flight or a write that died between its steps on
// a Cluster, a Rebuild's swap on one node), keeping the copy in the shard
// of the member's partition's value (keepCurrent: one round trip more, only
// when a member is there twice). Each entry's shard is the one its plain
// score belongs to, as every copy was put where its value belongs.
func (lb *shardedBackend) keepOnce(ctx context.Context, tg target, es []Entry) ([]Entry, error) {
	seen := make(map[string]bool, len(es))
	var twice []string
	for _, e := range es {
		if seen[e.Member] {
			twice = append(twice, e.Member)
		}
		seen[e.Member] = true
	}
	if len(twice) == 0 {
		return es, nil
	}
	from := make([]int, len(es))
	for k, e := range es {
		from[k] = lb.shardOfPlain(e.Score)
	}
	return lb.keepCurrent(ctx, tg, es, from, twice)
}

// onceEach drops later copies of a member, in place: on one node a member
// is in two shards only while a Rebuild swaps them in one after another
// (Seal uses it to find a member its torn pages read twice).
func onceEach(es []Entry) []Entry {
	seen := make(map[string]bool, len(es))
	out := es[:0]
	for _, e := range es {
		if !seen[e.Member] {
			seen[e.Member] = true
			out = append(out, e)
		}
	}
	return out
}

// rank locates member (see locate), with IncludeData its data from its
// partition in the same round trip; under Competition ranks on a Cluster
// in two (rankCluster).
func (lb *shardedBackend) rank(ctx context.Context, tg target, member string) (Standing, error) {
	if lb.cluster && lb.ranking == Competition {
		st, err := lb.rankCluster(ctx, tg, member)
		if err == nil && st.Rank == 0 {
			return Standing{}, fmt.Errorf("%w: %q", ErrNotRanked, member)
		}
		return st, wrap("rank", err)
	}
	var extra []scripts.Call
	if tg.data {
		extra = append(extra, lb.hgetCall(lb.dataKey(member), member))
	}
	st, more, err := lb.locate(ctx, tg, member, extra...)
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	if !st.found {
		return Standing{}, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	out := lb.standingOf(member, st)
	if tg.data {
		if out.Data, _, err = optResult(more[0], optString); err != nil {
			return Standing{}, wrap("rank", err)
		}
	}
	return out, nil
}

// rankCluster is Rank under Competition ranks on a Cluster (rank 0:
// unranked), in two round trips of plain commands: every shard's count
// beside the member's partition, whose value says which shard holds it;
// then its place in that shard at one moment (placeIn). In one round trip
// locateCluster runs shard_read.lua on every shard, each of which must read
// the score before it counts the members strictly better (BENCHMARKS.md).
// With WithReplicaReads, where a MULTI would force the primary, the second
// step is that script on the member's shard alone (standings). A member
// its shard no longer holds at that value (a write between the steps, a
// move in flight) is located as locate finds it: one more round trip.
func (lb *shardedBackend) rankCluster(ctx context.Context, tg target, member string) (Standing, error) {
	if lb.replicaReads {
		out, err := lb.standings(ctx, tg, []string{member})
		if err != nil {
			return Standing{}, err
		}
		return out[0], nil
	}
	cards, v, data, err := lb.cardsAndPart(ctx, tg, member)
	if err != nil || v == "" {
		return Standing{}, err
	}
	s := lb.shardOfString(v)
	p, err := lb.placeIn(ctx, lb.periodShardKeys(tg)[s], member, v)
	if err != nil {
		return Standing{}, err
	}
	st := shardStanding{found: p.found, stored: p.stored, shard: s, cards: cards, total: sum(cards) - cards[s] + p.card}
	if !p.found {
		if st, _, err = lb.locate(ctx, tg, member); err != nil || !st.found {
			return Standing{}, err
		}
	} else {
		st.better, st.worse = lb.globalRank(cards, s, p.betterIn, p.worseIn)
	}
	out := lb.standingOf(member, st)
	out.Data = data
	return out, nil
}

// cardsAndPart reads, in one round trip, every shard's count and the
// stored value member's partition holds ("": none), with IncludeData its
// data: where a member is, before it is read there.
func (lb *shardedBackend) cardsAndPart(ctx context.Context, tg target, member string) (cards []int64, v, data string, err error) {
	sk := lb.periodShardKeys(tg)
	n := len(lb.bounds) + 1
	b := lb.client.B()
	cmds := make(rueidis.Commands, 0, n+2)
	for i := 0; i < n; i++ {
		cmds = append(cmds, b.Zcard().Key(sk[i]).Build())
	}
	cmds = append(cmds, b.Hget().Key(lb.partKey(member, tg)).Field(member).Build())
	if tg.data {
		cmds = append(cmds, b.Hget().Key(lb.dataKey(member)).Field(member).Build())
	}
	res := lb.client.DoMulti(ctx, cmds...)
	if cards, err = int64s(res[:n]); err != nil {
		return nil, "", "", err
	}
	if v, _, err = optResult(res[n], optString); err != nil || !tg.data {
		return cards, v, "", err
	}
	data, _, err = optResult(res[n+1], optString)
	return cards, v, data, err
}

// placeIn reads, in one MULTI, member's place in shard key under
// Competition ranks, given v, the stored value its partition holds: its
// score, the shard's count and its members strictly better and worse than
// v's tie block. found is false when the shard does not hold member at v.
func (lb *shardedBackend) placeIn(ctx context.Context, key, member, v string) (shardProbe, error) {
	var p shardProbe
	lo, hi, err := lb.tieBlock(v)
	if err != nil {
		return p, err
	}
	b := lb.client.B()
	above := b.Zcount().Key(key).Min("(" + hi).Max("+inf").Build()
	below := b.Zcount().Key(key).Min("-inf").Max("(" + lo).Build()
	if !lb.high() {
		above, below = below, above
	}
	replies, err := execResult(lb.client.DoMulti(ctx, b.Multi().Build(),
		b.Zscore().Key(key).Member(member).Build(), b.Zcard().Key(key).Build(), above, below, b.Exec().Build()))
	if err != nil {
		return p, err
	}
	want, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return p, err
	}
	if p.stored, p.found, err = optFloat(&replies[0]); err != nil || !p.found || p.stored != want {
		return shardProbe{}, err
	}
	ints := []*int64{&p.card, &p.betterIn, &p.worseIn}
	for k, x := range ints {
		if *x, err = replies[1+k].AsInt64(); err != nil {
			return p, err
		}
	}
	return p, nil
}

// tieBlock is the stored bounds (inclusive) of the values sharing stored
// value v's plain score: v itself, or under a tie-break every time slot of
// its scaled score.
func (lb *shardedBackend) tieBlock(v string) (lo, hi string, err error) {
	if lb.tb == nil {
		return v, v, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return "", "", err
	}
	sc, _ := lb.tb.split(x)
	first := sc * lb.tb.slots
	return strconv.FormatInt(first, 10), strconv.FormatInt(first+lb.tb.slots-1, 10), nil
}

// ranks is Ranks on a sharded board: see standings.
func (lb *shardedBackend) ranks(ctx context.Context, tg target, members []string) ([]Standing, error) {
	out, err := lb.standings(ctx, tg, members)
	return out, wrap("ranks", err)
}

// standings reads members' standings (rank 0: unranked) in two round
// trips: every shard's count beside the members' partitions, whose values
// say which shard holds each; then each member's place in that shard (as
// locateCluster reads it). A member missing from that shard (a move in
// flight, a crashed write) is located as locate finds it: one more round
// trip.
func (lb *shardedBackend) standings(ctx context.Context, tg target, members []string) ([]Standing, error) {
	sk := lb.periodShardKeys(tg)
	n := len(lb.bounds) + 1
	cmds := make(rueidis.Commands, 0, n)
	for i := 0; i < n; i++ {
		cmds = append(cmds, lb.client.B().Zcard().Key(sk[i]).Build())
	}
	cmds, at := lb.partHMGETs(cmds, members, func(p int) string { return lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID) })
	if tg.data {
		cmds, _ = lb.partHMGETs(cmds, members, func(p int) string { return lb.parts.Of(p).Data() })
	}
	res := lb.client.DoMulti(ctx, cmds...)
	cards, err := int64s(res[:n])
	if err != nil {
		return nil, err
	}
	vals, err := spreadHMGETs(res[n:n+len(at)], at, len(members))
	if err != nil {
		return nil, err
	}
	shard := make([]int, len(members)) // -1: no value
	for j := range members {
		shard[j] = -1
		if v, ok, err := optString(&vals[j]); err == nil && ok {
			shard[j] = lb.shardOfString(v)
		}
	}
	out, err := lb.placeAll(ctx, tg, members, shard, cards)
	if err != nil || !tg.data {
		return out, err
	}
	data, err := spreadHMGETs(res[n+len(at):], at, len(members))
	for j := range out {
		if err == nil {
			out[j].Data, _, err = optString(&data[j])
		}
	}
	return out, err
}

// placeAll reads the standing of each member in its shard (-1: none),
// given every shard's count, in one round trip, and locates the ones not
// found there.
func (lb *shardedBackend) placeAll(ctx context.Context, tg target, members []string, shard []int, cards []int64) ([]Standing, error) {
	per := 3
	if lb.ranking == Competition {
		per = 1
	}
	var calls []scripts.Call
	for j, m := range members {
		if shard[j] >= 0 {
			calls = append(calls, lb.probeCalls(lb.shardKey(shard[j], tg), m)...)
		}
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	total := sum(cards)
	out := make([]Standing, len(members))
	for j, m := range members {
		out[j] = Standing{Entry: Entry{Member: m}, Total: total}
		if shard[j] < 0 {
			continue
		}
		p, err := lb.probe(res[:per])
		res = res[per:]
		if err != nil {
			return nil, err
		}
		if !p.found {
			st, _, err := lb.locate(ctx, tg, m)
			if err != nil {
				return nil, err
			}
			out[j].Total = st.total
			if st.found {
				out[j] = lb.standingOf(m, st)
			}
			continue
		}
		// The total counts the member's shard at the moment of its place
		// (globalRank reads only the other shards' counts), so that its
		// rank never passes the total while that shard grows.
		st := shardStanding{found: true, stored: p.stored, shard: shard[j], cards: cards, total: total - cards[shard[j]] + p.card}
		st.pos, _ = lb.globalRank(cards, shard[j], p.posIn, 0)
		st.better, st.worse = lb.globalRank(cards, shard[j], p.betterIn, p.worseIn)
		out[j] = lb.standingOf(m, st)
	}
	return out, nil
}

// standingOf is the standing of a member locate found.
func (lb *shardedBackend) standingOf(member string, st shardStanding) Standing {
	if lb.ranking == Competition {
		return lb.standing(member, lb.plain(st.stored), st.better+1, st.worse, st.total)
	}
	return lb.standing(member, lb.plain(st.stored), st.pos+1, 0, st.total)
}

// top reads the best shard alone, with one ZRANGE, when the board last saw
// it hold n members or more (bestHolds): a Top then costs what it costs an
// unsharded board. One shard read alone is a state the board was in: a
// member moving out of it mid-write shows where it was, as a read just
// before the write would. When the best shard turns out to hold fewer, a
// second round trip reads every shard; so does the first Top of a window
// whose best shard holds fewer than n, in one round trip from then on.
// top reads the best shard alone while it holds n or more members by the
// count a Top or Page last saw (bestHolds), else every shard; with
// IncludeData the entries' data from their partitions after, in one more
// round trip (and every shard's first n at once, unless the best shard
// held hintMargin more than n when last seen).
func (lb *shardedBackend) top(ctx context.Context, tg target, n int) ([]Entry, error) {
	if lb.hotServes(tg, 0, n) {
		if es, ok, err := lb.hotFirst(ctx, tg, n); ok {
			return es, err
		}
	}
	es, err := lb.topEntries(ctx, tg, n)
	if err == nil && tg.data {
		err = lb.fillData(ctx, es)
	}
	return es, wrap("top", err)
}

// cutoff reads Cutoff's entry: on one node in one script (shard_page.lua);
// on a Cluster the shards' counts, then the entry from its shard; with
// IncludeData its data after.
func (lb *shardedBackend) cutoff(ctx context.Context, tg target, percent float64) ([]Entry, error) {
	if tg.data && lb.cluster {
		es, _, err := lb.slice(ctx, tg, func(total int64) (int64, int64) {
			if total == 0 {
				return 0, 0
			}
			return cutoffPosition(total, percent) - 1, 1
		})
		return es, err
	}
	es, err := lb.cutoffEntry(ctx, tg, percent)
	if err != nil {
		return nil, err
	}
	return es, lb.dataIf(ctx, tg, es)
}

func (lb *shardedBackend) cutoffEntry(ctx context.Context, tg target, percent float64) ([]Entry, error) {
	if !lb.cluster {
		res := scripts.ShardCutoffCall(lb.readHeader(), lb.appendShardKeys(nil, tg), percent).Exec(ctx, lb.client)
		es, _, err := lb.rangeReply(res, false)
		return es, err
	}
	es, _, err := lb.countedRange(ctx, tg, nil, func(total int64) (int64, int64) {
		if total == 0 {
			return 0, 0
		}
		return cutoffPosition(total, percent) - 1, 1
	})
	return es, err
}

// countedRange reads, ranked, the positions place gives for the board's
// total, by the shards' counts: cards when the caller has just read them,
// else counted first; counted and read again while a shard held fewer
// than counted (shiftTries). It returns the entries and the total.
func (lb *shardedBackend) countedRange(ctx context.Context, tg target, cards []int64, place func(total int64) (start, count int64)) ([]Entry, int64, error) {
	for try := 1; ; try++ {
		if cards == nil {
			var err error
			if cards, _, err = lb.shardCards(ctx, tg); err != nil {
				return nil, 0, err
			}
		}
		total := sum(cards)
		start, count := place(total)
		es, first, shifted, err := lb.shardRange(ctx, tg, cards, start, count)
		if err != nil {
			return nil, 0, err
		}
		if shifted && try < shiftTries {
			cards = nil
			continue
		}
		lb.rankEntries(es, start, first)
		return es, total, nil
	}
}

// dataIf fills es's data under IncludeData.
func (lb *shardedBackend) dataIf(ctx context.Context, tg target, es []Entry) error {
	if !tg.data {
		return nil
	}
	return lb.fillData(ctx, es)
}

// pageLocal is Page with IncludeData on one node: the page across the
// shards in one script (shard_page.lua), then the data.
func (lb *shardedBackend) pageLocal(ctx context.Context, tg target, start int64, size int) (Page, error) {
	res := scripts.ShardPageCall(lb.readHeader(), lb.appendShardKeys(nil, tg), start, size).Exec(ctx, lb.client)
	es, total, err := lb.rangeReply(res, false)
	if err != nil {
		return Page{}, err
	}
	if err := lb.fillData(ctx, es); err != nil {
		return Page{}, err
	}
	return Page{Entries: es, Total: total}, nil
}

func (lb *shardedBackend) topEntries(ctx context.Context, tg target, n int) ([]Entry, error) {
	hint := lb.bestHolds[tg.window.Name()]
	if hint == nil {
		hint = &atomic.Int64{} // a window New did not list: read every shard
	}
	// With IncludeData the data take a round trip of their own: the best
	// shard alone only while it held hintMargin more than n when last
	// seen, else every shard's first n at once rather than the best shard
	// alone at the risk of a second.
	need := int64(n)
	if tg.data {
		need += hintMargin
	}
	if h := hint.Load(); h >= need && !(tg.data && h == math.MaxInt64) {
		res := lb.client.Do(ctx, lb.rangeCmd(lb.shardKey(lb.bestFirst[0], tg), 0, int64(n)-1))
		es, err := lb.zEntries(&res)
		if err != nil {
			return nil, err
		}
		if len(es) == n {
			lb.rankEntries(es, 0, 1)
			return es, nil
		}
		hint.Store(int64(len(es)))
	}
	return lb.topAll(ctx, tg, n, hint)
}

// topAll reads the first n of every shard, with one ZRANGE each, and
// keeps the first n (one copy of a member found in two shards: see
// readSpans); it remembers in hint how many the best shard holds.
func (lb *shardedBackend) topAll(ctx context.Context, tg target, n int, hint *atomic.Int64) ([]Entry, error) {
	spans := make([]shardSpan, len(lb.bestFirst))
	for k, i := range lb.bestFirst {
		spans[k] = shardSpan{i, 0, int64(n)}
	}
	es, held, _, err := lb.readSpans(ctx, tg, spans, false)
	if err != nil {
		return nil, err
	}
	hint.Store(int64(held[0]))
	if len(es) > n {
		es = es[:n]
	}
	lb.rankEntries(es, 0, 1)
	return es, nil
}

// page reads every shard's count, and the page from the
// shards it spans: two round trips, the second only for the shards the page
// spans. A page that lies inside the best shard by the count a Top or Page
// last saw it hold (bestHolds) is read in the first round trip beside the
// counts, with one ZRANGE; under Competition ranks only the first page
// can, as a later page's first rank counts the members strictly better
// than its first entry, which takes its score.
// With IncludeData, the entries' data from their partitions after, in one
// more round trip; on one node the page is then one script (pageLocal).
func (lb *shardedBackend) page(ctx context.Context, tg target, start int64, size int, total bool) (Page, error) {
	if lb.hotServes(tg, start, size) {
		if p, ok, err := lb.hotPage(ctx, tg, start, size, total, lb.hotCount); ok {
			return p, err
		}
	}
	if tg.data && !lb.cluster {
		return lb.pageLocal(ctx, tg, start, size)
	}
	if tg.data {
		es, total, err := lb.slice(ctx, tg, func(int64) (int64, int64) { return start, int64(size) })
		return Page{Entries: es, Total: total}, err
	}
	p, err := lb.pageOf(ctx, tg, start, size)
	if err == nil && tg.data {
		err = lb.fillData(ctx, p.Entries)
	}
	return p, err
}

func (lb *shardedBackend) pageOf(ctx context.Context, tg target, start int64, size int) (Page, error) {
	for try := 1; ; try++ {
		p, shifted, err := lb.pageOnce(ctx, tg, start, size)
		if err != nil || !shifted || try == shiftTries {
			return p, err
		}
	}
}

// pageOnce is one try of pageOf, and whether its positions shifted (see
// shardRange).
func (lb *shardedBackend) pageOnce(ctx context.Context, tg target, start int64, size int) (Page, bool, error) {
	hint := lb.bestHolds[tg.window.Name()]
	best := lb.bestFirst[0]
	var extra []rueidis.Completed
	guess := hint != nil && start+int64(size) <= hint.Load() && (lb.ranking == Ordinal || start == 0)
	if guess {
		extra = append(extra, lb.rangeCmd(lb.shardKey(best, tg), start, start+int64(size)-1))
	}
	cards, total, res, err := lb.shardCardsWith(ctx, tg, extra...)
	if err != nil {
		return Page{}, false, err
	}
	if hint != nil {
		hint.Store(cards[best])
	}
	if guess {
		es, err := lb.zEntries(&res)
		if err != nil {
			return Page{}, false, err
		}
		if len(es) == size {
			lb.rankEntries(es, start, 1)
			return Page{Entries: es, Total: total}, false, nil
		}
	}
	es, first, shifted, err := lb.shardRange(ctx, tg, cards, start, int64(size))
	if err != nil {
		return Page{}, false, err
	}
	lb.rankEntries(es, start, first)
	return Page{Entries: es, Total: total}, shifted, nil
}

// around reads the slice around member: on one node with one script
// (shard_locate.lua), on a Cluster by locating the member, then reading
// the shards the slice spans; under Competition ranks without data by the
// member's partition first (aroundNear). With IncludeData the entries' data come from
// their partitions after, in one more round trip: so that this stays two
// on a Cluster, the slice is then read in one (aroundStretches), and the
// two-step way only when that finds a member twice.
func (lb *shardedBackend) around(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	if !tg.data && lb.cluster && lb.ranking == Competition {
		es, err := lb.aroundNear(ctx, tg, member, radius)
		switch {
		case errors.Is(err, ErrNotRanked):
			return nil, err
		case !errors.Is(err, errStretch):
			return es, wrap("around", err)
		}
	}
	if !tg.data {
		return lb.aroundOf(ctx, tg, member, radius)
	}
	var es []Entry
	err := errStretch
	if lb.cluster {
		es, err = lb.aroundStretches(ctx, tg, member, radius)
		if err != nil && !errors.Is(err, errStretch) && !errors.Is(err, ErrNotRanked) {
			return nil, wrap("around", err)
		}
	}
	if errors.Is(err, errStretch) {
		es, err = lb.aroundOf(ctx, tg, member, radius) // wraps its errors
	}
	if err != nil {
		return nil, err
	}
	return es, wrap("around", lb.fillData(ctx, es))
}

func (lb *shardedBackend) aroundOf(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	if !lb.cluster {
		return lb.aroundLocal(ctx, tg, member, radius)
	}
	for try := 1; ; try++ {
		es, ok, err := lb.aroundTwoStep(ctx, tg, member, radius)
		if err != nil || ok || try == shiftTries {
			return es, err
		}
		// Members crossed a bound between the two steps, so the slice read
		// by position misses the member or entries: read it from the
		// member's own shard, around the member, instead (aroundNear),
		// which finds the member wherever its shard's positions went.
		es, err = lb.aroundNear(ctx, tg, member, radius)
		switch {
		case errors.Is(err, ErrNotRanked):
			return nil, err
		case !errors.Is(err, errStretch):
			return es, wrap("around", err)
		}
	}
}

// aroundTwoStep is Around on a Cluster by locating the member, then
// reading the slice by position; ok is false when the slice shows that
// members crossed a bound between the two (see shiftTries).
func (lb *shardedBackend) aroundTwoStep(ctx context.Context, tg target, member string, radius int) ([]Entry, bool, error) {
	st, _, err := lb.locate(ctx, tg, member)
	if err != nil {
		return nil, false, wrap("around", err)
	}
	if !st.found {
		return nil, false, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	total := sum(st.cards)
	count := int64(2*radius + 1)
	start := max(0, min(st.pos-int64(radius), total-count))
	es, first, shifted, err := lb.shardRange(ctx, tg, st.cards, start, count)
	if err != nil {
		return nil, false, wrap("around", err)
	}
	lb.rankEntries(es, start, first)
	held := slices.ContainsFunc(es, func(e Entry) bool { return e.Member == member })
	return es, !shifted && held && int64(len(es)) >= min(count, total), nil
}

// among reads members' stored values from their partitions, the truth the
// shards are built from: one HMGET a partition, in one round trip, exact
// even while a member moves between shards.
func (lb *shardedBackend) among(ctx context.Context, tg target, members []string) ([]Entry, error) {
	vals, data, err := lb.storedAnd(ctx, tg, members, tg.data)
	if err != nil {
		return nil, wrap("among", err)
	}
	es := make([]Entry, 0, len(members))
	seen := make(map[string]bool, len(members))
	for j, m := range members {
		s, ok, err := optFloat(&vals[j])
		if err != nil {
			return nil, wrap("among", err)
		}
		if !ok || seen[m] {
			continue
		}
		seen[m] = true
		e := Entry{Member: m, Score: s}
		if data != nil {
			if e.Data, _, err = optString(&data[j]); err != nil {
				return nil, wrap("among", err)
			}
		}
		es = append(es, e)
	}
	return es, nil
}

// stored reads members' stored values (nil where none) from their
// partitions: one HMGET a partition, in one round trip.
func (lb *shardedBackend) stored(ctx context.Context, tg target, members []string) ([]rueidis.RedisMessage, error) {
	out, _, err := lb.storedAnd(ctx, tg, members, false)
	return out, err
}

// storedAnd is stored, with data also the members' data from their
// partitions' data hashes, in the same round trip.
func (lb *shardedBackend) storedAnd(ctx context.Context, tg target, members []string, data bool) (stored, datas []rueidis.RedisMessage, err error) {
	cmds, at := lb.partHMGETs(nil, members, func(p int) string { return lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID) })
	if data {
		cmds, _ = lb.partHMGETs(cmds, members, func(p int) string { return lb.parts.Of(p).Data() })
	}
	res := lb.client.DoMulti(ctx, cmds...)
	if stored, err = spreadHMGETs(res[:len(at)], at, len(members)); err != nil || !data {
		return stored, nil, err
	}
	datas, err = spreadHMGETs(res[len(at):], at, len(members))
	return stored, datas, err
}

// partHMGETs appends to cmds one HMGET a partition of members, of the
// hash key(partition), and returns where each one's fields are in members.
func (lb *shardedBackend) partHMGETs(cmds rueidis.Commands, members []string, key func(p int) string) (rueidis.Commands, [][]int) {
	parts, at := byPartition(members)
	for k, p := range parts {
		cmds = append(cmds, lb.client.B().Hmget().Key(key(p)).Field(pick(members, at[k])...).Build())
	}
	return cmds, at
}

// spreadHMGETs puts partHMGETs' replies back in the members' order.
func spreadHMGETs(res []rueidis.RedisResult, at [][]int, n int) ([]rueidis.RedisMessage, error) {
	out := make([]rueidis.RedisMessage, n)
	for k, r := range res {
		vals, err := r.ToArray()
		if err != nil {
			return nil, err
		}
		if len(vals) != len(at[k]) {
			return nil, fmt.Errorf("a partition answered %d values for %d members", len(vals), len(at[k]))
		}
		for i, j := range at[k] {
			out[j] = vals[i]
		}
	}
	return out, nil
}

// fillData reads the data of es's members from their partitions (one
// HMGET a partition, in one round trip) into es: IncludeData on a read
// whose members come from the shards.
func (lb *shardedBackend) fillData(ctx context.Context, es []Entry) error {
	if len(es) == 0 {
		return nil
	}
	members := make([]string, len(es))
	for i, e := range es {
		members[i] = e.Member
	}
	cmds, at := lb.partHMGETs(nil, members, func(p int) string { return lb.parts.Of(p).Data() })
	data, err := spreadHMGETs(lb.client.DoMulti(ctx, cmds...), at, len(members))
	if err != nil {
		return err
	}
	for i := range es {
		if es[i].Data, _, err = optString(&data[i]); err != nil {
			return err
		}
	}
	return nil
}

// count sums the shards' member counts, read in one pipeline: on one node,
// where every write is one script, exact when Redis runs the pipeline's
// ZCARDs back to back (as it does with a pipeline it reads at once); on a
// Cluster exact but while a member's move between two shards is in
// flight, or a crashed write awaits Check (see WithShards, Consistency).
func (lb *shardedBackend) count(ctx context.Context, tg target) (int64, error) {
	_, n, err := lb.shardCards(ctx, tg)
	return n, wrap("count", err)
}

// counts sums every shard's count of each period, in one round trip.
func (lb *shardedBackend) counts(ctx context.Context, tgs []target) ([]int64, error) {
	n := len(lb.bounds) + 1
	cmds := make(rueidis.Commands, 0, n*len(tgs))
	for _, tg := range tgs {
		for i := 0; i < n; i++ {
			cmds = append(cmds, lb.client.B().Zcard().Key(lb.shardKey(i, tg)).Build())
		}
	}
	cards, err := int64s(lb.client.DoMulti(ctx, cmds...))
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(tgs))
	for k := range tgs {
		out[k] = sum(cards[k*n : (k+1)*n])
	}
	return out, nil
}

// clear deletes the periods' shards (the shadow's too) with their recent
// versions (on a Cluster) and the periods' partitions; with board, also
// every partition's clock, id set and data, and Rebuild's markers (the
// shadow's too). One round trip up to unlinkChunk keys (on one node one
// UNLINK a period, atomic, and one of the board's other keys: see unlink),
// one more for each unlinkChunk keys after. With a hot top the mirrors go
// after the rest, so that one a read rebuilt while the shards went goes
// too: on one node last in the same pipeline; on a Cluster, whose
// pipelines to different nodes keep no order, in one more round trip, with
// a turn (which refuses a put read before); the turn counters then expire
// with the mirrors' TTL, not an hour later. A mirror's delete that fails
// after the keys went is not the write's failure: it is tried once more
// (hotLost).
func (lb *shardedBackend) clear(ctx context.Context, tgs []target, board bool) error {
	// The keys are named a period at a time as they are sent: a board kept
	// for years names millions (a period's 4,096 partitions, and on a
	// Cluster 2,048 recent versions a shard), more than memory or one
	// pipeline holds.
	groups := func(yield func([]string) bool) {
		var ks []string
		for _, tg := range tgs {
			ks = lb.shardKeys(ks[:0], tg, true)
			if lb.shadow != nil {
				ks = lb.shadow.shardKeys(ks, tg, true)
			}
			for p := range lb.parts.Len() {
				ks = append(ks, lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID))
			}
			if !yield(ks) {
				return
			}
		}
		if board {
			ks = ks[:0]
			for p := range lb.parts.Len() {
				part := lb.parts.Of(p)
				ks = append(ks, part.IDs(), part.Data())
			}
			for g := range keys.PartitionGroups {
				ks = append(ks, lb.parts.GroupClock(g))
			}
			yield(append(ks, lb.allMarkers()...))
		}
	}
	var dropErr error
	if !lb.cluster {
		// A chunk of keys that failed after others went leaves the
		// mirrors, which go last (hotFailed).
		err := lb.unlinkThen(ctx, groups, lb.hotDrop(tgs), &dropErr)
		lb.hotFailed(ctx, tgs, err)
		if err == nil && dropErr != nil {
			lb.hotLost(ctx, tgs) // the keys went: not the write's failure
		}
		return err
	}
	if err := lb.unlink(ctx, groups); err != nil {
		lb.hotFailed(ctx, tgs, err) // some keys may have gone
		return err
	}
	if lb.dropHotFor(ctx, tgs, hotTTL) != nil {
		lb.hotLost(ctx, tgs) // once more, even when ctx has ended; the keys went
	}
	return nil
}

// idSet is member's partition's id set: the ids of a sharded board live
// beside the values they guard.
func (lb *shardedBackend) idSet(member string) string {
	return lb.parts.Of(keys.PartitionOf(member)).IDs()
}

// idSets lists every partition's id set.
func (lb *shardedBackend) idSets() []string {
	ks := make([]string, lb.parts.Len())
	for p := range ks {
		ks[p] = lb.parts.Of(p).IDs()
	}
	return ks
}

// dataKey is member's partition's data hash: no key holds every member's
// data.
func (lb *shardedBackend) dataKey(member string) string {
	return lb.parts.Of(keys.PartitionOf(member)).Data()
}

// rebuildKeys are the keys one period rebuilds: every shard, and every
// partition's hash, numbered as lb.parts.
func (lb *shardedBackend) rebuildKeys(tg target) (zsets, hashes []string) {
	zsets = lb.appendShardKeys(nil, tg)
	if lb.shadow != nil {
		zsets = lb.shadow.appendShardKeys(zsets, tg)
	}
	hashes = make([]string, lb.parts.Len())
	for p := range hashes {
		hashes[p] = lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID)
	}
	return zsets, hashes
}

// rebuildAdd puts a standing into its shard (and its shadow shard, whose
// keys follow the shards in rebuildKeys) and its partition.
func (lb *shardedBackend) rebuildAdd(member, value string, v float64, add rebuildAdder) error {
	err := errors.Join(add(lb.shardOf(v), false, member, value), add(keys.PartitionOf(member), true, member, value))
	if lb.shadow != nil {
		err = errors.Join(err, add(len(lb.bounds)+1+lb.shadow.shardOf(v), false, member, value))
	}
	return err
}

// entriesAt reads the shards' counts, then each position from the shard
// that holds it (by those counts) with a ZRANGE of its own: two round trips.
func (lb *shardedBackend) entriesAt(ctx context.Context, tg target, positions []int64) ([]Entry, error) {
	cards, _, err := lb.shardCards(ctx, tg)
	if err != nil {
		return nil, err
	}
	order := lb.bestFirst
	cmds := make(rueidis.Commands, 0, len(positions))
	for _, p := range positions {
		for _, i := range order {
			if p < cards[i] {
				cmds = append(cmds, lb.rangeCmd(lb.shardKey(i, tg), p, p))
				break
			}
			p -= cards[i]
		}
	}
	return lb.entriesOf(lb.client.DoMulti(ctx, cmds...))
}
