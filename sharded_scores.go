package leaderboard

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// The reads by score on a sharded board. A shard holds one range of plain
// scores, so a score range spans the shards between those of its ends,
// and every member of a better shard is better than it: each read is one
// script a shard it spans (and a ZCARD a shard wholly better), in one
// round trip, each shard read atomically. Without data, AroundScore reads
// the score's shard alone by its script and every other shard's ZCARD
// (on one node under Ordinal ranks, a MULTI of plain commands on that
// shard instead of the script), and Between, and under Ordinal ranks All,
// read plain commands, with a MULTI on the one shard that needs a moment
// of its own (on a Cluster two pipelines at once: doApart); with
// WithReplicaReads, scripts instead of every MULTI.
// IncludeData reads the entries' data from their partitions in a second.

// shardOfPlain is the shard whose scores hold plain score x.
func (lb *shardedBackend) shardOfPlain(x float64) int {
	return sort.Search(len(lb.bounds), func(i int) bool { return lb.bounds[i] > x })
}

// spans reports the shards a score range r spans, by index.
func (lb *shardedBackend) spans(r scoreRange) (lo, hi int) {
	return lb.shardOfPlain(r.lo), lb.shardOfPlain(r.hi)
}

func (lb *shardedBackend) between(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	if !tg.data && !lb.replicaReads {
		return lb.betweenPlain(ctx, tg, r, n)
	}
	sk := lb.periodShardKeys(tg)
	lo, hi := lb.spans(r)
	var calls []scripts.Call
	var spanned []bool
	for _, i := range lb.bestFirst {
		key := sk[i]
		switch {
		case i >= lo && i <= hi:
			calls, spanned = append(calls, scripts.ShardBetweenCall(lb.readHeader(), key, r.storedLo, r.storedHi, n)), append(spanned, true)
		case lb.betterShard(i, lo): // better than every shard spanned
			calls, spanned = append(calls, lb.zcardCall(key)), append(spanned, false)
		}
	}
	var better int64
	es := []Entry{}
	for k, res := range scripts.ExecMulti(ctx, lb.client, calls) {
		if !spanned[k] {
			c, err := res.AsInt64()
			if err != nil {
				return nil, err
			}
			better += c
			continue
		}
		v, err := res.ToArray()
		if err != nil {
			return nil, err
		}
		p, st, err := lb.countAndStretch(v)
		if err != nil {
			return nil, err
		}
		better += p
		es = append(es, st.es...)
	}
	es, err := lb.keepOnce(ctx, tg, es)
	if err != nil {
		return nil, err
	}
	if len(es) > n {
		es = es[:n]
	}
	lb.rankEntries(es, better, better+1)
	return es, lb.dataIf(ctx, tg, es)
}

// betweenPlain is between without data, where no shard needs a script:
// a ZCARD of each shard wholly better than the range; on the best shard it
// spans, the count of its members better than the range and its entries
// within it, in one MULTI (one moment of that shard); on each other shard
// it spans (all of whose members are worse than the best one's), its
// entries within the range. The members better than the range are the
// members strictly better than its first entry, so under Competition ranks
// too the entries' ranks follow from that count (rankEntries). One round
// trip (on a Cluster two pipelines at once: doApart). With
// WithReplicaReads the script instead: a MULTI goes to the primary.
func (lb *shardedBackend) betweenPlain(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	sk := lb.periodShardKeys(tg)
	lo, hi := lb.spans(r)
	b := lb.client.B()
	// The MULTI on the best shard spanned goes first, the others after it
	// as they come.
	cmds := make(rueidis.Commands, 4, 4+len(lb.bestFirst))
	tx := false
	// per shard read, in the order of the replies (the MULTI's first):
	// 'm' the MULTI (4 replies), 'c' a ZCARD, 'r' a ZRANGE
	kinds := append(make([]byte, 0, 1+len(lb.bestFirst)), 'm')
	for _, i := range lb.bestFirst {
		key := sk[i]
		switch {
		case i >= lo && i <= hi && !tx:
			better, in := lb.betweenCmds(key, r, n)
			cmds[0], cmds[1], cmds[2], cmds[3], tx = b.Multi().Build(), better, in, b.Exec().Build(), true
		case i >= lo && i <= hi:
			cmds, kinds = append(cmds, lb.betweenInCmd(key, r, n)), append(kinds, 'r')
		case lb.betterShard(i, lo):
			cmds, kinds = append(cmds, b.Zcard().Key(key).Build()), append(kinds, 'c')
		}
	}
	es, better, parts, err := lb.betweenReplies(lb.doApart(ctx, cmds, 4), kinds)
	if err != nil {
		return nil, err
	}
	if parts > 1 { // entries from two shards may hold a member twice
		if es, err = lb.keepOnce(ctx, tg, es); err != nil {
			return nil, err
		}
	}
	if len(es) > n {
		es = es[:n]
	}
	lb.rankEntries(es, better, better+1)
	return es, nil
}

// betweenReplies reads betweenPlain's replies, one kind a shard read (see
// kinds there): the entries in board order, the members of the shards
// better than those spanned, and how many shards gave entries.
func (lb *shardedBackend) betweenReplies(res []rueidis.RedisResult, kinds []byte) ([]Entry, int64, int, error) {
	var better int64
	es := []Entry{}
	parts := 0 // shards that gave entries
	for _, k := range kinds {
		var got []Entry
		var err error
		switch k {
		case 'c':
			var c int64
			c, err = res[0].AsInt64()
			better, res = better+c, res[1:]
		case 'm':
			var replies []rueidis.RedisMessage
			if replies, err = execResult(res[:4]); err == nil {
				var c int64
				if c, err = replies[0].AsInt64(); err == nil {
					better += c
					got, err = lb.zMessageEntries(&replies[1])
				}
			}
			res = res[4:]
		default:
			got, err = lb.zEntries(&res[0])
			res = res[1:]
		}
		if err != nil {
			return nil, 0, 0, err
		}
		switch {
		case len(got) == 0:
		case parts == 0:
			es, parts = got, 1
		default:
			es, parts = append(es, got...), parts+1
		}
	}
	return es, better, parts, nil
}

// countAndStretch decodes a shard_read.lua reply of a count, then one
// stretch.
func (lb *shardedBackend) countAndStretch(v []rueidis.RedisMessage) (int64, shardStretch, error) {
	if len(v) < 1 {
		return 0, shardStretch{}, fmt.Errorf("shard read returned no values")
	}
	p, err := v[0].AsInt64()
	if err != nil {
		return 0, shardStretch{}, err
	}
	ss, err := lb.stretchesOf(v[1:])
	if err != nil || len(ss) != 1 {
		return 0, shardStretch{}, fmt.Errorf("shard read: %d stretches, want 1 (%v)", len(ss), err)
	}
	return p, ss[0], nil
}

func (lb *shardedBackend) countBetween(ctx context.Context, tg target, r scoreRange) (int64, error) {
	sk := lb.periodShardKeys(tg)
	lo, hi := lb.spans(r)
	cmds := make(rueidis.Commands, 0, hi-lo+1)
	for i := lo; i <= hi; i++ {
		cmds = append(cmds, lb.client.B().Zcount().Key(sk[i]).Min(r.storedLo).Max(r.storedHi).Build())
	}
	counts, err := int64s(lb.client.DoMulti(ctx, cmds...))
	return sum(counts), err
}

// evictPiece is how many members one script of a sharded removal takes,
// so that a piece stays a few milliseconds of Redis's time, where a chunk
// of MaxN would stall it for 20 or more: on one node a piece's script took
// at most 2.8-3.6 ms (it took 4-12 ms while it swept every shard for each
// member); on a Cluster a shard's script of 100 took 1 ms or so, its
// longest 6-8 ms on a busy machine, against 9-14 ms at 200 (BENCHMARKS.md).
const evictPiece = 100

// dropBetween reads a chunk's members, at most evictPiece, then removes
// them (evict), their data kept.
func (lb *shardedBackend) dropBetween(ctx context.Context, tg target, r scoreRange, n int) (int64, bool, error) {
	members, more, err := lb.membersBetween(ctx, tg, r, min(n, evictPiece))
	if err != nil || len(members) == 0 {
		return 0, false, err
	}
	removed, err := lb.evict(ctx, tg, r, members)
	return removed, more, err
}

// evictChunk is evictPiece on one node, where one round trip's pieces
// would run back to back (Redis runs what it reads of one client's
// pipeline before it serves another), and MaxN on a Cluster, whose evict
// sends each piece's steps in turn.
func (lb *shardedBackend) evictChunk() int {
	if lb.cluster {
		return MaxN
	}
	return evictPiece
}

// evict removes from one period, as Remove does (see remove) but for
// their data, which stays, those of members whose partition's values
// lie within r: after dropBetween's read, a member that left the range
// since stays (RemoveBetween with a store passes anyScore). In
// pieces of evictPiece members: on one node one script a piece, in one
// round trip; on a Cluster each piece's two steps in turn.
func (lb *shardedBackend) evict(ctx context.Context, tg target, r scoreRange, members []string) (int64, error) {
	live, bounds := []target{tg}, []string{r.storedLo, r.storedHi}
	if !lb.cluster {
		var calls []scripts.Call
		var at []int // where each piece's evict is among calls
		for piece := range slices.Chunk(members, evictPiece) {
			at = append(at, len(calls))
			calls = append(calls, lb.withShadowLocal([]scripts.Call{lb.manyLocalCall("evict", live, piece, bounds, 0)}, live, piece)...)
		}
		res := lb.execThenDrop(ctx, calls, live)
		if err := firstErr(res); err != nil {
			return 0, err
		}
		var n int64
		for _, i := range at {
			k, err := res[i].AsInt64()
			if err != nil {
				return n, err
			}
			n += k
		}
		return n, nil
	}
	var n int64
	for piece := range slices.Chunk(members, evictPiece) {
		rows, err := lb.partWrite(ctx, "evict", live, piece, bounds, 0)
		for _, row := range rows[0] {
			if row.had && !row.has {
				n++
			}
		}
		if aerr := lb.applyRows(ctx, "evict", live, piece, rows, true); aerr != nil || err != nil {
			// What applied may have changed the top: its mirrors go too.
			return n, lb.afterWrite(ctx, live, cmp.Or(err, aerr))
		}
	}
	return n, lb.afterWrite(ctx, live, nil)
}

// aroundScore reads, without data, the counts and the score's own shard
// alone first, which nearly always suffices: on one node under Ordinal
// ranks without WithReplicaReads by a MULTI of plain commands on that
// shard (aroundScoreNear), else by its script (aroundScoreOwn: on a
// Cluster the MULTI would take a pipeline of its own, and a goroutine to
// send it, which cost more than the script, BENCHMARKS.md). With data
// (whose read takes a round trip of its own), or when the slice crosses
// the own shard's edge, it reads every shard's edge: aroundScoreOrdinal,
// or under Competition aroundScoreAll.
func (lb *shardedBackend) aroundScore(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, error) {
	if !tg.data {
		near := lb.aroundScoreOwn
		if lb.ranking == Ordinal && !lb.cluster && !lb.replicaReads {
			near = lb.aroundScoreNear
		}
		if r, es, ok, err := near(ctx, tg, edge, score, radius); err != nil || ok {
			return r, es, err
		}
	}
	if lb.ranking == Ordinal {
		return lb.aroundScoreOrdinal(ctx, tg, edge, score, radius)
	}
	return lb.aroundScoreAll(ctx, tg, edge, radius)
}

// aroundScoreAll is aroundScore read from every shard by its script, under
// Competition ranks: each shard's count, its members strictly better than
// the score and the radius entries either side of that place; the slice is
// the last radius of the better entries and the first radius of the
// others, in the shards' order.
func (lb *shardedBackend) aroundScoreAll(ctx context.Context, tg target, edge string, radius int) (int64, []Entry, error) {
	sk := lb.periodShardKeys(tg)
	calls := make([]scripts.Call, len(lb.bestFirst))
	for k, i := range lb.bestFirst {
		calls[k] = scripts.ShardScoreCall(lb.readHeader(), sk[i], edge, radius)
	}
	var before, after []placed
	var better, offset int64
	for _, res := range scripts.ExecMulti(ctx, lb.client, calls) {
		v, err := res.ToArray()
		if err != nil {
			return 0, nil, err
		}
		if len(v) < 1 {
			return 0, nil, fmt.Errorf("shard read returned no values")
		}
		card, err := v[0].AsInt64()
		if err != nil {
			return 0, nil, err
		}
		p, st, err := lb.countAndStretch(v[1:])
		if err != nil {
			return 0, nil, err
		}
		for j := range st.es {
			at := placed{e: st.es[j], first: offset + stretchBetter(st, j) + 1}
			if st.lo+int64(j) < p {
				before = append(before, at)
			} else {
				after = append(after, at)
			}
		}
		better, offset = better+p, offset+card
	}
	before = before[max(0, len(before)-radius):]
	after = after[:min(len(after), radius)]
	all := append(before, after...)
	es := make([]Entry, 0, len(all))
	var first int64
	for k, at := range all {
		if k == 0 {
			first = at.first
		}
		es = append(es, at.e)
	}
	es, err := lb.keepOnce(ctx, tg, es)
	if err != nil {
		return 0, nil, err
	}
	lb.rankEntries(es, better-int64(len(before)), first)
	return better + 1, es, lb.dataIf(ctx, tg, es)
}

// aroundScoreOwn is aroundScore without data when the slice lies in the
// score's own shard, as it nearly always does on a large board: that
// shard's 'score' script (which, under Competition ranks, counts the ties
// of the slice's first entry) and every other shard's ZCARD, in one round
// trip, one pipeline. ok is false when the slice reaches past the own
// shard's edge into a shard that holds members: then aroundScore reads
// every shard's edge, in a second round trip.
func (lb *shardedBackend) aroundScoreOwn(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, bool, error) {
	sk := lb.periodShardKeys(tg)
	own := lb.shardOfPlain(score)
	calls := make([]scripts.Call, 0, len(lb.bestFirst))
	calls = append(calls, scripts.ShardScoreCall(lb.readHeader(), sk[own], edge, radius))
	for _, i := range lb.bestFirst {
		if i != own {
			calls = append(calls, lb.zcardCall(sk[i]))
		}
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	others, err := int64s(res[1:]) // the shards but own, best first
	if err != nil {
		return 0, nil, false, err
	}
	v, err := res[0].ToArray()
	if err != nil || len(v) < 1 {
		return 0, nil, false, fmt.Errorf("shard read: %d values (%v)", len(v), err)
	}
	p, st, err := lb.countAndStretch(v[1:])
	if err != nil {
		return 0, nil, false, err
	}
	nb := int(min(p-st.lo, int64(len(st.es)))) // the stretch's entries better than the score
	at := slices.Index(lb.bestFirst, own)
	betterOut, leaves := lb.sliceLeaves(slices.Insert(others, at, 0), at, nb, len(st.es)-nb, radius)
	if leaves {
		return 0, nil, false, nil
	}
	better := betterOut + p
	if len(st.es) == 0 {
		return better + 1, []Entry{}, true, nil
	}
	lb.rankEntries(st.es, better-int64(nb), betterOut+stretchBetter(st, 0)+1)
	return better + 1, st.es, true, nil
}

// placed is an entry with its competition rank on the board.
type placed struct {
	e     Entry
	first int64
}

// stretchBetter is the members of a shard strictly better than its
// stretch's entry j: ties share the count of the first of them.
func stretchBetter(st shardStretch, j int) int64 {
	b := st.betterIn
	for k := 1; k <= j; k++ {
		if st.es[k].Score != st.es[k-1].Score {
			b = st.lo + int64(k)
		}
	}
	return b
}

// walk reads All's next chunk of up to n entries in one round trip: every
// shard's count (for the ranks, and to plan the next chunk), and the
// entries after the cursor's in its shard, then, by the counts the last
// chunk saw, the first entries of the shards after it, n in all, each
// shard read one entry past what the chunk asks of it (walkPlan). The
// chunk ends in a shard that holds more than the chunk takes of it. A
// member the chunk finds in two shards (see keepOnce) is yielded once, in
// the shard of its partition's value, with one round trip more; a copy
// left in a shard of another chunk is not seen (Check repairs it).
func (lb *shardedBackend) walk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error) {
	es, next, err := lb.walkChunk(ctx, tg, at, n)
	if err != nil {
		return nil, at, err
	}
	if es, err = lb.keepOnce(ctx, tg, es); err != nil {
		return nil, at, err
	}
	return es, next, nil
}

// walkChunk is walk before keepOnce.
func (lb *shardedBackend) walkChunk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error) {
	if lb.ranking == Ordinal && !tg.data && !lb.replicaReads {
		es, next, ok, err := lb.walkTx(ctx, tg, at, n)
		if err != nil || ok {
			return es, next, err
		}
	}
	sk := lb.periodShardKeys(tg)
	shards := len(lb.bestFirst)
	calls := make([]scripts.Call, 0, 2*shards)
	for _, i := range lb.bestFirst {
		calls = append(calls, lb.zcardCall(sk[i]))
	}
	asked := lb.walkPlan(tg, at, n)
	for _, a := range asked {
		value, member := "", ""
		if a.shard == at.shard {
			value, member = at.value, at.member
		}
		calls = append(calls, scripts.ShardAfterCall(lb.readHeader(), sk[lb.bestFirst[a.shard]], value, member, a.read()))
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	cards, err := int64s(res[:shards])
	if err != nil {
		return nil, at, err
	}
	lb.seenWalked(tg, cards)
	var out []Entry
	for j, a := range asked {
		k := a.shard
		v, err := res[shards+j].ToArray()
		if err != nil {
			return nil, at, err
		}
		_, st, err := lb.countAndStretch(v)
		if err != nil {
			return nil, at, err
		}
		before := sum(cards[:k])
		lb.rankEntries(st.es, before+st.lo, before+st.betterIn+1)
		take, more := walkTake(a, len(st.es), n-len(out))
		out = append(out, st.es[:take]...)
		if more {
			// The stored value of the last entry taken: the reply is {count,
			// first position, better, n, member, value, ...}.
			next, err := walkResume(at, k, st.es[:take], st.lo, cards, func() (string, error) { return v[3+2*take].ToString() })
			if err != nil {
				return nil, at, err
			}
			return out, next, lb.dataIf(ctx, tg, out)
		}
	}
	next := walkCursor{shard: asked[len(asked)-1].shard + 1, cards: cards}
	next.done = next.shard >= shards
	return out, next, lb.dataIf(ctx, tg, out)
}

// walkTx is walk under Ordinal ranks without data, with plain commands in
// the same one round trip (on a Cluster two pipelines at once: doApart):
// every shard's count; on the cursor's shard a MULTI of the cursor
// entry's value and place and the chunk by position right after it; on
// each shard after it a ZRANGE of its first entries. ok is false when the
// cursor's entry moved (its value or place is not the one the cursor
// knows): then walk's scripts read the chunk by value instead.
func (lb *shardedBackend) walkTx(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, bool, error) {
	shards := len(lb.bestFirst)
	asked := lb.walkPlan(tg, at, n)
	resume := at.value != "" // the chunk starts after the cursor's entry
	cmds, ntx := lb.walkTxCmds(lb.periodShardKeys(tg), at, asked, resume)
	res := lb.doApart(ctx, cmds, ntx)
	txRes, res := res[:ntx], res[ntx:]
	cards, err := int64s(res[:shards])
	if err != nil {
		return nil, at, false, err
	}
	lb.seenWalked(tg, cards)
	var out []Entry
	j := shards
	for _, a := range asked {
		var chunk rueidis.RedisMessage
		lo := int64(0) // position in the shard of the chunk's first entry
		if a.shard == at.shard && resume {
			replies, err := execResult(txRes)
			if err != nil {
				return nil, at, false, err
			}
			if holds, err := cursorHolds(replies, at); err != nil || !holds {
				return nil, at, false, err
			}
			chunk, lo = replies[2], at.pos
		} else {
			if chunk, err = res[j].ToMessage(); err != nil {
				return nil, at, false, err
			}
			j++
		}
		es, err := lb.zMessageEntries(&chunk)
		if err != nil {
			return nil, at, false, err
		}
		lb.rankEntries(es, sum(cards[:a.shard])+lo, 0)
		take, more := walkTake(a, len(es), n-len(out))
		out = append(out, es[:take]...)
		if more {
			next, err := walkResume(at, a.shard, es[:take], lo, cards, func() (string, error) { return zScoreAt(&chunk, take-1) })
			return out, next, true, err
		}
	}
	next := walkCursor{shard: asked[len(asked)-1].shard + 1, cards: cards}
	next.done = next.shard >= shards
	return out, next, true, nil
}

// walkTxCmds builds walkTx's commands: the MULTI on the cursor's shard
// when the chunk resumes in it first (ntx commands, walkTxCalls or none),
// then every shard's count, then a ZRANGE of each other shard asked.
func (lb *shardedBackend) walkTxCmds(sk []string, at walkCursor, asked []walkAsk, resume bool) (rueidis.Commands, int) {
	b := lb.client.B()
	ntx := 0
	for _, a := range asked {
		if a.shard == at.shard && resume {
			ntx = walkTxCalls
		}
	}
	cmds := make(rueidis.Commands, ntx, ntx+2*len(lb.bestFirst))
	for _, i := range lb.bestFirst {
		cmds = append(cmds, b.Zcard().Key(sk[i]).Build())
	}
	for _, a := range asked {
		key := sk[lb.bestFirst[a.shard]]
		if a.shard == at.shard && resume {
			cmds[0], cmds[1], cmds[2] = b.Multi().Build(), b.Zscore().Key(key).Member(at.member).Build(), lb.rankCmd(key, at.member)
			cmds[3], cmds[4] = lb.rangeCmd(key, at.pos, at.pos+int64(a.read())-1), b.Exec().Build()
			continue
		}
		cmds = append(cmds, lb.rangeCmd(key, 0, int64(a.read())-1))
	}
	return cmds, ntx
}

// walkAsk is what a chunk asks of one shard (its index in bestFirst): up
// to want entries, read with one more, so that a shard that answers no
// more than want is known to hold no more.
type walkAsk struct {
	shard, want int
}

// read is how many entries the chunk reads of the shard.
func (a walkAsk) read() int { return a.want + 1 }

// walkPlan is how many entries a chunk asks of the cursor's shard and the
// shards after it: what each held by the last chunk's counts (the
// cursor's shard what was left of it, at least one, so that a walk moves
// on whatever its counts), until n are asked, the last shard the rest of
// n. The first chunk plans by the counts the last read of the window saw
// (seenCards), or asks n of the best shard when none did. A plan decides
// round trips, never answers: the counts read with the chunk rank it, a
// shard that answers more than it was asked for ends the chunk, and one
// that answers fewer lets it go on to the next shard (a count read beside
// the last chunk's entries, not with them, may be one short).
func (lb *shardedBackend) walkPlan(tg target, at walkCursor, n int) []walkAsk {
	if at.cards == nil {
		if at.cards = lb.seenBestFirst(tg); at.cards == nil {
			return []walkAsk{{at.shard, n}}
		}
	}
	var asked []walkAsk
	left, last := int64(n), len(lb.bestFirst)-1
	for k := at.shard; k <= last && left > 0; k++ {
		held := max(at.cards[k], 0)
		if k == at.shard {
			held = max(held-at.pos, 1)
		}
		want := min(left, held)
		if k == last {
			want = left // the last shard asked takes what is left of n
		}
		asked = append(asked, walkAsk{k, int(want)})
		left -= want
	}
	return asked
}

// seenBestFirst is the counts the last read of tg's window saw (seen), in
// bestFirst's order as a walk's cursor keeps them; nil when none did.
func (lb *shardedBackend) seenBestFirst(tg target) []int64 {
	p := lb.seenCards[tg.window.Name()]
	if p == nil || p.Load() == nil {
		return nil
	}
	hint := *p.Load()
	cards := make([]int64, len(lb.bestFirst))
	for k, i := range lb.bestFirst {
		cards[k] = hint[i]
	}
	return cards
}

// seenWalked records the counts a walk's chunk read (in bestFirst's order)
// as the counts the last read of tg's window saw.
func (lb *shardedBackend) seenWalked(tg target, cards []int64) {
	byShard := make([]int64, len(cards))
	for k, i := range lb.bestFirst {
		byShard[i] = cards[k]
	}
	lb.seen(tg, byShard)
}

// set is Set on a sharded board: a Submit of the one window whose policy
// is "SET" (sub.set), through the partition, which orders it with every
// other write to the member.
func (lb *shardedBackend) set(ctx context.Context, tg target, sub submission) error {
	return setBySubmit(ctx, lb, tg, sub)
}

// aroundScoreOrdinal is aroundScore reading every shard's edge under
// Ordinal ranks, where no entry's rank needs a count of its ties: the
// score's own shard answers its script, the better shards a ZCARD and
// their last radius entries, the worse ones their first radius, as plain
// commands, in one round trip.
func (lb *shardedBackend) aroundScoreOrdinal(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, error) {
	own := lb.shardOfPlain(score)
	sk := lb.periodShardKeys(tg)
	var calls []scripts.Call
	for _, i := range lb.bestFirst {
		key := sk[i]
		switch {
		case i == own:
			calls = append(calls, scripts.ShardScoreCall(lb.readHeader(), key, edge, radius))
		case lb.betterShard(i, own):
			calls = append(calls, lb.zcardCall(key))
			if radius > 0 {
				calls = append(calls, lb.rangeCall(key, -int64(radius), -1))
			}
		case radius > 0:
			calls = append(calls, lb.rangeCall(key, 0, int64(radius)-1))
		}
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	var before, after []Entry
	var better int64
	for _, i := range lb.bestFirst {
		var err error
		switch {
		case i == own:
			var p int64
			p, before, after, err = lb.ownShard(res[0], before, after)
			better, res = better+p, res[1:]
		case lb.betterShard(i, own):
			var card int64
			if card, err = res[0].AsInt64(); err == nil && radius > 0 {
				before, err = lb.appendEntries(before, res[1])
				res = res[1:]
			}
			better, res = better+card, res[1:]
		case radius > 0:
			after, err = lb.appendEntries(after, res[0])
			res = res[1:]
		}
		if err != nil {
			return 0, nil, err
		}
	}
	before = before[max(0, len(before)-radius):]
	es, err := lb.keepOnce(ctx, tg, append(append([]Entry{}, before...), after[:min(len(after), radius)]...))
	if err != nil {
		return 0, nil, err
	}
	lb.rankEntries(es, better-int64(len(before)), 0)
	return better + 1, es, lb.dataIf(ctx, tg, es)
}

// aroundScoreNear is aroundScore under Ordinal ranks without data on one
// node when the slice lies in the score's own shard, as it nearly always
// does on a large board: every shard's count, and the MULTI of
// scorePlaceCmds on the score's shard, in one pipeline. ok is false when the slice reaches past
// the own shard's edge into a shard that holds members: then aroundScore
// reads every shard's edge, in a second round trip.
func (lb *shardedBackend) aroundScoreNear(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, bool, error) {
	sk := lb.periodShardKeys(tg)
	own := lb.shardOfPlain(score)
	cmds := lb.scorePlaceCmds(make(rueidis.Commands, 0, scorePlaceCalls+len(lb.bestFirst)), sk[own], edge, radius)
	for _, i := range lb.bestFirst {
		cmds = append(cmds, lb.client.B().Zcard().Key(sk[i]).Build())
	}
	res := lb.client.DoMulti(ctx, cmds...)
	cards, err := int64s(res[scorePlaceCalls:])
	if err != nil {
		return 0, nil, false, err
	}
	p, before, after, err := lb.scorePlace(res[:scorePlaceCalls])
	if err != nil {
		return 0, nil, false, err
	}
	betterOut, leaves := lb.sliceLeaves(cards, slices.Index(lb.bestFirst, own), len(before), len(after), radius)
	if leaves {
		return 0, nil, false, nil
	}
	better := betterOut + p
	return better + 1, lb.placeSlice(before, after, better), true, nil
}

// walkTxCalls is how many commands walkTx's MULTI on the cursor's shard
// takes: MULTI, ZSCORE, the rank, ZRANGE, EXEC.
const walkTxCalls = 5

// sliceLeaves reads the counts of every shard, best first (cards; the
// score's own shard at index at): the members of the shards better than
// it, and whether an AroundScore slice that found nb entries of radius
// before the score in its own shard and na after it must reach into
// another shard that holds members.
func (lb *shardedBackend) sliceLeaves(cards []int64, at, nb, na, radius int) (betterOut int64, leaves bool) {
	var worseOut int64
	for k, c := range cards {
		switch {
		case k < at:
			betterOut += c
		case k > at:
			worseOut += c
		}
	}
	return betterOut, (nb < radius && betterOut > 0) || (na < radius && worseOut > 0)
}

// ownShard splits the score's own shard's 'score' stretch into the
// entries better than the score and the others, and returns its count of
// the better ones.
func (lb *shardedBackend) ownShard(r rueidis.RedisResult, before, after []Entry) (int64, []Entry, []Entry, error) {
	v, err := r.ToArray()
	if err != nil || len(v) < 1 {
		return 0, nil, nil, fmt.Errorf("shard read: %d values (%v)", len(v), err)
	}
	p, st, err := lb.countAndStretch(v[1:])
	if err != nil {
		return 0, nil, nil, err
	}
	for j, e := range st.es {
		if st.lo+int64(j) < p {
			before = append(before, e)
		} else {
			after = append(after, e)
		}
	}
	return p, before, after, nil
}

// rangeCall is a ZRANGE of positions start..stop in the board's order, as
// a call.
func (lb *shardedBackend) rangeCall(key string, start, stop int64) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.rangeCmd(key, start, stop) }}
}

// appendEntries appends a ZRANGE's entries to es.
func (lb *shardedBackend) appendEntries(es []Entry, r rueidis.RedisResult) ([]Entry, error) {
	got, err := lb.zEntries(&r)
	return append(es, got...), err
}
