package leaderboard

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/rueidis"
)

// scoreRange is a checked range of plain scores, lo..hi inclusive (±Inf
// open ends), with the stored values that bound it: under a tie-break
// every tie slot of every score inside lies within storedLo..storedHi.
type scoreRange struct {
	lo, hi             float64
	storedLo, storedHi string
}

// anyScore is the range of every stored value.
var anyScore = scoreRange{lo: math.Inf(-1), hi: math.Inf(1), storedLo: "-inf", storedHi: "+inf"}

// scoreRangeOf checks lo and hi as Between, CountBetween and RemoveBetween
// take them and bounds them as Redis stores scores.
func (lb *Leaderboard) scoreRangeOf(lo, hi float64) (scoreRange, error) {
	if math.IsNaN(lo) || math.IsNaN(hi) || lo > hi {
		return scoreRange{}, fmt.Errorf("%w: score range %v..%v, want lo <= hi and no NaN", ErrInvalidArgument, lo, hi)
	}
	return scoreRange{lo: lo, hi: hi, storedLo: lb.storedAtLeast(lo), storedHi: lb.storedAtMost(hi)}, nil
}

// betterEdge is the stored bound of a plain score toward the better end of
// the board: the members strictly better than the score are those beyond
// it (better_than in order.lua).
func (lb *Leaderboard) betterEdge(x float64) string {
	if lb.high() {
		return lb.storedAtMost(x)
	}
	return lb.storedAtLeast(x)
}

// storedAtLeast is the smallest stored value whose plain score is x or
// more ("-inf" for -Inf).
func (lb *Leaderboard) storedAtLeast(x float64) string {
	switch {
	case math.IsInf(x, 0):
		return infBound(x)
	case lb.tb == nil:
		return formatScore(x)
	}
	return strconv.FormatInt(lb.tb.atLeast(x)*lb.tb.slots, 10)
}

// storedAtMost is the largest stored value whose plain score is x or less
// ("+inf" for +Inf).
func (lb *Leaderboard) storedAtMost(x float64) string {
	switch {
	case math.IsInf(x, 0):
		return infBound(x)
	case lb.tb == nil:
		return formatScore(x)
	}
	return strconv.FormatInt(lb.tb.atMost(x)*lb.tb.slots+lb.tb.slots-1, 10)
}

func infBound(x float64) string {
	if x > 0 {
		return "+inf"
	}
	return "-inf"
}

// atLeast is the smallest scaled score S whose plain score (S/10^Decimals,
// as decode computes it) is x or more, kept within one step beyond
// MaxScore, where no stored value lies.
func (c *composite) atLeast(x float64) int64 {
	lim := float64(c.maxS + 1)
	s := int64(math.Max(-lim, math.Min(lim, math.Ceil(x*c.scale))))
	for s > -c.maxS-1 && float64(s-1)/c.scale >= x {
		s--
	}
	for s < c.maxS+1 && float64(s)/c.scale < x {
		s++
	}
	return s
}

// atMost is the largest scaled score whose plain score is x or less, kept
// as atLeast keeps it.
func (c *composite) atMost(x float64) int64 {
	lim := float64(c.maxS + 1)
	s := int64(math.Max(-lim, math.Min(lim, math.Floor(x*c.scale))))
	for s < c.maxS+1 && float64(s+1)/c.scale <= x {
		s++
	}
	for s > -c.maxS-1 && float64(s)/c.scale > x {
		s--
	}
	return s
}

// Between returns up to n entries (1 <= n <= MaxN) whose scores lie within
// lo..hi inclusive, best first, each with its rank on the board: a bracket
// ("everyone between 1,000 and 1,999"). -Inf and +Inf are open ends; NaN
// or lo > hi is ErrInvalidArgument. Under a tie-break the bounds take
// every tie of a score, and the entries carry plain scores. One round trip,
// read atomically (a MULTI, or a script with IncludeData or with
// WithReplicaReads); on a sharded board one too (each shard it spans read
// atomically: without data nor WithReplicaReads, plain commands with a
// MULTI on the best shard it spans, on a Cluster two pipelines sent at
// once as rueidis cannot pipeline a MULTI beside other slots' commands;
// else one script a shard), two with IncludeData.
func (lb *Leaderboard) Between(ctx context.Context, lo, hi float64, n int, q ...Query) (_ []Entry, err error) {
	defer endedWith(ctx, &err)
	if n < 1 || n > MaxN {
		return nil, fmt.Errorf("%w: n = %d, want 1..%d", ErrInvalidArgument, n, MaxN)
	}
	r, err := lb.scoreRangeOf(lo, hi)
	if err != nil {
		return nil, err
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if err := notStarted(ctx, "between"); err != nil {
		return nil, err
	}
	es, err := lb.be.between(ctx, tg, r, n)
	return es, wrap("between", err)
}

// CountBetween returns how many members have a score within lo..hi
// inclusive (validated as Between's). One round trip: one ZCOUNT, on a
// sharded board one for each shard the range spans, in one DoMulti.
func (lb *Leaderboard) CountBetween(ctx context.Context, lo, hi float64, q ...Query) (_ int64, err error) {
	defer endedWith(ctx, &err)
	r, err := lb.scoreRangeOf(lo, hi)
	if err != nil {
		return 0, err
	}
	tg, err := lb.read(q)
	if err != nil {
		return 0, err
	}
	if err := notStarted(ctx, "count between"); err != nil {
		return 0, err
	}
	n, err := lb.be.countBetween(ctx, tg, r)
	return n, wrap("count between", err)
}

// AroundScore tells where a score would place without submitting it: r = 1 +
// the members strictly better than score, and the entries at positions
// r-radius .. r+radius-1 (fewer at either end of the board; radius 0: r and
// no entries), each with its rank. r is the best place the score could
// take, its rank under Competition ranks; a member submitting it may land
// lower: among the members already at that score, where the board orders
// equal scores (by member, or with a tie-break that favours earlier times
// after every one of them), under Ordinal ranks. 0 <= radius <= MaxRadius; a NaN or ±Inf
// score is ErrInvalidArgument. One round trip, read atomically: one MULTI of
// plain commands (a ZCOUNT and two ZRANGE BYSCORE LIMIT) under Ordinal
// ranks, one script under Competition ranks (the slice's first entry needs
// the count of its ties), with IncludeData or with WithReplicaReads; on a
// sharded board one round trip too, each shard read atomically: the score's
// shard answers a script and every other shard its ZCARD (on one node under
// Ordinal ranks without WithReplicaReads, a MULTI of plain commands on that
// shard instead of the script), and only when the slice crosses that shard's
// edge does a second round trip read it from every shard: under Competition
// ranks by a script a shard, under Ordinal by a script on the score's shard
// and plain ZCARD and ZRANGE on the others. With IncludeData the read takes
// that second way at once, and its data a second round trip.
func (lb *Leaderboard) AroundScore(ctx context.Context, score float64, radius int, q ...Query) (_ int64, _ []Entry, err error) {
	defer endedWith(ctx, &err)
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return 0, nil, fmt.Errorf("%w: score %v, want a finite number", ErrInvalidArgument, score)
	}
	if radius < 0 || radius > MaxRadius {
		return 0, nil, fmt.Errorf("%w: radius = %d, want 0..%d", ErrInvalidArgument, radius, MaxRadius)
	}
	tg, err := lb.read(q)
	if err != nil {
		return 0, nil, err
	}
	if err := notStarted(ctx, "around score"); err != nil {
		return 0, nil, err
	}
	r, es, err := lb.be.aroundScore(ctx, tg, lb.betterEdge(score), score, radius)
	if err != nil {
		return 0, nil, wrap("around score", err)
	}
	return r, es, nil
}

// scorePlaceCalls is how many commands scorePlaceCmds makes: MULTI,
// ZCOUNT, the two ranges, EXEC.
const scorePlaceCalls = 5

// scorePlaceCmds appends to cmds the commands that read, in one MULTI on
// key, what the 'score' scripts read (range.lua, shard_read.lua) under
// Ordinal ranks, where no entry's rank needs the count of its ties: the
// members strictly better than edge (a stored value, as order.lua's
// better_than counts them), the radius entries nearest to edge among them
// (nearest first) and the radius first entries at or after it, each by
// score with a LIMIT.
func (lb *Leaderboard) scorePlaceCmds(cmds rueidis.Commands, key, edge string, radius int) rueidis.Commands {
	b := lb.client.B()
	r := int64(radius)
	if lb.high() {
		return append(cmds, b.Multi().Build(),
			b.Zcount().Key(key).Min("("+edge).Max("+inf").Build(),
			b.Zrange().Key(key).Min("("+edge).Max("+inf").Byscore().Limit(0, r).Withscores().Build(),
			b.Zrange().Key(key).Min(edge).Max("-inf").Byscore().Rev().Limit(0, r).Withscores().Build(),
			b.Exec().Build())
	}
	return append(cmds, b.Multi().Build(),
		b.Zcount().Key(key).Min("-inf").Max("("+edge).Build(),
		b.Zrange().Key(key).Min("("+edge).Max("-inf").Byscore().Rev().Limit(0, r).Withscores().Build(),
		b.Zrange().Key(key).Min(edge).Max("+inf").Byscore().Limit(0, r).Withscores().Build(),
		b.Exec().Build())
}

// placeSlice is AroundScore's slice from the entries either side of the
// score (scorePlace's before and after, in the board's order), better
// being the members on the board strictly better than the score.
func (lb *Leaderboard) placeSlice(before, after []Entry, better int64) []Entry {
	es := append(append(make([]Entry, 0, len(before)+len(after)), before...), after...)
	lb.rankEntries(es, better-int64(len(before)), 0)
	return es
}

// scorePlace decodes the replies to scorePlaceCmds: the members better
// than the score, the entries before it in the board's order and those
// after.
func (lb *Leaderboard) scorePlace(res []rueidis.RedisResult) (int64, []Entry, []Entry, error) {
	replies, err := execResult(res)
	if err != nil {
		return 0, nil, nil, err
	}
	p, err := replies[0].AsInt64()
	if err != nil {
		return 0, nil, nil, err
	}
	before, err := lb.zMessageEntries(&replies[1])
	if err != nil {
		return 0, nil, nil, err
	}
	slices.Reverse(before) // nearest first: the board's order is the other way
	after, err := lb.zMessageEntries(&replies[2])
	return p, before, after, err
}

// RemoveBetween removes every member whose score lies within lo..hi
// inclusive (validated as Between's) from the current period of one
// window (the default, or In(w)), and returns how many it removed: the
// clean-up after a cheat ("every score above what the game allows").
// Member data and other periods stay. At is ErrInvalidArgument.
//
// It works in chunks of up to MaxN members, best first, each atomic, so
// that a large removal never stalls Redis; as a whole it is not atomic (a
// member submitting into the range while it runs may stay or go; without
// a Remover store, one whose score leaves the range before its chunk is
// removed stays, as every removal takes only members whose stored values
// still lie within the range, and the count is of those). An
// unsharded board removes a chunk in one round trip. With a store that
// records removals (a Remover), each chunk's members are read first, the
// store records their removal (store first: a store failure returns an
// error and leaves the chunk in Redis; a Redis failure after it
// ErrPending), then Redis removes them: two round trips a chunk, so that a
// Rebuild keeps them out. Redis then removes every member the store
// recorded, as Remove does, even one whose score left the range between
// the two (keeping it would keep in Redis standings the store no longer
// counts, and a Rebuild would drop its acknowledged submissions); and as
// with Remove, a submission that reaches the store after the removal and
// Redis before it is then in the store alone (Verify names it, a Rebuild
// brings it back). A member the store cannot hold (see Remove) is
// removed from Redis alone. A sharded board reads each chunk's members, then
// removes them as Remove does (their data kept), in chunks of 100, so
// that one chunk's script holds Redis a few milliseconds at most
// (BENCHMARKS.md): two round trips a chunk on one node, three on a
// Cluster; with a Remover store the chunks are of 100 on one node too
// (read, recorded, removed), and of MaxN on a Cluster, whose members are
// removed in pieces of 100, each piece's two steps in turn. With
// WithReplicaReads the members are read from the primaries, where the
// removal goes: a replica may not hold a member submitted moments before
// (in a MULTI, which Redis refuses over its maxmemory: then by script, as
// EVALSHA, one round trip more a chunk, so that the removal still runs).
// A range that holds no member costs one round trip on any board (the
// read that finds it empty). Beside an error the count is of the removals
// Redis confirmed before it:
// a chunk whose reply was lost (a timeout) may have been removed all the
// same, so count again (CountBetween) rather than trust it.
func (lb *Leaderboard) RemoveBetween(ctx context.Context, lo, hi float64, q ...Query) (_ int64, err error) {
	defer endedWith(ctx, &err)
	r, err := lb.scoreRangeOf(lo, hi)
	if err != nil {
		return 0, err
	}
	w, err := lb.currentWindow(q, "RemoveBetween")
	if err != nil {
		return 0, err
	}
	tg, err := lb.target(w, lb.now())
	if err != nil {
		return 0, err
	}
	if err := notStarted(ctx, "remove between"); err != nil {
		return 0, err
	}
	var removed int64
	for {
		n, more, err := lb.removeChunk(ctx, tg, r)
		removed += n
		if err != nil || !more {
			return removed, err
		}
	}
}

// removeChunk removes one chunk of RemoveBetween and reports whether
// members are left in the range.
func (lb *Leaderboard) removeChunk(ctx context.Context, tg target, r scoreRange) (int64, bool, error) {
	if err := notStarted(ctx, "remove between"); err != nil {
		return 0, false, err
	}
	rm, ok := lb.store.(Remover)
	if !ok {
		n, more, err := lb.be.dropBetween(ctx, tg, r, MaxN)
		return n, more, wrap("remove between", err)
	}
	members, more, err := lb.be.membersBetween(ctx, tg, r, lb.be.evictChunk())
	if err != nil || len(members) == 0 {
		return 0, false, wrap("remove between", err)
	}
	now := lb.now()
	held := lb.storeHeld(members, now)
	if len(held) == 0 {
		// Members the store cannot hold: nothing to record, nothing
		// pending, and, as without a Remover, only those still in range go.
		n, err := lb.be.evict(ctx, tg, r, members)
		return n, more && err == nil, wrap("remove between", err)
	}
	removal := Removal{Board: lb.name, Members: held, At: now, Periods: submissionPeriods([]target{tg})}
	if err := notStarted(ctx, "remove between"); err != nil {
		return 0, false, err
	}
	if err := rm.Remove(ctx, removal); err != nil {
		return 0, false, storeErr("remove between", err)
	}
	// The store has recorded the removal of every member read: Redis
	// removes them all, even one whose score left the range since, as
	// Remove would. Keeping that one (the range's test) would keep in
	// Redis a member the store no longer counts, and a Rebuild would drop
	// its acknowledged submissions.
	n, err := lb.be.evict(ctx, tg, anyScore, members)
	if err := lb.afterStore(ctx, "remove between", wrap("remove between", err), nil); err != nil {
		return n, false, err
	}
	return n, more, nil
}
