package leaderboard

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// submitBatchCluster writes a batch on a sharded board on a Cluster in the
// two steps of a Submit, each one round trip for the whole batch: first
// the partitions (one part_write.lua call for the members of a partition
// group, keys.GroupOf, that go to the same periods with the same time slot
// and data), then the
// shards (one shard_write.lua call for each shard of each period the batch
// writes, applying every member's move in the order of the first step's
// calls and reporting its ranks; a ZCARD for a shard with nothing to
// apply). Each write's
// standings come from that second step: its rank in its shard when its
// move applied and the other shards' counts after the batch, as if the
// batch's writes were Submits sent at once. A member's later writes in
// the batch (WithTime, to other periods; under Accumulate, scores that did
// not fold into its first), and the writes of a partition
// group's call Redis refused (one total out of range refuses the whole call), are
// written after, each as a Submit, so that every write's error is its own.
// A group's call that failed otherwise (a timeout, the network) fails its
// own writes alone: the other groups' calls applied, and their writes
// take the second step as if it had not.
func (lb *shardedBackend) submitBatchCluster(ctx context.Context, ws []*batchWrite) error {
	first, alone := firstWrites(ws)
	groups := lb.partGroups(first)
	rows, refused, failed := lb.batchParts(ctx, groups)
	var written []*batchWrite
	var wrows [][]indexRow
	for g, grp := range groups {
		switch {
		case refused[g]:
			alone = append(alone, grp.ws...)
			continue
		case failed[g] != nil:
			// Its own callers' error alone: the other groups' calls
			// applied, and their writes go on to the second step.
			for _, w := range grp.ws {
				w.err = wrap("batch submit", failed[g])
			}
			refused[g] = true // no shadow share either
			continue
		}
		for k, w := range grp.ws {
			row := make([]indexRow, len(rows[g]))
			for j := range row {
				row[j] = rows[g][j][k]
			}
			written, wrows = append(written, w), append(wrows, row)
		}
	}
	if len(written) == 0 {
		lb.submitEach(ctx, sortedBySeq(alone))
		return nil
	}
	if err := lb.batchShards(ctx, groups, refused, rows, written, wrows); err != nil {
		lb.hotFailed(ctx, batchPeriods(written, wrows), err) // some shards may have taken theirs
		return err
	}
	lb.batchHot(ctx, written)
	lb.submitEach(ctx, sortedBySeq(alone))
	return nil
}

// batchPeriods lists the periods the written writes reach the shards of,
// each once: not those whose partition Redis deleted in the first step
// (indexRow.gone), as a turn taken on a period that is over would outlive
// it (hotTurnTTL).
func batchPeriods(written []*batchWrite, wrows [][]indexRow) []target {
	var tgs []target
	for k, w := range written {
		for j, tg := range w.live {
			if !wrows[k][j].gone && !holdsTarget(tgs, tg) {
				tgs = append(tgs, tg)
			}
		}
	}
	return tgs
}

// sortedBySeq sorts ws in the batch's order, and returns it.
func sortedBySeq(ws []*batchWrite) []*batchWrite {
	slices.SortFunc(ws, func(a, b *batchWrite) int { return a.seq - b.seq })
	return ws
}

// firstWrites splits a batch into each member's first write and the rest
// (a member's writes to other periods, or of scores that did not fold
// into its first), in order.
func firstWrites(ws []*batchWrite) (first, rest []*batchWrite) {
	seen := make(map[string]bool, len(ws))
	for _, w := range ws {
		if seen[w.sub.member] {
			rest = append(rest, w)
			continue
		}
		seen[w.sub.member] = true
		first = append(first, w)
	}
	return first, rest
}

// partGroup is one first-step call of a batch on a Cluster: writes of
// members of one partition group (keys.GroupOf) to the same periods, with
// the same time slot and data (part_write.lua takes one of each a call),
// each partition's together, else in batch order.
type partGroup struct {
	ws []*batchWrite
}

// partGroups groups a batch's writes (one a member) into first-step calls.
func (lb *shardedBackend) partGroups(ws []*batchWrite) []partGroup {
	type groupID struct {
		group   int
		periods foldID // the periods alone
		slot    int64
		data    string
	}
	at := map[groupID]int{}
	var groups []partGroup
	for _, w := range ws {
		id := groupID{keys.GroupOf(keys.PartitionOf(w.sub.member)), foldKey("", w.live), w.sub.t, w.sub.data}
		g, ok := at[id]
		if !ok {
			g = len(groups)
			at[id] = g
			groups = append(groups, partGroup{})
		}
		groups[g].ws = append(groups[g].ws, w)
	}
	for g, grp := range groups {
		// Each member once (firstWrites), so the order within a call is
		// free: partition by partition, as part_write.lua takes them.
		_, inPart := groupBy(grp.ws, func(w *batchWrite) int { return keys.PartitionOf(w.sub.member) })
		ws := make([]*batchWrite, 0, len(grp.ws))
		for _, js := range inPart {
			for _, j := range js {
				ws = append(ws, grp.ws[j])
			}
		}
		groups[g].ws = ws
	}
	return groups
}

// batchParts runs the first step, every group's call in one round trip:
// rows[group][window][write] is what each write's partition did, and
// refused[group] reports a call Redis refused (it wrote nothing), and
// failed[group] the error of one that failed otherwise.
func (lb *shardedBackend) batchParts(ctx context.Context, groups []partGroup) (rows [][][]indexRow, refused []bool, failed []error) {
	calls := make([]scripts.Call, len(groups))
	for g, grp := range groups {
		members, values := make([]string, len(grp.ws)), make([]string, len(grp.ws))
		for k, w := range grp.ws {
			members[k], values[k] = w.sub.member, lb.subValue(w.sub)
		}
		w0 := grp.ws[0]
		calls[g] = lb.partWriteCall("submit", w0.live, members, values, w0.sub.t, submission{data: w0.sub.data})
	}
	rows, refused, failed = make([][][]indexRow, len(groups)), make([]bool, len(groups)), make([]error, len(groups))
	for g, r := range scripts.ExecMulti(ctx, lb.client, calls) {
		grp := groups[g]
		got, _, err := partRows(r, len(grp.ws[0].live), len(grp.ws), false)
		if err != nil {
			if isRefusal(lb.scriptErr("batch submit", err, "a total")) {
				refused[g] = true
			} else {
				failed[g] = err
			}
			continue
		}
		rows[g] = got
	}
	return rows, refused, failed
}

// batchOp is one op of the second step, and which write's window it
// serves (an index into the batch's owners).
type batchOp struct {
	shardOp
	owner int
}

// batchOwner is one window of one written write in the second step: where
// the write moves the member, and what the shards showed of it.
type batchOwner struct {
	w      *batchWrite
	j      int // the window's index in w.live
	period int // index into the step's periods
	row    indexRow
	mv     shardMove
	put    [3]int64 // ranks in its new shard, and in its old one
	del    [3]int64
	late   bool
}

// shardStep is the second step of a batch on a Cluster: per period, each
// shard's ops in batch order.
type shardStep struct {
	periods []target
	ops     [][][]batchOp // [period][shard]
	owners  []batchOwner
	// probes read the members whose write changed nothing in the
	// period's other shards, of the board's layout and of its shadow's
	// (see strayProbe): one read a shard of each period.
	probes []strayProbe
}

// batchShards runs the second step for the written writes (rows: each
// one's partition rows), with the shadow layout's share of every group and
// the reads of stray copies (strayProbe) in the same round trip, and
// reports each write's standings into its out.
func (lb *shardedBackend) batchShards(ctx context.Context, groups []partGroup, refused []bool, rows [][][]indexRow, written []*batchWrite, wrows [][]indexRow) error {
	st := lb.shardStep(written, wrows)
	calls, cards := lb.stepCalls(st)
	main := len(calls)
	var shadows []shardBatch
	if lb.shadow != nil {
		shadows = make([]shardBatch, len(groups))
		for g, grp := range groups {
			if !refused[g] {
				lb.addShadow(&shadows[g], grp.ws[0].live, groupMembers(grp), rows[g], (*shardedBackend).batchOps)
				calls = append(calls, shadows[g].calls...)
			}
		}
	}
	results := scripts.ExecMulti(ctx, lb.primaryClient(), append(calls, probeCalls(st.probes)...))
	if err := lb.stepReplies(st, cards, results); err != nil {
		return err
	}
	results = results[main:]
	for g := range shadows {
		n := len(shadows[g].calls)
		if err := lb.settleShards(ctx, groups[g].ws[0].live, shadows[g], results[:n], true); err != nil {
			return err
		}
		results = results[n:]
	}
	if err := lb.dropStrays(ctx, st.probes, results, cards); err != nil {
		return err
	}
	lb.batchStandings(ctx, st, cards)
	return nil
}

// batchStandings reports each written write's standings from what the
// second step saw (cards: every shard's count after it), and redoes a
// write a shard refused as late.
func (lb *shardedBackend) batchStandings(ctx context.Context, st shardStep, cards [][]int64) {
	for i := range st.owners {
		o := &st.owners[i]
		seen := shardSeen{cards: slices.Clone(cards[o.period]), put: o.put, del: o.del}
		wr := &o.w.out[o.w.where[o.j]]
		lb.seenStanding(o.w.sub.member, o.row, o.mv, seen, wr)
		if o.late && o.w.err == nil {
			o.w.err = wrap("batch submit", lb.redoLate(ctx, o.w.live[o.j], o.w.sub.member, wr))
		}
	}
}

// shardStep lays out the second step: each write's move in each of its
// windows, as Submit's second step makes it (put into the new shard, or
// keep there when nothing changed, and probe the others; delete from the
// old one; sweep every other shard of a copy a crashed write left
// behind).
func (lb *shardedBackend) shardStep(written []*batchWrite, wrows [][]indexRow) shardStep {
	var st shardStep
	n := len(lb.bounds) + 1
	at := map[string]int{}
	var unchanged [][]int // per period, the owners whose write changed nothing
	for k, w := range written {
		for j, tg := range w.live {
			row := wrows[k][j]
			if row.gone {
				closeWindow(&w.out[w.where[j]], w.sub.member)
				continue
			}
			p, ok := at[tg.key]
			if !ok {
				p = len(st.periods)
				at[tg.key] = p
				st.periods, st.ops = append(st.periods, tg), append(st.ops, make([][]batchOp, n))
				unchanged = append(unchanged, nil)
			}
			o := len(st.owners)
			st.owners = append(st.owners, batchOwner{w: w, j: j, period: p, row: row, mv: lb.moveOf(row)})
			if row.version == 0 {
				unchanged[p] = append(unchanged[p], o)
			}
			mv := st.owners[o].mv
			for i := range n {
				op := shardOp{member: w.sub.member, version: row.version}
				switch {
				case row.version == 0 && i == mv.to:
					op.op, op.version, op.value = "keep", row.floor, row.now
				case row.version == 0:
					continue // nothing changed: probed below
				case i == mv.to:
					op.op, op.value = "put", row.now
				case i == mv.from:
					op.op = "del"
				default:
					op.op = "sweep"
				}
				st.ops[p][i] = append(st.ops[p][i], batchOp{shardOp: op, owner: o})
			}
		}
	}
	for p, os := range unchanged {
		members, rows := make([]string, len(os)), make([]indexRow, len(os))
		for k, o := range os {
			members[k], rows[k] = st.owners[o].w.sub.member, st.owners[o].row
		}
		st.probes = append(st.probes, lb.unchangedProbes(st.periods[p], members, rows, p)...)
		if lb.shadow != nil {
			// The shadow's share holds the same writes: those of the
			// groups Redis did not refuse (see batchShards).
			st.probes = append(st.probes, lb.shadow.unchangedProbes(st.periods[p], members, rows, -1)...)
		}
	}
	return st
}

// stepCalls are the second step's calls: one a shard of each period, in
// that order; cards[period] will hold each shard's count after it.
func (lb *shardedBackend) stepCalls(st shardStep) ([]scripts.Call, [][]int64) {
	var calls []scripts.Call
	cards := make([][]int64, len(st.periods))
	for p, tg := range st.periods {
		cards[p] = make([]int64, len(st.ops[p]))
		for i, ops := range st.ops[p] {
			if len(ops) == 0 {
				calls = append(calls, lb.zcardCall(lb.shardKey(i, tg)))
				continue
			}
			sops := make([]shardOp, len(ops))
			for k, o := range ops {
				sops[k] = o.shardOp
			}
			calls = append(calls, lb.shardWriteCall(i, tg, true, sops))
		}
	}
	return calls, cards
}

// stepReplies reads the second step's replies (in stepCalls' order) into
// cards and the owners' ranks and late flags.
func (lb *shardedBackend) stepReplies(st shardStep, cards [][]int64, results []rueidis.RedisResult) error {
	c := 0
	for p := range st.periods {
		for i, ops := range st.ops[p] {
			r := results[c]
			c++
			if len(ops) == 0 {
				n, err := r.AsInt64()
				if err != nil {
					return err
				}
				cards[p][i] = n
				continue
			}
			v, err := r.AsIntSlice()
			if err != nil {
				return err
			}
			if cards[p][i], err = stepOps(st.owners, ops, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// stepOps reads one shard call's reply v into its ops' owners, and
// returns the shard's count after it.
func stepOps(owners []batchOwner, ops []batchOp, v []int64) (int64, error) {
	at := 0
	for _, o := range ops {
		if at >= len(v) {
			return 0, fmt.Errorf("shard write returned %d values for %d writes", len(v), len(ops))
		}
		own := &owners[o.owner]
		own.late = own.late || v[at] == 1
		at++
		if o.op == "sweep" {
			continue
		}
		if at+3 > len(v) {
			return 0, fmt.Errorf("shard write returned %d values for %d writes", len(v), len(ops))
		}
		if o.op == "del" {
			copy(own.del[:], v[at:at+3])
		} else {
			copy(own.put[:], v[at:at+3])
		}
		at += 3
	}
	if at != len(v)-1 {
		return 0, fmt.Errorf("shard write returned %d values for %d writes", len(v), len(ops))
	}
	return v[at], nil
}

// groupMembers lists a group's members, in its order.
func groupMembers(grp partGroup) []string {
	out := make([]string, len(grp.ws))
	for k, w := range grp.ws {
		out[k] = w.sub.member
	}
	return out
}

// batchHot rewrites, with a hot top, the mirror of every period a written
// write may have changed, once for the batch, with a turn (see
// hotRewriteAfter). A write's ranks
// here are each off from the ranks before and after the batch by at most
// one for every other write of the batch to the period (see
// submitBatchCluster), so a write near enough to the top counts; a
// rewrite that finds the mirror right writes nothing.
func (lb *shardedBackend) batchHot(ctx context.Context, written []*batchWrite) {
	if lb.hot == nil {
		return
	}
	writes := map[string]int64{}
	for _, w := range written {
		for _, tg := range w.live {
			writes[tg.key]++
		}
	}
	var tgs []target
	for _, w := range written {
		for j, tg := range w.live {
			if lb.hotWithin(w.out[w.where[j]], writes[tg.key]-1) && !holdsTarget(tgs, tg) {
				tgs = append(tgs, tg)
			}
		}
	}
	if len(tgs) > 0 {
		lb.hotRewriteAfter(ctx, tgs)
	}
}
