package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// WithShadowShards gives a sharded board a second layout, its shards split
// at other bounds (k strictly ascending, finite, each shard holding a score
// the board's tie-break stores, as WithShards takes them),
// which every write keeps current beside the board's own and which no read
// uses: the way to move a live board to new bounds with no moment of wrong
// reads, in three deploys (README: "Changing bounds"):
//
//  1. every process runs WithShards(old...), WithShadowShards(new...); then
//     FillShadow builds the new layout of every live period from the
//     partitions, and Check (which also checks the shadow) reports it clean;
//  2. every process runs WithShards(new...), WithShadowShards(old...): reads
//     move to the new layout while the old one stays current for the
//     processes not yet deployed;
//  3. every process runs WithShards(new...); then DropShadow, run once with
//     step 2's options, deletes the old layout.
//
// The shards of each layout carry the layout's name in their hash tags
// (keys.Layout of its bounds), so the two never share a key; the partitions,
// ids and clocks are the board's and serve both. A write costs what it
// costs plus the shadow's share in the same round trips: on one node one
// more script in the same round trip, which puts each written member into
// its shard of the shadow from its partition (sweeping the shadow's other
// shards); on a Cluster the same versioned shard writes for the shadow's
// shards, beside the board's, with the same upkeep of what a write that
// died between its steps left behind: a Submit also reads its member's
// score in the shadow's other shards and sweeps a copy it finds there (a
// Batcher's batch sweeps them), and one that changes nothing checks the
// member's shadow shard against its partition, so that its next Submit,
// or a WithID retry, repairs both layouts. Default: none. New refuses it, with
// ErrInvalidArgument, on an unsharded board, without bounds, with the
// board's own bounds, or with bounds whose layout name collides with the
// board's (odds of about one in two billion; move a bound by a float64 step).
func WithShadowShards(bounds ...float64) Option {
	return func(c *config) {
		c.shadow = append([]float64{}, bounds...)
		c.errs = append(c.errs, boundsErrs("WithShadowShards", bounds)...)
	}
}

// validateShadow checks WithShadowShards against WithShards.
func (c *config) validateShadow() error {
	switch {
	case c.shadow == nil:
		return nil
	case len(c.shards) == 0:
		return errors.New("WithShadowShards needs WithShards: a shadow is filled from a sharded board's partitions")
	case len(c.shadow) == 0:
		return errors.New("WithShadowShards needs at least one bound")
	case slices.Equal(c.shards, c.shadow):
		return fmt.Errorf("WithShadowShards: bounds %v are the board's own", c.shadow)
	case keys.Layout(c.shards) == keys.Layout(c.shadow):
		return fmt.Errorf("WithShadowShards: bounds %v and the board's %v share the layout name %s; move one bound by a float64 step", c.shadow, c.shards, keys.Layout(c.shadow))
	}
	return nil
}

// ShadowReport is what FillShadow did.
type ShadowReport struct {
	// Periods is the number of window periods filled: every window's current
	// period, the closed ones within their retention, and one starting
	// within the clock skew (see WithClockSkew).
	Periods int
	// Members is the number of members filled, all periods summed.
	Members int64
}

// FillShadow builds the shadow layout (WithShadowShards) of every live period
// of every window (the current one, the closed ones within their retention, and
// one starting within the clock skew) from the partitions, which hold every
// member's stored value: it deletes the period's shadow shards, then reads the
// partitions' members 32 partitions a round trip (from the primaries, with
// WithReplicaReads too) and puts them into the shadow 1,000 at a time, as Check
// repairs members (on a Cluster with new versions, so that a write in flight
// never loses to the fill). Writes may go on meanwhile: they keep the shadow
// current themselves, provided every process writing the board runs with the
// same WithShadowShards before FillShadow starts (a process without it leaves
// the shadow behind, which Check then reports). Its cost is one partition read
// per member and one shard write per member; on one node each member is also
// swept from the shadow's other shards. When every period is filled it writes
// the shadow's shards' share of Rebuild's marker (deleted with the shards
// first), so that Present covers them once reads move to them. Run it from a
// maintenance job, then Check. Run it with step 1's options only: while it
// runs, the layout it fills is missing members, so no process may read it;
// with step 2's options it would empty the old layout under the processes
// of step 1 still reading it (there, Check with repair brings a layout
// left behind up to the partitions). Without WithShadowShards it returns
// ErrInvalidArgument.
func (lb *Leaderboard) FillShadow(ctx context.Context) (_ ShadowReport, err error) {
	defer endedWith(ctx, &err)
	live, err := lb.livePeriods(lb.now())
	if err != nil {
		return ShadowReport{}, err
	}
	if len(lb.shadowBounds) == 0 {
		return ShadowReport{}, errNoShadow // bad configuration first, before ctx
	}
	if err := notStarted(ctx, "fill shadow"); err != nil {
		return ShadowReport{}, err
	}
	var rep ShadowReport
	for _, tg := range live {
		n, err := lb.be.fillShadow(ctx, tg)
		if err != nil {
			return rep, wrap("fill shadow", err)
		}
		rep.Periods++
		rep.Members += n
	}
	// Present checks the shadow's markers once it is the board's layout
	// (step 2): without them it would report false, and a Rebuild of a
	// board taking writes would replace the writes in flight.
	return rep, wrap("fill shadow", lb.mark(ctx, lb.be.markers(false, true), lb.now()))
}

// DropShadow deletes the shadow layout (WithShadowShards) of every live
// period: its shards and their recent versions, and its shards' markers
// (see Present), with UNLINK (Redis frees
// the memory in the background), one round trip a period. It is step 3 of a
// move to new bounds (see WithShadowShards): run it once every process has
// stopped reading and writing the shadow, from a program with step 2's
// options. Without WithShadowShards it returns ErrInvalidArgument.
func (lb *Leaderboard) DropShadow(ctx context.Context) (err error) {
	defer endedWith(ctx, &err)
	live, err := lb.livePeriods(lb.now())
	if err != nil {
		return err
	}
	if len(lb.shadowBounds) == 0 {
		return errNoShadow // bad configuration first, before ctx
	}
	if err := notStarted(ctx, "drop shadow"); err != nil {
		return err
	}
	for _, tg := range live {
		if err := lb.be.dropShadow(ctx, tg); err != nil {
			return wrap("drop shadow", err)
		}
	}
	return nil
}

// errNoShadow is what FillShadow and DropShadow return without a shadow.
var errNoShadow = fmt.Errorf("%w: needs WithShards and WithShadowShards", ErrInvalidArgument)

// fillParts is how many partitions' members fillShadow reads a round trip;
// fillBatch how many members it puts into the shadow a call.
const (
	fillParts = 32
	fillBatch = 1000
)

func (lb *shardedBackend) fillShadow(ctx context.Context, tg target) (int64, error) {
	sh := lb.shadow
	if sh == nil {
		return 0, errNoShadow
	}
	// The recent versions stay: they keep a write in flight from applying
	// over a newer one (see versions.lua). The markers go until the fill is
	// done (FillShadow), so that one cut short leaves none.
	if err := sh.unlinkShards(ctx, tg, false); err != nil {
		return 0, err
	}
	var filled int64
	for first := 0; first < lb.parts.Len(); first += fillParts {
		cmds := make(rueidis.Commands, 0, fillParts)
		for p := first; p < min(first+fillParts, lb.parts.Len()); p++ {
			cmds = append(cmds, lb.client.B().Hkeys().Key(lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID)).Build())
		}
		var members []string
		for _, r := range lb.fromPrimaries(ctx, cmds) {
			ms, err := r.AsStrSlice()
			if err != nil {
				return filled, err
			}
			members = append(members, ms...)
		}
		for len(members) > 0 {
			batch := members[:min(fillBatch, len(members))]
			members = members[len(batch):]
			if err := sh.fill(ctx, tg, batch); err != nil {
				return filled, err
			}
			filled += int64(len(batch))
		}
	}
	return filled, nil
}

// fill puts members into this layout's shards from their partitions: on
// one node as Check repairs them (shard_local_many.lua), sweeping every
// other shard; on a Cluster with new versions, into the right shard only
// (fillShadow deleted the shards first: a copy elsewhere can only come from
// a write that crashed between its steps meanwhile, which Check finds).
func (lb *shardedBackend) fill(ctx context.Context, tg target, members []string) error {
	if !lb.cluster {
		return lb.manyLocal(ctx, "repair", []target{tg}, members, nil, 0)
	}
	return lb.repairCluster(ctx, tg, members, map[string][]int{}, true) // no shard holds a copy
}

func (lb *shardedBackend) dropShadow(ctx context.Context, tg target) error {
	if lb.shadow == nil {
		return errNoShadow
	}
	return lb.shadow.unlinkShards(ctx, tg, true)
}

// unlinkShards deletes this layout's shards of tg, with recent their
// recent versions too, and the shards' markers (see Present), in one round
// trip.
func (lb *shardedBackend) unlinkShards(ctx context.Context, tg target, recent bool) error {
	return lb.unlink(ctx, slices.Values([][]string{lb.shardMarkers(lb.shardKeys(nil, tg, recent))}))
}

// shardKeys appends to ks this layout's shards of tg, with recent their
// recent versions too: on a Cluster only, the one place they are written
// (on one node they would be 2,048 UNLINKed keys a shard that never exist).
func (lb *shardedBackend) shardKeys(ks []string, tg target, recent bool) []string {
	for _, key := range lb.periodShardKeys(tg) {
		ks = append(ks, key)
		if recent && lb.cluster {
			ks = keys.AllRecent(ks, key)
		}
	}
	return ks
}

// unlink deletes the keys of groups, in one DoMulti up to unlinkChunk
// keys, and one more for each unlinkChunk keys after, one after another;
// it stops at the first error. On one node each group is one UNLINK,
// atomic: a write there is one script over its partition and shards, and lands wholly
// before or wholly after it, so a group of a period's shards and
// partitions leaves them agreeing (a pipeline of UNLINKs let writes run
// between a partition's and a shard's, leaving members in two shards or in
// no partition); a group a period also bounds how long one UNLINK holds
// Redis. A Cluster takes one UNLINK of each hash slot's keys in a
// DoMulti (a shard's 2,049 with its recent versions), spread over the
// nodes: no atomicity across them. groups may reuse the slice it yields.
func (lb *shardedBackend) unlink(ctx context.Context, groups iter.Seq[[]string]) error {
	return lb.unlinkThen(ctx, groups, nil, nil)
}

// unlinkThen is unlink, then the commands of last in its final DoMulti
// (none after a failure), whose first error it puts in lastErr: an
// upkeep's failure (a top mirror's delete), not the keys'. They follow
// the UNLINKs (scripts.Call.Follows): sent again after one sent again.
func (lb *shardedBackend) unlinkThen(ctx context.Context, groups iter.Seq[[]string], last rueidis.Commands, lastErr *error) error {
	final := func(cmds rueidis.Commands) error {
		var follows []bool
		if len(last) > 0 {
			follows = make([]bool, len(cmds)+len(last))
			for i := len(cmds); i < len(follows); i++ {
				follows[i] = true
			}
		}
		res := scripts.DoMulti(ctx, lb.client, follows, append(cmds, last...)...)
		if len(last) > 0 {
			*lastErr = firstErr(res[len(cmds):])
		}
		return firstErr(res[:len(cmds)])
	}
	if !lb.cluster {
		var cmds rueidis.Commands
		n := 0
		for ks := range groups {
			if n >= unlinkChunk {
				if err := firstErr(lb.client.DoMulti(ctx, cmds...)); err != nil {
					return err
				}
				cmds, n = cmds[:0], 0
			}
			if len(ks) > 0 {
				cmds = append(cmds, lb.client.B().Unlink().Key(ks...).Build())
				n += len(ks)
			}
		}
		return final(cmds)
	}
	var pending []string
	for ks := range groups {
		if len(pending) >= unlinkChunk {
			if err := firstErr(lb.client.DoMulti(ctx, unlinkBySlot(lb.client.B(), pending)...)); err != nil {
				return err
			}
			pending = pending[:0]
		}
		pending = append(pending, ks...)
	}
	return final(unlinkBySlot(lb.client.B(), pending))
}

// unlinkBySlot is one UNLINK of each hash slot's keys of ks, the slots in
// the order their first key came: what a Cluster takes, and a pipeline of
// fewer commands on one node (rueidis gives a pipeline of 2,000 commands
// or more a dedicated connection).
func unlinkBySlot(b rueidis.Builder, ks []string) rueidis.Commands {
	bySlot := map[int][]string{}
	var slots []int
	for _, k := range ks {
		s := keys.Slot(k)
		if _, ok := bySlot[s]; !ok {
			slots = append(slots, s)
		}
		bySlot[s] = append(bySlot[s], k)
	}
	cmds := make(rueidis.Commands, len(slots))
	for i, s := range slots {
		cmds[i] = b.Unlink().Key(bySlot[s]...).Build()
	}
	return cmds
}

// unlinkChunk is about the most keys one DoMulti of unlink names (it
// sends a period's keys whole): a board kept for years names millions,
// more than one pipeline can send within a client's write timeout
// (rueidis's ConnWriteTimeout, 10 s by default: 22 million keys missed it
// here, 1.2 million did not), and more than memory should hold at once.
const unlinkChunk = 500_000

// withShadowLocal appends to a one-node write's calls the shadow's share:
// members put into their shadow shards from their partitions, after the
// write (a pipeline, not a transaction: each call re-reads the partition,
// so the shadow ends as the partitions are whatever runs between).
func (lb *shardedBackend) withShadowLocal(calls []scripts.Call, live []target, members []string) []scripts.Call {
	if lb.shadow == nil {
		return calls
	}
	repair := lb.shadow.manyLocalCall("repair", live, members, nil, 0)
	repair.Follows = true // it copies what the write wrote: see scripts.Call
	return append(calls, repair)
}

// addShadow queues the shadow's share of a Cluster write: ops of the
// shadow's bounds, from the partitions' rows, with the rows' versions
// (rowOps: the puts and deletes; keepOps: those and the keeps of a
// Submit; sweepOps: the sweeps of the shadow's other shards).
func (lb *shardedBackend) addShadow(b *shardBatch, live []target, members []string, rows [][]indexRow, ops func(*shardedBackend, []string, []indexRow) [][]shardOp) {
	if lb.shadow == nil {
		return
	}
	for w, tg := range live {
		b.add(lb.shadow, w, tg, ops(lb.shadow, members, rows[w]))
	}
}

// keepOps are rowOps and, for each member whose write changed nothing, a
// keep in its shard: the check of that shard's copy against the partition
// that a Submit's own shards get (see shardCalls), so that a WithID retry
// of a write whose first try died between its two steps brings this
// layout up to the partition too (a keep that finds the copy behind comes
// back late, and settleShards repairs the member).
func (lb *shardedBackend) keepOps(members []string, rows []indexRow) [][]shardOp {
	ops, keeps := lb.rowOps(members, rows), lb.unchangedOps(members, rows, false)
	for i := range ops {
		ops[i] = append(ops[i], keeps[i]...)
	}
	return ops
}

// batchOps are keepOps and sweepOps together: a Batcher's share of the
// shadow, as shardStep lays out the board's (each member a write changed
// swept out of every other shard).
func (lb *shardedBackend) batchOps(members []string, rows []indexRow) [][]shardOp {
	ops, sweeps := lb.keepOps(members, rows), lb.sweepOps(members, rows)
	for i := range ops {
		ops[i] = append(ops[i], sweeps[i]...)
	}
	return ops
}

// shadowProbes are a Submit's reads of its member's score in every shard
// of the shadow its share leaves alone, per window, as shardCalls reads
// the board's: a copy there is one a write that died between its steps
// left behind, which sweepShadow sweeps. at holds each read's window and
// shard.
func (lb *shardedBackend) shadowProbes(member string, live []target, rows [][]indexRow) (calls []scripts.Call, at [][2]int) {
	sh := lb.shadow
	if sh == nil {
		return nil, nil
	}
	for w, tg := range live {
		mv := sh.moveOf(rows[w][0])
		for i := range len(sh.bounds) + 1 {
			if i != mv.to && i != mv.from {
				calls = append(calls, sh.zscoreCall(sh.shardKey(i, tg), member))
				at = append(at, [2]int{w, i})
			}
		}
	}
	return calls, at
}

// sweepShadow sweeps member out of the shadow's shards where its probes
// (at, results) found a copy, as shardReplies sweeps the board's: with
// the write's version, or, for a write that changed nothing, a drop at
// its floor. One round trip more, only when one was found.
func (lb *shardedBackend) sweepShadow(ctx context.Context, member string, live []target, rows [][]indexRow, at [][2]int, results []rueidis.RedisResult) error {
	var b shardBatch
	for k, r := range results {
		if err := r.Error(); rueidis.IsRedisNil(err) {
			continue
		} else if err != nil {
			return err
		}
		w, row := at[k][0], rows[at[k][0]][0]
		ops := make([][]shardOp, len(lb.shadow.bounds)+1)
		ops[at[k][1]] = []shardOp{sweepOp(member, row)}
		b.add(lb.shadow, w, live[w], ops)
	}
	if len(b.calls) == 0 {
		return nil
	}
	return lb.writeShards(ctx, live, b, true)
}

// firstErr is the first error of results, in their order.
func firstErr(results []rueidis.RedisResult) error {
	for _, r := range results {
		if err := r.Error(); err != nil {
			return err
		}
	}
	return nil
}
