package leaderboard

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// A hot top (WithHotTop) is a mirror of a period's best k members, a short
// string beside the period's sorted set (mirror.lua), that Top and Range read
// through rueidis's client-side caching. Redis invalidates a cached read when
// its key changes; the period's key changes on every write, the mirror only
// when a write reaches its top k, which is when the mirror is rewritten: a copy
// of the period's first k sent after the write, in the same round trip when
// this process expects the write to reach the top (hotSnap) and in one more
// when the write's own reply shows that it did. A rewrite copies what the
// period holds when it runs (hot_top.lua, one script over the period's sorted
// set, or over its shards on one node), so rewrites never undo one another; on
// a Cluster, where a sharded board's shards lie in other slots than its mirror,
// the client reads the shards and puts the mirror, and turns (hot_put.lua)
// refuse a put read before a write that finished since. Every other write that
// may change the top (SubmitMany, Remove, RemoveBetween, Reset, Delete,
// Rebuild, Check's repairs) deletes the mirror after it, and the next read
// builds it again. The mirror expires hotTTL after its last rewrite, or
// with its period's data if sooner (mirror.lua): a process
// that dies between a write and its rewrite leaves it behind the period for
// that long at most, and so does a rewrite that fails (hotLost), which a
// write that fails (but by Redis's refusal) deletes as it may have applied
// (hotFailed).

// hotTTL is how long a mirror lives after its last rewrite, and how long
// this process keeps a read of it (rueidis's client-side cache): with
// hotRecheck, the bound on how far behind the period a cached Top can be.
const hotTTL = 10 * time.Second

// hotRecheck is how long a snapshot that rueidis's cache last confirmed
// answers again without asking the cache. Under many callers the cache's
// lookup (a lock, a clock, the node's pick) is about half of a cached Top's
// CPU; a read a moment after a confirmed one takes the same text. It is
// far below how late an invalidation comes after the write (BENCHMARKS.md),
// and this process's own writes that may change the top replace or drop the
// snapshot (hotSeen, hotDrop, hotForget).
const hotRecheck = 100 * time.Microsecond

// hotClockBase is the start of hotTop.now's monotonic clock.
var hotClockBase = time.Now()

// hotMonotonic is nanoseconds on the monotonic clock since hotClockBase:
// one clock read, where time.Now reads the wall clock too.
func hotMonotonic() int64 { return int64(time.Since(hotClockBase)) }

// hotSnap is what this process last saw of a period's mirror: whether a
// write may reach the top, guessed before it is sent.
// A snapshot from a cached read also keeps that read's text and its
// entries: the next read that gets the same text back (rueidis answers
// every hit on one cached reply with the same string, which compares at
// once) takes the entries decoded already and records nothing.
//
// A snapshot whose text a read found in rueidis's cache (a hit: rueidis
// holds it as current until Redis invalidates it) answers the reads that
// start within hotRecheck of that read's start from itself (hotRecent).
type hotSnap struct {
	members map[string]bool
	floor   float64      // the k-th stored value
	full    bool         // the mirror held k members
	text    string       // the mirror as a cached read gave it; "" from a rewrite
	es      []Entry      // text's entries, ranked
	expire  int64        // the period's expiry (target.expire): dropped after it
	hit     atomic.Int64 // hotTop.now at the start of the last read that found text in the cache; 0: none
}

// confirmed records a read of s's text that started at now, if it found
// the text in rueidis's cache: a read from Redis (a miss, or a client that
// does not cache) confirms nothing, as every read on a client without a
// cache must reach Redis.
func (s *hotSnap) confirmed(res rueidis.RedisResult, now int64) {
	if res.IsCacheHit() && now > s.hit.Load() {
		s.hit.Store(now)
	}
}

// sameText reports whether text is the mirror s was decoded from (a
// mirror's text is never "": it opens with its k).
func (s *hotSnap) sameText(text string) bool {
	return s.text == text
}

// hotTop is a board's mirror state: k, and the last snapshot of each
// readable period's mirror, by mirror key: a snapshot of a period past its
// expiry is dropped when another period's is first stored (hotSeenText),
// so a process that runs for years keeps a few a window, not one a
// period it ever wrote or read.
type hotTop struct {
	k     int
	snaps sync.Map     // string -> *hotSnap
	now   func() int64 // a monotonic clock in nanoseconds (hotMonotonic; tests stop it)
	reads atomic.Int32 // how the client reads a mirror: hotReadUnknown, hotReadCached or hotReadPlain (hotGet)
}

// How a board's client reads a mirror (hotTop.reads), learnt from its
// first read (hotFirstGet).
const (
	hotReadUnknown int32 = iota
	hotReadCached        // DoCache: the client caches
	hotReadPlain         // Do: the client does not cache (DisableCache)
)

// hotRecent is the entries of the snapshot of the mirror key that a read
// found in the cache less than hotRecheck before now; false if none.
func (lb *Leaderboard) hotRecent(key string, now int64) ([]Entry, bool) {
	if hotCoarseClock {
		return nil, false
	}
	v, ok := lb.hot.snaps.Load(key)
	if !ok {
		return nil, false
	}
	s := v.(*hotSnap)
	hit := s.hit.Load()
	if hit == 0 || now-hit >= int64(hotRecheck) || now < hit {
		return nil, false
	}
	return s.es, true
}

// hotKey is tg's mirror key, resolved with its period (resolve).
func (lb *Leaderboard) hotKey(tg target) string { return tg.hot }

// hotReadCmd is the cached read of the mirror key.
func (lb *Leaderboard) hotReadCmd(key string) rueidis.Cacheable {
	return lb.client.B().Get().Key(key).Cache()
}

// hotServes reports whether a read of count entries from position start
// (0-based) of tg comes from the mirror.
func (lb *Leaderboard) hotServes(tg target, start int64, count int) bool {
	return lb.hot != nil && !tg.data && start+int64(count) <= int64(lb.hot.k)
}

// hotFirst is Top(n) from tg's mirror (hotServes); false when the mirror
// cannot answer it (see hotEntries): the caller reads the period.
func (lb *Leaderboard) hotFirst(ctx context.Context, tg target, n int) ([]Entry, bool, error) {
	es, ok, err := lb.hotEntries(ctx, tg)
	if err != nil {
		return nil, true, wrap("top", err)
	}
	if !ok {
		return nil, false, nil
	}
	return slices.Clone(es[:min(n, len(es))]), true, nil
}

// hotEntries reads tg's mirror, ranked, through the client-side cache
// where the client has one (hotGet); a missing mirror (expired, deleted by
// a write, never built) is built from the period by hot_top.lua, which
// also answers it. The entries may
// be the snapshot's, shared by every read: read only; a caller copies what
// it returns (only that: a Top(3) of a mirror of 100 copies 3). False,
// with no entries, for a mirror another process's WithHotTop of another k
// wrote (a rollout of a new k): its writes keep it for its k, which may
// not cover this board's reads, so they read the period; such a mirror
// is left to its writers, not rebuilt by every read. False too for a
// missing mirror whose build Redis refuses (READONLY, OOM).
func (lb *Leaderboard) hotEntries(ctx context.Context, tg target) ([]Entry, bool, error) {
	key := lb.hotKey(tg)
	now := lb.hot.now()
	if es, ok := lb.hotRecent(key, now); ok {
		return es, true, nil
	}
	res := lb.hotGet(ctx, tg)
	text, err := res.ToString()
	if rueidis.IsRedisNil(err) {
		es, err := lb.be.hotRewrite(ctx, []target{tg})
		if redisErrorIs(err, "READONLY") || isOOM(err) {
			// The build is a write, which Redis refuses to a client that
			// reaches only a replica, and over its maxmemory: the period
			// itself answers (with WithReplicaReads no other read would).
			return nil, false, nil
		}
		if err != nil {
			return nil, true, err
		}
		lb.rankEntries(es, 0, 1)
		return es, true, nil
	}
	if err != nil {
		return nil, true, err
	}
	if v, ok := lb.hot.snaps.Load(key); ok && v.(*hotSnap).sameText(text) {
		v.(*hotSnap).confirmed(res, now)
		return v.(*hotSnap).es, true, nil
	}
	k, body, err := mirrorHead(text)
	if err != nil {
		return nil, true, err
	}
	if k != lb.hot.k {
		return nil, false, nil
	}
	es, err := mirrorEntries(body, k)
	if err != nil {
		return nil, true, err
	}
	for i := range es {
		es[i].Score = lb.plain(es[i].Score)
	}
	lb.rankEntries(es, 0, 1)
	lb.hotSeenText(tg, es, text).confirmed(res, now)
	return es, true, nil
}

// hotGet reads tg's mirror: through the client-side cache (DoCache) on a
// client that caches, and with a plain GET (Do) on one that does not. A
// client built with DisableCache must not be given DoCache: on a Cluster,
// a read that Redis redirects with ASK (its slot migrating) is sent as a
// cached read to a connection without a cache, whose reader then panics
// (rueidis v1.0.79, askingMultiCache), crashing the process. The board's
// first reads ask which the client is (hotFirstGet), until one has
// answered; the others pay one atomic load.
func (lb *Leaderboard) hotGet(ctx context.Context, tg target) rueidis.RedisResult {
	switch lb.hot.reads.Load() {
	case hotReadCached:
		return lb.client.DoCache(ctx, tg.hotRead, hotTTL)
	case hotReadPlain:
		// tg.hotRead is pinned (resolvePeriod): Do does not recycle it.
		return lb.client.Do(ctx, rueidis.Completed(tg.hotRead))
	}
	return lb.hotFirstGet(ctx, tg)
}

// hotFirstGet is hotGet while the board does not know whether its client
// caches: rueidis.MGetCache reads the mirror with a plain GET on a client
// of rueidis's built with DisableCache, and through the cache on any
// other; a read the cache kept carries its expiry in this process
// (CachePTTL), even a miss, where a plain read carries none. It is given
// the caller's client (callerClient), not the board's wrapper of it,
// which MGetCache would take for a client that caches. A caller's client that
// wraps rueidis's (a hook, a tracer) is read through the cache
// (DoMultiCache), which on a Cluster client with DisableCache can still
// meet the panic above, on this first read alone.
func (lb *Leaderboard) hotFirstGet(ctx context.Context, tg target) rueidis.RedisResult {
	got, err := rueidis.MGetCache(callerClient(lb.client), ctx, hotTTL, []string{tg.hot})
	if err != nil {
		return rueidis.NewErrorResult(err)
	}
	v := got[tg.hot]
	if err := v.Error(); err != nil && !rueidis.IsRedisNil(err) {
		return rueidis.NewResult(v, nil) // a refusal tells nothing of the client
	}
	if v.IsCacheHit() || v.CachePTTL() >= 0 {
		lb.hot.reads.Store(hotReadCached)
	} else {
		lb.hot.reads.Store(hotReadPlain)
	}
	return rueidis.NewResult(v, nil)
}

// hotCalls are the rewrites of tgs' mirrors (hot_top.lua), each of which
// answers the mirror's entries.
func (lb *Leaderboard) hotCalls(tgs []target) []scripts.Call {
	calls := make([]scripts.Call, len(tgs))
	for i, tg := range tgs {
		calls[i] = scripts.HotTopCall(lb.readHeader(), lb.hotKey(tg), lb.be.hotSets(tg), lb.hot.k, hotTTL.Milliseconds())
	}
	return calls
}

// hotRewriteAll is hotRewrite where one script reaches a period's every
// sorted set and its mirror: hot_top.lua, for each of tgs, in one round
// trip.
func (lb *Leaderboard) hotRewriteAll(ctx context.Context, tgs []target) ([]Entry, error) {
	return lb.hotRewritten(tgs, scripts.ExecMulti(ctx, lb.client, lb.hotCalls(tgs)))
}

// hotRewritten records what hotCalls' replies show of the mirrors, and
// returns the entries of the last one.
func (lb *Leaderboard) hotRewritten(tgs []target, res []rueidis.RedisResult) ([]Entry, error) {
	var es []Entry
	for i, tg := range tgs {
		v, err := res[i].ToArray()
		if err != nil {
			return nil, err
		}
		if es, err = lb.entries(v); err != nil {
			return nil, err
		}
		lb.hotSeen(tg, es)
	}
	return es, nil
}

// execThen runs a write's calls, then the calls of then (the rewrites or
// the deletes of top mirrors), in one round trip, and returns the results
// of each. The calls of then follow the write (scripts.Call.Follows): when
// the server had to load the write's script, or refused the write before
// running it (TRYAGAIN, LOADING) and it was sent again, they run again
// after it.
func (lb *Leaderboard) execThen(ctx context.Context, writes, then []scripts.Call) (w, a []rueidis.RedisResult) {
	if len(then) == 0 && len(writes) == 1 {
		return []rueidis.RedisResult{writes[0].Exec(ctx, lb.client)}, nil
	}
	for i := range then {
		then[i].Follows = true
	}
	res := scripts.ExecMulti(ctx, lb.client, slices.Concat(writes, then))
	return res[:len(writes)], res[len(writes):]
}

// withHot runs a write's calls and then the rewrites of the mirrors of hot,
// in one round trip (see execThen), and returns the write's results; a
// rewrite that failed is not the write's failure (hotLost).
func (lb *Leaderboard) withHot(ctx context.Context, writes []scripts.Call, hot []target) []rueidis.RedisResult {
	res, rewrites := lb.execThen(ctx, writes, lb.hotCalls(hot))
	if _, err := lb.hotRewritten(hot, rewrites); err != nil {
		lb.hotLost(ctx, hot)
	}
	return res
}

// hotLost deals with the upkeep of the mirrors of tgs (a rewrite, or a
// delete) failing after a write that may have applied: the network, or a
// ctx that ended between the write and a round trip after it. The write's
// answer stands: an error would read as "not written", and a retry would
// add an Accumulate score twice. The mirrors are deleted in one more round
// trip when that can be done (the next read builds them), else they trail
// the period until they expire (hotTTL), as after a crash between the
// write and their upkeep; this process forgets what it saw of them, so
// its next write expects the top. The delete is sent even when ctx has
// ended: a ctx that ends between the write and its upkeep is one of the
// failures this answers, and would stop the delete too.
func (lb *Leaderboard) hotLost(ctx context.Context, tgs []target) {
	if lb.hot == nil {
		return
	}
	lb.hotForget(tgs)
	_ = lb.be.dropHot(bestEffort(ctx), tgs) // see above
}

// hotFailed deals with a write to tgs that failed with err: a write Redis
// refused (isRefusal) wrote nothing, but any other failure (a reply lost
// to the network, a ctx that ended while the write was in flight, a later
// step of a write of several failing) may have come after the write, or a
// part of it, applied: its mirrors go as after an upkeep that failed
// (hotLost), since the rewrite or the delete that follows a write that
// succeeds is not sent.
func (lb *Leaderboard) hotFailed(ctx context.Context, tgs []target, err error) {
	if err != nil && lb.hot != nil && !isRefusal(err) {
		lb.hotLost(ctx, tgs)
	}
}

// hotSubmitFailed is hotFailed for a Submit's write to live whose round
// trip also rewrote the mirrors of hot after it (withHot): those hold what
// the write left, or withHot dropped them already (hotLost), so only the
// others go, and a write whose every mirror was in hot costs no more
// round trip than withHot's.
func (lb *Leaderboard) hotSubmitFailed(ctx context.Context, live, hot []target, err error) {
	if err == nil || lb.hot == nil {
		return
	}
	rest := slices.DeleteFunc(slices.Clone(live), func(tg target) bool { return holdsTarget(hot, tg) })
	if len(rest) > 0 {
		lb.hotFailed(ctx, rest, err)
	}
}

// hotForget drops this process's snapshots of tgs' mirrors.
func (lb *Leaderboard) hotForget(tgs []target) {
	for _, tg := range tgs {
		lb.hot.snaps.Delete(lb.hotKey(tg))
	}
}

// hotRewriteAfter rewrites tgs' mirrors after a write that reached them,
// in one round trip more (three on a sharded Cluster board: see
// hotRewrite); a failure is not the write's (hotLost).
func (lb *Leaderboard) hotRewriteAfter(ctx context.Context, tgs []target) {
	if _, err := lb.be.hotRewrite(ctx, tgs); err != nil {
		lb.hotLost(ctx, tgs)
	}
}

// execThenDrop runs a write's calls, then deletes the top mirrors of tgs
// (WithHotTop) that they may have changed, in one round trip (see
// execThen), and returns the write's results. For keys that share one
// node, where a rewrite reads the period in one script: a rewrite then
// ran wholly before the write, and its mirror goes, or wholly after it.
func (lb *Leaderboard) execThenDrop(ctx context.Context, writes []scripts.Call, tgs []target) []rueidis.RedisResult {
	var then []scripts.Call
	if lb.hot != nil && len(tgs) > 0 {
		// Built at each send: a command is recycled once sent, and a
		// follower may be sent twice.
		then = []scripts.Call{{Cmd: func() rueidis.Completed { return lb.hotDrop(tgs)[0] }}}
	}
	res, drops := lb.execThen(ctx, writes, then)
	if firstErr(drops) != nil {
		lb.hotLost(ctx, tgs) // the write may have applied: see hotLost
	}
	return res
}

// hotFollow rewrites, in one more round trip, the mirrors of the windows
// whose results show the write in their top k where it was not expected
// (rewritten holds those rewritten with the write); a rewrite that failed
// is not the write's failure (hotLost).
func (lb *Leaderboard) hotFollow(ctx context.Context, live []target, where []int, out []WindowResult, rewritten []target) {
	var late []target
	for j, tg := range live {
		if lb.hotReached(out[where[j]]) && !holdsTarget(rewritten, tg) {
			late = append(late, tg)
		}
	}
	if len(late) > 0 {
		lb.hotRewriteAfter(ctx, late)
	}
}

func holdsTarget(tgs []target, tg target) bool {
	for _, t := range tgs {
		if t.key == tg.key {
			return true
		}
	}
	return false
}

// hotExpected lists the live windows whose mirrors a submission is
// expected to change (hotLikely): they are rewritten after the write, in
// its round trip.
func (lb *Leaderboard) hotExpected(live []target, sub submission) []target {
	if lb.hot == nil {
		return nil
	}
	var out []target
	for _, tg := range live {
		if lb.hotLikely(tg, sub.member, sub.stored, sub.set) {
			out = append(out, tg)
		}
	}
	return out
}

// hotSeen records what a rewrite saw of tg's mirror.
func (lb *Leaderboard) hotSeen(tg target, es []Entry) {
	lb.hotSeenText(tg, es, "")
}

// hotSeenText is hotSeen of a cached read's text and its ranked entries
// es ("" and es for a rewrite's, which keeps no entries). The first
// snapshot of a period's mirror drops those of periods past their expiry.
func (lb *Leaderboard) hotSeenText(tg target, es []Entry, text string) *hotSnap {
	s := &hotSnap{members: make(map[string]bool, len(es)), full: len(es) >= lb.hot.k, expire: tg.expire}
	if text != "" {
		s.text, s.es = text, es // read only: hotFirst and hotPage copy
	}
	for _, e := range es {
		s.members[e.Member] = true
	}
	if s.full {
		s.floor = es[len(es)-1].Score
	}
	if _, had := lb.hot.snaps.Swap(lb.hotKey(tg), s); !had {
		lb.hotSweep()
	}
	return s
}

// hotSweep drops the snapshots of periods past their expiry on the
// board's clock: nothing reads or writes them any more (a read At one is
// ErrExpired). It runs once a period a window, as its first snapshot is
// stored.
func (lb *Leaderboard) hotSweep() {
	now := lb.now().UnixMilli()
	lb.hot.snaps.Range(func(key, v any) bool {
		if e := v.(*hotSnap).expire; e != 0 && e <= now {
			lb.hot.snaps.CompareAndDelete(key, v)
		}
		return true
	})
}

// hotLikely guesses, before a write is sent, whether it reaches tg's top
// k: when this process has not seen the mirror full, when the member is
// in it, or when the stored value the write brings is at least the k-th.
// An Accumulate total is unknown before the write: only the member's
// presence counts (a Set's value, set, is what it stores). A wrong guess
// costs a rewrite, or a round trip; never an answer.
func (lb *Leaderboard) hotLikely(tg target, member string, stored float64, set bool) bool {
	v, ok := lb.hot.snaps.Load(lb.hotKey(tg))
	if !ok {
		return true
	}
	s := v.(*hotSnap)
	switch {
	case !s.full || s.members[member]:
		return true
	case lb.policy == Accumulate && !set:
		return false // an increment: the total is Redis's
	case lb.high():
		return lb.plain(stored) >= s.floor
	}
	return lb.plain(stored) <= s.floor
}

// hotReached reports whether a write's window result shows it in the top k,
// before or after: then the mirror must be rewritten. A competition rank
// is at most the position, so it may say yes where the position would not,
// never the other way.
func (lb *Leaderboard) hotReached(wr WindowResult) bool { return lb.hotWithin(wr, 0) }

// hotWithin is hotReached for ranks that may each be off by up to slack
// (a sharded Cluster batch's: see batchHot). A Closed window has no ranks
// (closeWindow), and reaches no mirror: a turn on a period that is over
// would outlive it.
func (lb *Leaderboard) hotWithin(wr WindowResult, slack int64) bool {
	near := int64(lb.hot.k) + slack
	return (wr.Previous.Rank > 0 && wr.Previous.Rank <= near) || (wr.Standing.Rank > 0 && wr.Standing.Rank <= near)
}

// hotDrop deletes the mirrors of tgs: after a write that may change their
// tops and does not rewrite them.
func (lb *Leaderboard) hotDrop(tgs []target) rueidis.Commands {
	ks := lb.hotDropKeys(tgs)
	if len(ks) == 0 {
		return nil
	}
	return rueidis.Commands{lb.client.B().Unlink().Key(ks...).Build()}
}

// hotDropKeys lists the mirror keys of tgs for a write to delete, and drops
// this process's snapshots of them: a snapshot would answer reads
// (hotRecent) and guide writes (hotLikely) as if the mirrors were there.
// None without a hot top.
func (lb *Leaderboard) hotDropKeys(tgs []target) []string {
	if lb.hot == nil || len(tgs) == 0 {
		return nil
	}
	ks := make([]string, len(tgs))
	for i, tg := range tgs {
		ks[i] = lb.hotKey(tg)
	}
	lb.hotForget(tgs)
	return ks
}

// hotPage is a page within the top k: its entries from the mirror, and
// with total the period's count from the period (count: one ZCARD, or one
// a shard); false when the mirror cannot answer it (see hotEntries).
func (lb *Leaderboard) hotPage(ctx context.Context, tg target, start int64, size int, total bool,
	count func(context.Context, target) (int64, error)) (Page, bool, error) {
	es, ok, err := lb.hotEntries(ctx, tg)
	if err != nil || !ok {
		return Page{}, ok, err
	}
	lo := min(start, int64(len(es)))
	p := Page{Entries: slices.Clone(es[lo:min(lo+int64(size), int64(len(es)))])}
	if total {
		p.Total, err = count(ctx, tg)
	}
	return p, true, err
}
