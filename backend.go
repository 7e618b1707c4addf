package leaderboard

import (
	"context"
	"math"
	"sync/atomic"

	"github.com/redis/rueidis"
)

// backend is where a board's standings live in Redis and how each
// operation reads and writes them: one implementation for each kind of
// board, chosen once in New (newBackend). The exported methods are fronts:
// they validate, encode (tie-breaks), reach the store where there is one,
// and make one call here. So the kind of board is decided in one place,
// and the compiler makes every kind implement every operation.
type backend interface {
	// submit writes one checked submission to every live window period,
	// reports each window into out (live[j] into out[where[j]]) and whether
	// its WithID id was applied before (nothing written then). It takes the
	// windows, not the Result, so that Submit's Result stays on its stack.
	submit(ctx context.Context, sub submission, live []target, where []int, out []WindowResult) (duplicate bool, err error)
	// submitBatch writes a Batcher's folded writes, each as submit writes
	// one (all its windows or none), reporting each into its out and a
	// refusal or failure of its own into its err; the error is the batch's
	// when its writes failed together (none written, or, between a
	// Cluster's two steps, not known which).
	submitBatch(ctx context.Context, ws []*batchWrite) error
	// submitMany writes a checked bulk load; slot is the tie-break's time
	// slot of the board's clock.
	submitMany(ctx context.Context, scores map[string]float64, live []target, slot int64) error
	// set stores sub's value (Set: whatever the policy) in tg alone.
	set(ctx context.Context, tg target, sub submission) error
	// remove deletes members from the live periods.
	remove(ctx context.Context, live []target, members []string) error
	// dropBetween removes up to n members within r from tg, and reports
	// whether some are left; evict removes from tg alone those of members
	// whose stored values lie within r (a sharded dropBetween's read
	// range; every value, anyScore, for members a store recorded the
	// removal of), and reports how many. Both keep the members' data
	// (RemoveBetween).
	dropBetween(ctx context.Context, tg target, r scoreRange, n int) (removed int64, more bool, err error)
	evict(ctx context.Context, tg target, r scoreRange, members []string) (int64, error)
	// membersBetween reads the members of up to the n best entries within
	// r from tg, each once, where writes go (see fromPrimaries: what a
	// RemoveBetween removes), and reports whether r holds more than those.
	membersBetween(ctx context.Context, tg target, r scoreRange, n int) (members []string, more bool, err error)
	// evictChunk is how many members a RemoveBetween with a store reads,
	// records and evicts at a time: as many as one evict removes without
	// holding Redis long.
	evictChunk() int

	// top, rank, around and page read one period as Top, Rank, Around and
	// Page describe, their arguments already checked; page reads count
	// entries from the board position start (0-based) and, with total
	// (Page; Range does not ask), the period's count, for Page and Range,
	// which set Number and Size and name the operation in its errors. A
	// backend may fill the count without being asked.
	top(ctx context.Context, tg target, n int) ([]Entry, error)
	rank(ctx context.Context, tg target, member string) (Standing, error)
	// cutoff reads the entry Cutoff describes: none in an empty period.
	cutoff(ctx context.Context, tg target, percent float64) ([]Entry, error)
	// ranks reads members' standings as Ranks describes.
	ranks(ctx context.Context, tg target, members []string) ([]Standing, error)
	around(ctx context.Context, tg target, member string, radius int) ([]Entry, error)
	page(ctx context.Context, tg target, start int64, count int, total bool) (Page, error)
	// between reads up to n entries within r, best first, ranked;
	// countBetween counts them. aroundScore reads AroundScore's place and
	// slice, given the score's stored bound toward the better end (edge).
	between(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error)
	countBetween(ctx context.Context, tg target, r scoreRange) (int64, error)
	aroundScore(ctx context.Context, tg target, edge string, score float64, radius int) (int64, []Entry, error)
	// walk reads All's chunk of up to n entries after the cursor, and
	// where the next resumes.
	walk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error)
	// among reads the stored values of members (composites under a
	// tie-break, in Entry.Score) that have one; Among sorts and ranks them.
	among(ctx context.Context, tg target, members []string) ([]Entry, error)
	// count is the period's member count; counts those of several
	// periods, in one round trip.
	count(ctx context.Context, tg target) (int64, error)
	counts(ctx context.Context, tgs []target) ([]int64, error)
	// clear deletes every key of the periods tgs in one round trip; with
	// board, also the keys that are the board's, not a period's (ids,
	// member data, clocks, every one of Rebuild's markers).
	clear(ctx context.Context, tgs []target, board bool) error
	// markers lists the keys of Rebuild's marker (see Present), one in
	// every hash tag the board's keys use, so that a node that lost its
	// part of the board lost one too: with board, the board's own and on a
	// sharded board each shard's and each partition group's; with shadow,
	// the shadow layout's shards' (WithShadowShards), which Rebuild and
	// FillShadow write and Present does not check (no read uses them). Each
	// group is keys one command may name (one EXISTS, one MSET): all on one
	// node, one on a Cluster.
	markers(board, shadow bool) [][]string
	// entriesAt reads the entries at positions (0-based, board order) in
	// one pass: a sample, not a snapshot (ProposeBounds). A position past
	// the end has no entry.
	entriesAt(ctx context.Context, tg target, positions []int64) ([]Entry, error)
	// check compares a period's layout (and its shadow's, after it) with
	// its truth, repairing it on request (see Check).
	check(ctx context.Context, tg target, repair bool) ([]CheckReport, error)
	// fillShadow builds a period's shadow layout (WithShadowShards) from
	// its truth and returns the members filled; dropShadow deletes it.
	fillShadow(ctx context.Context, tg target) (int64, error)
	dropShadow(ctx context.Context, tg target) error

	// hotRewrite rewrites the top mirrors of tgs (WithHotTop) from their
	// periods, records what it saw of them, and returns the entries of the
	// last, unranked; dropHot deletes them, after a write
	// that may have changed their tops and does not rewrite them.
	hotRewrite(ctx context.Context, tgs []target) ([]Entry, error)
	dropHot(ctx context.Context, tgs []target) error
	// hotSets lists the sorted sets one script (hot_top.lua) copies tg's
	// first k from into its mirror, best first, where one script reaches
	// them all (not a sharded board on a Cluster: see hotRewrite).
	hotSets(tg target) []string

	// idSet is the key of the id set a Submit of member records its WithID
	// id in (Rebuild restores ids there); dataKey the hash that holds
	// member's data (WithData).
	idSet(member string) string
	dataKey(member string) string
	// idSets lists every id set of the board.
	idSets() []string

	// rebuildKeys lists the sorted sets and the hashes a rebuild of tg
	// writes; rebuildAdd queues with add what one standing (its stored
	// value v, formatted as value) puts into them.
	rebuildKeys(tg target) (zsets, hashes []string)
	rebuildAdd(member, value string, v float64, add rebuildAdder) error
	// stored reads the stored values of members (nil where none), in one
	// round trip: Among and Verify.
	stored(ctx context.Context, tg target, members []string) ([]rueidis.RedisMessage, error)
	// layoutKeys are the keys of a window's period that the board's layout
	// adds (a sharded board's shards, by shard, and its shadow layout's),
	// which resolve keeps in the period's target; nil for none.
	layoutKeys(window, period string) (shards, shadow []string)
}

// newBackend picks the board's backend: plain without bounds; sharded with
// them, working every shard of a write in one script where all keys share
// one node, and in two steps on a Cluster; with a shadow layout
// (WithShadowShards) that every write also keeps.
func newBackend(lb *Leaderboard) backend {
	if len(lb.bounds) == 0 {
		return &plainBackend{Leaderboard: lb}
	}
	sb := newSharded(lb, lb.bounds)
	if len(lb.shadowBounds) > 0 {
		sb.shadow = newSharded(lb, lb.shadowBounds)
		sb.shadow.isShadow = true
	}
	return sb
}

// newSharded is the sharded backend of one layout: the board's shards
// split at bounds.
func newSharded(lb *Leaderboard, bounds []float64) *shardedBackend {
	sb := &shardedBackend{Leaderboard: lb, bounds: bounds, cluster: lb.client.Mode() == rueidis.ClientModeCluster,
		shards: lb.keys.Shards(bounds), parts: lb.keys.Partitions(), bestFirst: bestFirstOf(len(bounds)+1, lb.high()),
		bestHolds: map[string]*atomic.Int64{}, seenCards: newSeenCards(lb)}
	sb.scale, sb.boundArgs = formatBounds(lb, bounds)
	for _, w := range lb.windows {
		h := &atomic.Int64{}
		h.Store(math.MaxInt64) // unknown: try the best shard alone first
		sb.bestHolds[w.Name()] = h
	}
	return sb
}
