package leaderboard

import (
	"context"
	"crypto/rand"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
)

// rebuildBatch is how many members one ZADD of a rebuild carries,
// rebuildPipeline how many such commands share a round trip (each with
// the PEXPIRE that gives its copy a life, freshLife), and
// rebuildInFlight how many round trips may be on their way while the next
// pipeline is read from the store (1 to 3 measured in BENCHMARKS.md).
const (
	rebuildBatch    = 1000
	rebuildPipeline = 16
	rebuildInFlight = 2
)

// RebuildOption configures Rebuild.
type RebuildOption func(*rebuildConfig)

type rebuildConfig struct {
	progress func(RebuildProgress)
}

// WithProgress calls fn as a rebuild goes: after every batch of members
// and at the end of every period, from the goroutine that called Rebuild.
// Default: no reports; a nil fn is the same. (A nil RebuildOption is
// refused by Rebuild with ErrInvalidArgument.)
func WithProgress(fn func(RebuildProgress)) RebuildOption {
	return func(c *rebuildConfig) { c.progress = fn }
}

// RebuildProgress tells how far a Rebuild is.
type RebuildProgress struct {
	// Window and Period name the period being rebuilt.
	Window, Period string
	// Members is how many members of that period are read from the store
	// and handed to Redis so far; they are all written when Done.
	Members int64
	// PeriodsDone counts the periods finished, of Periods in all.
	PeriodsDone, Periods int
	// Done reports that this period is finished and swapped in.
	Done bool
}

// RebuildReport is what Rebuild did.
type RebuildReport struct {
	// Periods is how many window periods were rebuilt.
	Periods int
	// Members is how many members were written, over all periods.
	Members int64
	// Refused lists "window/period/member" for the standings the board
	// cannot hold (an Accumulate total that overflowed, a score outside a
	// tie-break's range, a member Submit refuses), which were left out.
	Refused []string
}

// Present reports whether Redis still holds the board as last rebuilt: it
// looks for the marker that Rebuild writes and nothing else does, in every
// hash tag the board's keys use, so that a wipe (a restart without
// persistence, FLUSHALL, a failover to an empty replica) shows even after
// new submissions arrive, a wipe of one node of several included. An
// unsharded board's keys share one slot and one marker; a sharded board
// keeps one under its own tag, each shard's and each of its 128 partition
// groups' (README: "Keys and Redis version"), which a Cluster spreads over
// every node on purpose, so that a node that lost its part makes Present
// report false though the others kept theirs. During a move to new bounds
// (WithShadowShards) it checks the layout reads use: Rebuild and FillShadow
// mark the shadow's shards too, so that it covers them once reads move to
// them. It sees lost nodes, not a key deleted by hand beside a marker that
// stayed (Verify and Check compare contents), nor the last writes a
// failover lost (a primary's writes its replica had not received when it
// took over: the marker, older, survives; Verify reports them, naming the
// members Redis lacks or holds at another value and counting those it
// holds beyond the store, such as a lost Remove's; on a sharded board,
// shards that lost writes their partitions kept show in Check alone).
//
// A service calls it at start-up and on a timer, and calls Rebuild when it
// reports false. A board that was never rebuilt reports false: rebuild it
// once from its (possibly empty) store to start. So does a sharded board
// last rebuilt by a version that wrote only the board's own marker: rebuild
// it once after upgrading. One round trip: one EXISTS of the markers; on a
// sharded board on a Cluster one EXISTS a marker, in one DoMulti, which
// rueidis sends to their nodes at once. It reads the primaries, with
// WithReplicaReads too (in MULTIs of their own: see WithReplicaReads).
func (lb *Leaderboard) Present(ctx context.Context) (_ bool, err error) {
	defer endedWith(ctx, &err)
	if err := notStarted(ctx, "present"); err != nil {
		return false, err
	}
	groups := lb.be.markers(true, false)
	cmds := make(rueidis.Commands, len(groups))
	want := 0
	for i, ks := range groups {
		cmds[i] = lb.client.B().Exists().Key(ks...).Build()
		want += len(ks)
	}
	// From the primaries (WithReplicaReads): a replica trailing a Rebuild
	// would report false, and call for another, which may undo writes.
	found, err := int64s(lb.fromPrimaries(ctx, cmds))
	return err == nil && sum(found) == int64(want), wrap("present", err)
}

// Rebuild rebuilds every live period of every window (the current one,
// the closed ones still within their retention, and one starting within
// the clock skew, see WithClockSkew) from the store: each into
// fresh keys of its own, swapped in with RENAME, so readers see the old
// board or the new one, never a half-built one, and processes that
// rebuild at once (each finding Present false) each swap in a whole
// board; a rebuild cut short deletes its copies (one a write still in
// flight puts back expires within a day). Each period is read with
// Store.Standings naming the period (a store that keeps standings streams
// them best first); members are written in pipelined batches of 1,000,
// sent from other goroutines while the next are read; WithProgress reports
// how far it is. On a sharded board it
// rebuilds every shard and partition, and the shadow's shards while it has
// one (WithShadowShards) (each key's swap is atomic: one transaction for
// each key given members, 32 at a time, not all at once; the keys given
// none, most of a small period's 4,096 partitions, go in one round trip,
// one UNLINK a hash slot). Before the
// periods it gives Redis back its memory of the WithID ids the store
// received within the dedupe window, when the store is an IDKeeper (so
// that their retries are duplicates, see WithID, also a retry reaching
// Redis after its period was swapped in, whose score the rebuilt period
// holds; one reaching it before is replaced by the store's standings), and
// only those: an id the store does not hold (a board whose Delete failed
// in Redis after the store) is forgotten, so that its next submission
// counts in Redis as in the store; after the periods it writes the
// markers that Present looks for (the shadow's too). A rebuild cut short
// after the ids may leave a retry a duplicate whose score Redis lacks
// (a submission that returned ErrPending, a board wiped) until a Rebuild
// runs to its end.
// A period with members that the board's clock finds live but whose expiry
// Redis's own clock has passed (a board clock behind the server's, see
// WithClock) is gone as soon as it is swapped in, and the report does not
// count it; an empty one, which writes nothing, counts as any empty live
// period does.
//
// Writes that reach Redis while a period is being rebuilt (a Submit, a Set,
// a Remove, a RemoveBetween, a Reset) are in the store, but the swap may
// undo them in Redis, as it puts back what the store gave before them: run
// Rebuild before serving writes (at start-up, on Present reporting false),
// or run it again after.
// Without a store it returns ErrInvalidArgument.
func (lb *Leaderboard) Rebuild(ctx context.Context, opts ...RebuildOption) (_ RebuildReport, err error) {
	defer endedWith(ctx, &err)
	var cfg rebuildConfig
	for _, o := range opts {
		if o == nil {
			return RebuildReport{}, fmt.Errorf("%w: nil rebuild option", ErrInvalidArgument)
		}
		o(&cfg)
	}
	if lb.store == nil {
		return RebuildReport{}, fmt.Errorf("%w: Rebuild needs a store (WithStore)", ErrInvalidArgument)
	}
	if err := notStarted(ctx, "rebuild"); err != nil {
		return RebuildReport{}, err
	}
	now := lb.now()
	all, err := lb.livePeriods(now)
	if err != nil {
		return RebuildReport{}, err
	}
	// The ids go back first: a retry reaching Redis after its period was
	// swapped in must find its id there, else it is applied again on the
	// totals just rebuilt; one reaching it before a period is rebuilt is
	// replaced by the store's standings, which hold it once.
	if err := lb.restoreIDs(ctx, now); err != nil {
		return RebuildReport{}, err
	}
	var rep RebuildReport
	for i, tg := range all {
		n, gone, err := lb.rebuildPeriod(ctx, tg, &rep, func(members int64, done bool) {
			if cfg.progress != nil {
				cfg.progress(RebuildProgress{Window: tg.window.Name(), Period: tg.period.ID, Members: members,
					PeriodsDone: i + boolInt(done), Periods: len(all), Done: done})
			}
		})
		if err != nil {
			return rep, err
		}
		if !gone {
			rep.Periods++
			rep.Members += n
		}
	}
	// The markers go last, so that a rebuild cut short leaves a board
	// that lost a node reported absent.
	return rep, wrap("rebuild", lb.mark(ctx, lb.be.markers(true, true), now))
}

// restoreIDs gives Redis back its memory of the WithID ids the store
// received within the dedupe window, when the store can list them
// (IDKeeper): the scores Rebuild puts back include those submissions, so
// their retries must find them applied; it runs before the periods are
// rebuilt (see Rebuild), so that no retry finds a period rebuilt and its
// id not yet back. Each id goes to the id set a Submit of
// its member records it in (a sharded board keeps one a partition), and is
// forgotten when it would have been; ids the store does not hold are
// forgotten.
//
// Redis's memory is the store's, not more: an id the store does not hold
// (a board whose Delete reached the store and failed in Redis) would make
// Redis take its next submission for a duplicate that the store appends.
// Yet no id set is emptied first: a retry of an id Redis knew, reaching
// Redis before its id was put back, would be applied a second time (and
// counted twice until its period is rebuilt).
// Each set is copied (COPY, beside it in its slot) before the store is
// read; each id the store gives is put back and crossed out of the copy;
// what the copy holds then are ids Redis had before the store was read
// and the store lacks (a write records its id in Redis after the store
// appended it), which are removed from the set last (forgetStale).
func (lb *Leaderboard) restoreIDs(ctx context.Context, now time.Time) error {
	k, ok := lb.store.(IDKeeper)
	if !ok {
		return nil
	}
	seen := newFreshKeys()
	copied, err := lb.copyIDs(ctx, lb.be.idSets(), seen)
	if err != nil {
		return wrap("rebuild: ids", err)
	}
	pending := map[string][]string{} // id set -> ZADD arguments
	n := 0
	err = k.IDsSince(ctx, lb.name, now.Add(-lb.dedupe), func(id, member string, received time.Time) error {
		if !lb.idRemembered(received, now) {
			return nil
		}
		forget := lb.forgetMs(received)
		key := lb.be.idSet(member)
		pending[key] = append(pending[key], strconv.FormatInt(forget, 10), id)
		if n++; n == rebuildBatch {
			n = 0
			return lb.flushIDs(ctx, pending, seen)
		}
		return nil
	})
	if err == nil {
		err = lb.flushIDs(ctx, pending, seen)
	}
	if err == nil {
		err = lb.forgetStale(ctx, copied, seen)
	}
	return wrap("rebuild: ids", err)
}

// copyIDs copies each id set to seen's copy of it, in one DoMulti (of
// 8,192 commands on a sharded board, which the board's client sends in
// round trips of pipeChunk: see resending), and returns the sets it
// copied (a sharded board's partitions hold most of theirs only while ids
// come in). A copy lives freshLife: one a rebuild cut short leaves behind
// expires.
func (lb *Leaderboard) copyIDs(ctx context.Context, sets []string, seen freshKeys) ([]string, error) {
	b := lb.client.B()
	cmds := make(rueidis.Commands, 0, 2*len(sets))
	for _, key := range sets {
		cmds = append(cmds, b.Copy().Source(key).Destination(seen.of(key)).Replace().Build(),
			b.Pexpire().Key(seen.of(key)).Milliseconds(freshLife.Milliseconds()).Build())
	}
	res := lb.client.DoMulti(ctx, cmds...)
	var copied []string
	for i, key := range sets {
		n, err := res[2*i].AsInt64()
		if err == nil {
			err = res[2*i+1].Error()
		}
		if err != nil {
			return nil, err
		}
		if n == 1 {
			copied = append(copied, key)
		}
	}
	return copied, nil
}

// flushIDs writes the pending ids, each id set's in one ZADD, crosses them
// out of the set's copy in seen, in one DoMulti (a round trip a pipeChunk
// of commands), and empties pending.
func (lb *Leaderboard) flushIDs(ctx context.Context, pending map[string][]string, seen freshKeys) error {
	b := lb.client.B()
	// A set lives as long as its newest id: one a Submit records now is
	// forgotten the window after now, which no restored id outlives
	// (PEXPIRE GT, which would keep a later expiry, needs Redis 7). The
	// life is relative, by Redis's clock, as remember (writes.lua) sets
	// it: a board clock behind Redis's would have Redis delete a set at
	// once at an absolute time of its own.
	cmds := make(rueidis.Commands, 0, 3*len(pending))
	for key, args := range pending {
		ids := make([]string, 0, len(args)/2)
		for i := 1; i < len(args); i += 2 {
			ids = append(ids, args[i])
		}
		cmds = append(cmds, b.Arbitrary("ZADD").Keys(key).Args(args...).Build(),
			b.Pexpire().Key(key).Milliseconds(lb.dedupe.Milliseconds()).Build(),
			b.Zrem().Key(seen.of(key)).Member(ids...).Build())
		delete(pending, key)
	}
	return firstErr(lb.client.DoMulti(ctx, cmds...))
}

// forgetStale removes from each id set the ids left in its copy in seen,
// MaxN at a time from each copy, a round trip a step (one when none is
// left, as is usual); a copy taken to its end is gone (an empty sorted
// set is deleted).
func (lb *Leaderboard) forgetStale(ctx context.Context, sets []string, seen freshKeys) error {
	b := lb.client.B()
	var removes rueidis.Commands
	for len(sets) > 0 || len(removes) > 0 {
		cmds := removes
		for _, key := range sets {
			cmds = append(cmds, b.Zpopmin().Key(seen.of(key)).Count(MaxN).Build())
		}
		res := lb.client.DoMulti(ctx, cmds...)
		if err := firstErr(res); err != nil {
			return err
		}
		res = res[len(removes):]
		removes = nil
		var live []string
		for i, key := range sets {
			stale, err := res[i].AsZScores()
			if err != nil {
				return err
			}
			if len(stale) == MaxN {
				live = append(live, key)
			}
			if len(stale) > 0 {
				ids := make([]string, len(stale))
				for j, z := range stale {
					ids[j] = z.Member
				}
				removes = append(removes, b.Zrem().Key(key).Member(ids...).Build())
			}
		}
		sets = live
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// storedValue is what Redis holds for an aggregated standing: the score, or
// its tie-break composite. Under a tie-break Redis adds an Accumulate
// board's scores as integers of Decimals fraction digits, exactly, where a
// store adds them as float64s (0.1 + 0.2 = 0.30000000000000004): the
// store's total is first taken back to those digits (sumOfScaled), else
// Rebuild would refuse an acknowledged total and Verify report it. Under
// the other policies a standing is one submission's score, which passed
// scaled when it was submitted, and is checked as it is.
func (lb *Leaderboard) storedValue(st StoredStanding) (float64, error) {
	// A member Submit refuses (empty, over MaxMemberLen) is one no write
	// could have made: a store that streams it (a bug, a hand-edited row)
	// must not put in the board what the board refuses.
	if err := checkMember(st.Member); err != nil {
		return 0, err
	}
	if err := checkScore(st.Score); err != nil {
		return 0, err
	}
	score := st.Score
	if lb.tb != nil && lb.policy == Accumulate {
		score = lb.tb.sumOfScaled(score)
	}
	v, _, _, err := lb.storedOf(score, st.At)
	return v, err
}

func (lb *Leaderboard) query(tg target) StandingsQuery {
	return StandingsQuery{Board: lb.name, Policy: lb.policy, Order: lb.order, From: tg.period.Start, To: tg.period.End,
		Window: tg.window.Name(), Period: tg.period.ID}
}

// rebuildAdder queues one field of a key being rebuilt: keyIdx indexes
// rebuildKeys' zsets, or its hashes when hash is set.
type rebuildAdder func(keyIdx int, hash bool, field, value string) error

// freshKeys names the copies one rebuild of a period builds, beside the
// keys they replace (same hash tag): a suffix of its own, so that
// processes rebuilding the board at once (each finding Present false)
// never write into, delete or swap in each other's copy: each swaps in a
// whole board. A copy a rebuild cut short leaves behind expires
// (freshLife).
type freshKeys string

// newFreshKeys draws a rebuild's suffix (a variable for the tests, which
// name the copies).
var newFreshKeys = func() freshKeys { return freshKeys(rand.Text()[:12]) }

func (f freshKeys) of(key string) string { return key + ":rebuild:" + string(f) }

// freshLife is how long a copy lives before its swap: a rebuild that dies
// before it could delete its copies (dropCopies) leaves them to Redis,
// which frees them then.
const freshLife = 24 * time.Hour

// dropCopies deletes the copies of a rebuild cut short, once its writers
// stopped, even when its ctx ended (a write still in flight may put a
// piece back: it expires, freshLife): the copies of the keys given one
// (rebuildWrites.copied), one UNLINK a hash slot, so that even a sharded
// period whose 4,100 keys all got one takes some 140 commands, one round
// trip (the board's client would send more than pipeChunk in pieces).
func (lb *Leaderboard) dropCopies(ctx context.Context, fresh freshKeys, copied []string) {
	copies := make([]string, len(copied))
	for i, k := range copied {
		copies[i] = fresh.of(k)
	}
	lb.client.DoMulti(bestEffort(ctx), unlinkBySlot(lb.client.B(), copies)...)
}

// rebuildPeriod rebuilds tg's period and reports how many members it
// wrote, and gone when Redis deleted the period as its expiry was set
// (its clock past it: a board clock behind the server's, see WithClock):
// then nothing of it is left, and it counts as no period rebuilt.
func (lb *Leaderboard) rebuildPeriod(ctx context.Context, tg target, rep *RebuildReport, progress func(int64, bool)) (int64, bool, error) {
	zsets, hashes := lb.be.rebuildKeys(tg)
	fresh := newFreshKeys()
	// Commands go to Redis from the writer's goroutines while this one
	// reads on (see pipelineWriter).
	w := lb.startPipelineWriter(ctx, rebuildInFlight)
	defer w.stop()
	batch := newRebuildWrites(lb.client, fresh, zsets, hashes, w)
	var members int64
	err := lb.store.Standings(ctx, lb.query(tg), func(st StoredStanding) error {
		v, err := lb.storedValue(st)
		if err != nil { // no I/O there: each of its errors is a refusal
			rep.Refused = append(rep.Refused, tg.window.Name()+"/"+tg.period.ID+"/"+st.Member)
			return nil
		}
		if err := lb.be.rebuildAdd(st.Member, formatScore(v), v, batch.add); err != nil {
			return err
		}
		if members++; members%rebuildBatch == 0 {
			progress(members, false)
		}
		return nil
	})
	if err != nil {
		w.stop()
		lb.dropCopies(ctx, fresh, batch.copied())
		return members, false, wrap("rebuild "+tg.window.Name()+"/"+tg.period.ID, err)
	}
	// Every command must have reached Redis before the swap.
	if err := batch.finish(); err != nil {
		w.stop()
		lb.dropCopies(ctx, fresh, batch.copied())
		return members, false, wrap("rebuild", err)
	}
	// The swap: each fresh copy replaces its key in one step; the keys
	// given none (the period has no members, or that shard or partition
	// none) go.
	gone, err := lb.swapPeriod(ctx, fresh, batch.copied(), batch.uncopied(), tg.expire)
	if err != nil {
		// The keys not swapped yet keep their copies: they go too (a copy
		// swapped in is gone already, and its UNLINK finds nothing). The
		// keys swapped in or deleted may have changed the top: its mirror
		// goes.
		lb.dropCopies(ctx, fresh, batch.copied())
		lb.hotFailed(ctx, []target{tg}, err)
		return members, false, wrap("rebuild", err)
	}
	if !gone {
		if err := lb.dropRebuiltHot(ctx, tg); err != nil {
			return members, false, err
		}
	}
	progress(members, true)
	return members, gone, nil
}

// dropRebuiltHot deletes the top mirror (WithHotTop) of the old period tg
// after its swap; the next read builds it from the new one.
func (lb *Leaderboard) dropRebuiltHot(ctx context.Context, tg target) error {
	if err := lb.be.dropHot(ctx, []target{tg}); err != nil {
		lb.hotLost(ctx, []target{tg}) // once more, even when ctx has ended
		return wrap("rebuild", err)
	}
	return nil
}

// swapPeriod swaps in the copies of the keys in copied (swapAll) and
// deletes the keys in uncopied, whose period, shard or partition has no
// member in the store: a sharded period's key space is its 4,096
// partitions, of which a small period fills few, so these go in one
// round trip, one UNLINK a hash slot, and the swaps' cost follows the
// keys that hold data. The deletes go first: a swap that fails leaves no
// stale key beside the new ones. It reports gone as swapAll does: a
// period none of whose keys got a copy is never gone, as before (nothing
// takes its expiry).
func (lb *Leaderboard) swapPeriod(ctx context.Context, fresh freshKeys, copied, uncopied []string, expire int64) (bool, error) {
	// None to delete sends nothing (the board's client sends no empty call).
	if err := firstErr(lb.client.DoMulti(ctx, unlinkBySlot(lb.client.B(), uncopied)...)); err != nil {
		return false, err
	}
	return lb.swapAll(ctx, fresh, copied, expire)
}

// swapParallel is how many swaps run at once: a sharded period of many
// members swaps thousands of keys (its partitions), one transaction each.
const swapParallel = 32

// swapAll swaps every key of all in, one transaction a key (on a Cluster
// the keys of a sharded board live in different slots, which one
// transaction may not mix), swapParallel at a time. It reports gone when
// Redis deleted a key as its expiry was set: every key of the period
// carries the same expiry, so the period is over by Redis's clock.
func (lb *Leaderboard) swapAll(parent context.Context, fresh freshKeys, all []string, expire int64) (bool, error) {
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	next := make(chan string)
	errs := make(chan error, swapParallel)
	var gone atomic.Bool
	for range min(swapParallel, len(all)) {
		go func() {
			var err error
			for k := range next {
				if err == nil {
					var g bool
					if g, err = lb.swap(ctx, fresh, k, expire); err != nil {
						cancel()
					} else if g {
						gone.Store(true)
					}
				}
			}
			errs <- err
		}()
	}
	for _, k := range all {
		if ctx.Err() != nil {
			break
		}
		next <- k
	}
	close(next)
	var first error
	for range min(swapParallel, len(all)) {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		first = parent.Err() // cancelled before every key was sent
	}
	return gone.Load(), first
}

// rebuildWrites gathers a rebuild's writes: one argument list per key being
// built, a full one (rebuildBatch members) becoming one ZADD or HSET of the
// fresh key, and rebuildPipeline such commands one pipeline for the writer.
// It records which keys got a copy (zsetCopied, hashCopied): the swap
// needs a transaction for those alone.
type rebuildWrites struct {
	b                      rueidis.Builder
	fresh                  freshKeys
	zsets, hashes          []string
	zadd, hset             [][]string
	zsetCopied, hashCopied []bool
	pending                rueidis.Commands
	w                      *pipelineWriter
}

func newRebuildWrites(c rueidis.Client, fresh freshKeys, zsets, hashes []string, w *pipelineWriter) *rebuildWrites {
	return &rebuildWrites{b: c.B(), fresh: fresh, zsets: zsets, hashes: hashes, zadd: make([][]string, len(zsets)),
		hset: make([][]string, len(hashes)), zsetCopied: make([]bool, len(zsets)), hashCopied: make([]bool, len(hashes)),
		pending: make(rueidis.Commands, 0, 2*rebuildPipeline), w: w}
}

// copied lists the keys a write was queued for, whose copy may exist;
// uncopied the others, which have none.
func (r *rebuildWrites) copied() []string { return r.keys(true) }

func (r *rebuildWrites) uncopied() []string { return r.keys(false) }

func (r *rebuildWrites) keys(copied bool) []string {
	var out []string
	for i, k := range r.zsets {
		if r.zsetCopied[i] == copied {
			out = append(out, k)
		}
	}
	for i, k := range r.hashes {
		if r.hashCopied[i] == copied {
			out = append(out, k)
		}
	}
	return out
}

// add is a rebuildAdder: it queues field and value for a key.
func (r *rebuildWrites) add(keyIdx int, hash bool, field, value string) error {
	var list *[]string
	if hash {
		list = &r.hset[keyIdx]
		*list = append(*list, field, value)
	} else {
		list = &r.zadd[keyIdx]
		*list = append(*list, value, field)
	}
	if len(*list) < 2*rebuildBatch {
		return nil
	}
	r.queue(keyIdx, hash, *list)
	*list = (*list)[:0]
	if len(r.pending) >= 2*rebuildPipeline {
		return r.flush()
	}
	return nil
}

// queue adds one key's write to the pipeline (copying the arguments, so
// the list can be reused after it), each followed by the copy's life: a
// write still in flight when a failed rebuild deletes its copies
// (dropCopies) may create one again, which then expires.
func (r *rebuildWrites) queue(keyIdx int, hash bool, list []string) {
	name, verb, copied := r.zsets, "ZADD", r.zsetCopied
	if hash {
		name, verb, copied = r.hashes, "HSET", r.hashCopied
	}
	copied[keyIdx] = true
	key := r.fresh.of(name[keyIdx])
	r.pending = append(r.pending, r.b.Arbitrary(verb).Keys(key).Args(list...).Build(),
		r.b.Pexpire().Key(key).Milliseconds(freshLife.Milliseconds()).Build())
}

// flush hands the pending pipeline to the writer, which owns it from then.
func (r *rebuildWrites) flush() error {
	if len(r.pending) == 0 {
		return nil
	}
	err := r.w.send(r.pending)
	r.pending = make(rueidis.Commands, 0, 2*rebuildPipeline)
	return err
}

// finish sends what is left of every list and waits until the writer has
// written everything.
func (r *rebuildWrites) finish() error {
	for i, list := range r.zadd {
		if len(list) > 0 {
			r.queue(i, false, list)
		}
	}
	for i, list := range r.hset {
		if len(list) > 0 {
			r.queue(i, true, list)
		}
	}
	if err := r.flush(); err != nil {
		return err
	}
	return r.w.finish()
}

// swap replaces key with its fresh copy in one transaction: UNLINK the
// key, RENAME the copy over it, set the expiry. A copy that is gone
// (evicted; a key without one is not swapped, see swapPeriod) makes
// RENAME fail inside the transaction, which runs the rest all the same,
// so the UNLINK leaves the key gone; any other error inside it is
// returned. No script: a transaction does it.
// It reports gone when Redis deleted the key as its expiry was set (the
// expiry found the key, and EXISTS then did not): its clock had passed it.
func (lb *Leaderboard) swap(ctx context.Context, fresh freshKeys, key string, expire int64) (bool, error) {
	b := lb.client.B()
	cmds := rueidis.Commands{
		b.Multi().Build(),
		// UNLINK, not DEL: freeing a large old set would block Redis for
		// seconds (3.7 s at 10M members, BENCHMARKS.md).
		b.Unlink().Key(key).Build(),
		b.Rename().Key(fresh.of(key)).Newkey(key).Build(),
	}
	if expire != 0 {
		cmds = append(cmds, expireGone(b, key, expire)...)
	} else {
		// RENAME keeps the copy's life (freshLife): a key that never
		// expires loses it.
		cmds = append(cmds, b.Persist().Key(key).Build())
	}
	res := lb.client.DoMulti(ctx, append(cmds, b.Exec().Build())...)
	for _, r := range res[:len(res)-1] {
		if err := r.Error(); err != nil {
			return false, err
		}
	}
	replies, err := res[len(res)-1].ToArray()
	if err != nil {
		return false, err
	}
	for i, r := range replies {
		err := r.Error()
		if err != nil && !(i == 1 && strings.Contains(err.Error(), "no such key")) {
			return false, err
		}
	}
	if expire == 0 {
		return false, nil
	}
	return goneAfter(replies, 2)
}
