package leaderboard

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// indexRow is what a member's partition did to it in one window.
type indexRow struct {
	had, has  bool   // the member was, is in the partition
	prev, now string // stored values before and after
	version   int64  // of the change; 0: nothing changed
	// floor is the group clock's last version as the write left it: a
	// later write to the member takes a newer one (a keep's version).
	floor int64
	// gone: Redis deleted the period's partition as the write set its
	// expiry (its clock had passed it): the period is over, nothing is
	// left of the write, and the shards have nothing to do.
	gone bool
}

// byPartition groups members by partition: the partitions in the order
// first met, and the positions in members of each one's members.
func byPartition(members []string) (parts []int, at [][]int) {
	return groupBy(members, keys.PartitionOf)
}

// byGroup groups members by partition group (keys.GroupOf): the groups in
// the order first met, and the positions in members of each one's members,
// each partition's together (in the order first met), as partWriteCall
// takes them. Each member's partition is hashed once.
func byGroup(members []string) (groups []int, at [][]int) {
	parts, inPart := byPartition(members)
	groups, partsOf := groupBy(parts, keys.GroupOf)
	at = make([][]int, len(groups))
	for g, ks := range partsOf {
		for _, k := range ks {
			at[g] = append(at[g], inPart[k]...)
		}
	}
	return groups, at
}

// groupBy groups items by key: the keys in the order first met, and the
// positions in items of each one's items.
func groupBy[T any](items []T, key func(T) int) (ids []int, at [][]int) {
	where := map[int]int{}
	for j, it := range items {
		k := key(it)
		i, ok := where[k]
		if !ok {
			i = len(ids)
			where[k] = i
			ids = append(ids, k)
			at = append(at, nil)
		}
		at[i] = append(at[i], j)
	}
	return ids, at
}

// partWrite runs the first step of a write on a Cluster (see
// part_write.lua), one call per partition group the members are in, all
// in one round trip, and returns rows[window][member]. When some groups'
// calls failed (a timeout, a ctx that ended while a slot migrated) it returns the
// first error with the rows of the groups that applied (the others' rows
// zero, version 0: nothing to apply), so that a caller can still take
// those to the shards; rows are nil only when the dry run of a SubmitMany
// refused it, and nothing was written.
func (lb *shardedBackend) partWrite(ctx context.Context, mode string, live []target, members, values []string, slot int64) ([][]indexRow, error) {
	groups, at := byGroup(members)
	calls := make([]scripts.Call, len(groups))
	build := func(mode string) {
		for k := range groups {
			ms, vs := pick(members, at[k]), values // "evict": its bounds
			if values != nil && mode != "evict" {
				vs = pick(values, at[k])
			}
			calls[k] = lb.partWriteCall(mode, live, ms, vs, slot, submission{})
		}
	}
	if mode == "submit" && len(groups) > 1 && lb.mayRefuse(values) {
		// Each group's script refuses alone: a dry run of them all
		// first, so that one refused total leaves every partition as it
		// was (see WithShards).
		build("check")
		for _, r := range scripts.ExecMulti(ctx, lb.client, calls) {
			if err := r.Error(); err != nil {
				return nil, err
			}
		}
	}
	build(mode)
	rows := make([][]indexRow, len(live))
	for w := range rows {
		rows[w] = make([]indexRow, len(members))
	}
	var refusal, failed error
	var refused []string
	for k, r := range scripts.ExecMulti(ctx, lb.client, calls) {
		got, _, err := partRows(r, len(live), len(at[k]), false)
		if err != nil {
			if scriptRefusal(err, "LBOVERFLOW") || scriptRefusal(err, "LBRANGE") {
				refusal = cmp.Or(refusal, err)
				refused = append(refused, pick(members, at[k])...)
			} else {
				failed = cmp.Or(failed, err)
			}
			continue
		}
		for w := range live {
			for i, j := range at[k] {
				rows[w][j] = got[w][i]
			}
		}
	}
	if refused != nil {
		return rows, partRefusal{err: refusal, members: refused, failed: failed}
	}
	return rows, failed
}

// partRefusal is partWrite's error when partition groups refused their
// writes (a total out of range) after the dry run, while the others may
// have applied theirs: members are the refused groups' members, whose
// submissions alone a store takes back (SubmitMany). failed is the first
// failure of another group's call (a timeout, a ctx that ended while its
// slot migrated), nil when none failed: that group's submissions are
// neither applied nor refused, and a store keeps them for the next
// Rebuild (ErrPending beside the refusal; see afterStore).
type partRefusal struct {
	err     error
	members []string
	failed  error
}

func (e partRefusal) Error() string {
	if e.failed == nil {
		return e.err.Error()
	}
	return e.err.Error() + "; and " + unprefixed(e.failed)
}

func (e partRefusal) Unwrap() []error {
	if e.failed == nil {
		return []error{e.err}
	}
	return []error{e.err, e.failed}
}

// partlyFailed reports whether err, a write's refusal, is a partRefusal
// beside which another partition group's call failed.
func partlyFailed(err error) bool {
	var pr partRefusal
	return errors.As(err, &pr) && pr.failed != nil
}

// refusedOnly is appended less the submissions of members that err, a
// write's error, does not name as refused (partRefusal): those of groups
// that applied stay in the store, as they stay in Redis. Without a
// partRefusal it is appended.
func refusedOnly(err error, appended []Submission) []Submission {
	var pr partRefusal
	if !errors.As(err, &pr) {
		return appended
	}
	refused := make(map[string]bool, len(pr.members)) // a SubmitMany may hold thousands
	for _, m := range pr.members {
		refused[m] = true
	}
	return slices.DeleteFunc(appended, func(s Submission) bool { return !refused[s.Member] })
}

// mayRefuse reports whether a partition could refuse a batch of values (as
// the scripts take them) for what it already holds: only an Accumulate
// total can, against a tie-break's MaxScore, or overflowing with an
// increment of 2^970 or more.
func (lb *shardedBackend) mayRefuse(values []string) bool {
	if lb.policy != Accumulate {
		return false
	}
	if lb.tb != nil {
		return true
	}
	for _, v := range values {
		if f, err := strconv.ParseFloat(v, 64); err != nil || math.Abs(f) >= incrNeverOverflows {
			return true
		}
	}
	return false
}

func pick(s []string, at []int) []string {
	out := make([]string, len(at))
	for i, j := range at {
		out[i] = s[j]
	}
	return out
}

// partWriteCall is the first step's call for members, all of one
// partition group, each partition's together (see byGroup).
func (lb *shardedBackend) partWriteCall(mode string, live []target, members, values []string, slot int64, sub submission) scripts.Call {
	var parts []scripts.PartKeys
	var counts []int
	first, last := keys.PartitionOf(members[0]), -1
	for _, m := range members {
		if p := keys.PartitionOf(m); p != last {
			last = p
			part := lb.parts.Of(p)
			ks := make([]string, len(live))
			for w, tg := range live {
				ks[w] = part.Period(tg.window.Name(), tg.period.ID)
			}
			parts, counts = append(parts, scripts.PartKeys{Periods: ks, Data: part.Data()}), append(counts, 0)
		}
		counts[len(counts)-1]++
	}
	return scripts.PartWriteCall(lb.writeHeader(slot, &sub), mode, parts, counts, lb.parts.GroupClock(keys.GroupOf(first)), lb.parts.Of(first).IDs(), expiresOf(live), members, values)
}

// partRows decodes a part_write.lua reply into rows[window][member], and
// with id its duplicate flag.
func partRows(r rueidis.RedisResult, windows, members int, id bool) ([][]indexRow, bool, error) {
	v, err := r.ToArray()
	if err != nil {
		return nil, false, err
	}
	if len(v) == 0 {
		return nil, false, fmt.Errorf("partition script returned no values")
	}
	floor, err := v[len(v)-1].AsInt64()
	if err != nil {
		return nil, false, err
	}
	v = v[:len(v)-1]
	dup := false
	if id && len(v) > 0 {
		flag, err := v[len(v)-1].AsInt64()
		if err != nil {
			return nil, false, err
		}
		dup, v = flag == 1, v[:len(v)-1]
	}
	if len(v) != 3*windows*members {
		return nil, false, fmt.Errorf("partition script returned %d values, want %d", len(v), 3*windows*members)
	}
	rows := make([][]indexRow, windows)
	for w := range rows {
		rows[w] = make([]indexRow, members)
		for j := range rows[w] {
			x, row := v[3*(w*members+j):], &rows[w][j]
			if row.prev, row.had, err = optString(&x[0]); err != nil {
				return nil, false, err
			}
			if row.now, row.has, err = optString(&x[1]); err != nil {
				return nil, false, err
			}
			if row.version, err = x[2].AsInt64(); err != nil {
				return nil, false, err
			}
			if row.version < 0 {
				row.version, row.gone = 0, true
			}
			row.floor = floor
		}
	}
	return rows, dup, nil
}

// shardOp is one versioned write for shard_write.lua.
type shardOp struct {
	op      string // "put", "del", "keep" (report only, the copy checked), "sweep", "drop"
	member  string
	version int64
	value   string
}

// shardWriteCall applies ops to shard i of tg; with report, its reply has
// each op's ranks (see shard_write.lua).
func (lb *shardedBackend) shardWriteCall(i int, tg target, report bool, ops []shardOp) scripts.Call {
	key := lb.shardKey(i, tg)
	sops := make([]scripts.ShardOp, len(ops))
	for j, o := range ops {
		sops[j] = scripts.ShardOp{Op: o.op, Member: o.member, Version: o.version, Value: o.value, Recent: keys.Recent(key, o.member)}
	}
	return scripts.ShardWriteCall(lb.readHeader(), key, tg.expire, report, sops)
}

func (lb *shardedBackend) zcardCall(key string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zcard().Key(key).Build() }}
}

func (lb *shardedBackend) zscoreCall(key, member string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zscore().Key(key).Member(member).Build() }}
}

func (lb *shardedBackend) zmscoreCall(key string, members []string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zmscore().Key(key).Member(members...).Build() }}
}

// submit is Submit on a sharded board: one script on one node
// (shard_local.lua); on a Cluster the member's partition, then the shards
// (see WithShards).
// With a hot top (WithHotTop) the mirrors the write is expected to change
// are rewritten after it in the same round trip on one node; those it
// turns out to reach, and on a Cluster every one it reaches, after it
// (see hotRewrite).
func (lb *shardedBackend) submit(ctx context.Context, sub submission, live []target, where []int, out []WindowResult) (bool, error) {
	var hot []target
	if !lb.cluster {
		hot = lb.hotExpected(live, sub)
	}
	dup, err := lb.submitOnce(ctx, sub, live, where, out, hot)
	if err != nil || lb.hot == nil || dup {
		lb.hotSubmitFailed(ctx, live, hot, err)
		return dup, err
	}
	lb.hotFollow(ctx, live, where, out, hot)
	return false, nil
}

// submitOnce is submit's write, with (on one node) the rewrites of the
// mirrors hot in its round trip.
func (lb *shardedBackend) submitOnce(ctx context.Context, sub submission, live []target, where []int, out []WindowResult, hot []target) (bool, error) {
	value := lb.subValue(sub)
	if !lb.cluster {
		return lb.submitLocal(ctx, sub, value, live, where, out, hot)
	}
	call := lb.partWriteCall("submit", live, []string{sub.member}, []string{value}, sub.t, sub)
	rows, dup, err := partRows(call.Exec(ctx, lb.client), len(live), 1, sub.id != "")
	if err != nil {
		return false, lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, sub.member))
	}
	live, where, rows = closeGone(sub.member, live, where, rows, out)
	calls, moves := lb.shardCalls(sub.member, live, rows)
	var shadow shardBatch
	lb.addShadow(&shadow, live, []string{sub.member}, rows, (*shardedBackend).keepOps)
	probes, probed := lb.shadowProbes(sub.member, live, rows)
	results := scripts.ExecMulti(ctx, lb.primaryClient(), slices.Concat(calls, shadow.calls, probes))
	replies, swept, late, err := lb.shardReplies(ctx, sub.member, live, rows, moves, results[:len(calls)])
	if err != nil {
		return false, wrap("submit", err)
	}
	results = results[len(calls):]
	if err := lb.settleShards(ctx, live, shadow, results[:len(shadow.calls)], true); err != nil {
		return false, wrap("submit", err)
	}
	if err := lb.sweepShadow(ctx, sub.member, live, rows, probed, results[len(shadow.calls):]); err != nil {
		return false, wrap("submit", err)
	}
	for w := range live {
		refused, err := lb.shardStanding(sub.member, rows[w][0], moves[w], replies[w], swept[w], &out[where[w]])
		if err != nil {
			return false, wrap("submit", err)
		}
		if late[w] || refused {
			if err := lb.redoLate(ctx, live[w], sub.member, &out[where[w]]); err != nil {
				return false, wrap("submit", err)
			}
		}
	}
	return dup, nil
}

// closeGone reports Closed the windows whose partition Redis deleted as
// the first step set its expiry (rows[w][0].gone), and returns the others,
// whose shards the second step writes.
func closeGone(member string, live []target, where []int, rows [][]indexRow, out []WindowResult) ([]target, []int, [][]indexRow) {
	if !slices.ContainsFunc(rows, func(r []indexRow) bool { return r[0].gone }) {
		return live, where, rows
	}
	var l []target
	var wh []int
	var rs [][]indexRow
	for w := range live {
		if rows[w][0].gone {
			closeWindow(&out[where[w]], member)
			continue
		}
		l, wh, rs = append(l, live[w]), append(wh, where[w]), append(rs, rows[w])
	}
	return l, wh, rs
}

// redoLate gives a write that reached a shard too late (see versions.lua),
// or found its shard behind its partition, a new version and sends it
// again, as Check repairs a member, then reads the member's standing
// afresh: a Submit whose two steps lay more than some seconds apart (a
// paused process) takes three round trips more. wr keeps the write's own
// score, which its Previous and Changed describe: a fresh read that finds
// another (a write racing this one came after it, or removed the member)
// leaves wr's ranks as the write's own step saw them.
func (lb *shardedBackend) redoLate(ctx context.Context, tg target, member string, wr *WindowResult) error {
	if err := lb.repairShards(ctx, tg, []string{member}, nil); err != nil {
		return err
	}
	at := lb
	if lb.replicaReads { // read what the repair wrote: the primaries
		at = baseBackend(lb.primaryView().be).(*shardedBackend)
	}
	st, _, err := at.locate(ctx, tg, member)
	if err != nil {
		return err
	}
	if st.found && lb.plain(st.stored) == wr.Standing.Score {
		wr.Standing = lb.standingOf(member, st)
	}
	return nil
}

// shardMove is where one window's write takes a member: from its old shard
// to its new one (-1: not ranked before, after).
type shardMove struct{ from, to int }

// moveOf is the move a partition's row asks of the shards.
func (lb *shardedBackend) moveOf(row indexRow) shardMove {
	mv := shardMove{from: -1, to: -1}
	if row.had {
		mv.from = lb.shardOfString(row.prev)
	}
	if row.has {
		mv.to = lb.shardOfString(row.now)
	}
	return mv
}

// shardCalls builds the second step of a Cluster-mode Submit, per window:
// the put into the member's new shard (or, when nothing changed, a read
// of its ranks there), the delete from its old one, and from every other
// shard its count (for the global rank) and the member's score there (a
// copy a crashed write left behind).
func (lb *shardedBackend) shardCalls(member string, live []target, rows [][]indexRow) ([]scripts.Call, []shardMove) {
	n := len(lb.bounds) + 1
	calls := make([]scripts.Call, 0, n*len(live))
	moves := make([]shardMove, len(live))
	for w, tg := range live {
		row := rows[w][0]
		mv := lb.moveOf(row)
		moves[w] = mv
		put := shardOp{op: "put", member: member, version: row.version, value: row.now}
		if row.version == 0 {
			// Nothing changed; the shard's copy is checked against the
			// partition (a retried WithID write whose first try died
			// after its first step finds it behind), unless a newer
			// write has reached the shard since (a version past floor).
			put = keepOp(member, row)
		}
		for i := 0; i < n; i++ {
			switch {
			case i == mv.to:
				calls = append(calls, lb.shardWriteCall(i, tg, true, []shardOp{put}))
			case i == mv.from:
				calls = append(calls, lb.shardWriteCall(i, tg, true, []shardOp{{op: "del", member: member, version: row.version}}))
			default:
				calls = append(calls, lb.zcardCall(lb.shardKey(i, tg)), lb.zscoreCall(lb.shardKey(i, tg), member))
			}
		}
	}
	return calls, moves
}

// shardReplies sorts the second step's results into replies[window][shard],
// and sweeps every stale copy it found in a third round trip (rare: only
// after a crashed or racing write), reporting the swept shards' counts
// after the sweep in swept[window][shard] (where nothing changed, the
// sweep drops only a copy no newer write put there). late[window] reports
// that the window's write must be redone (see redoLate): a shard refused
// it as late.
func (lb *shardedBackend) shardReplies(ctx context.Context, member string, live []target, rows [][]indexRow, moves []shardMove,
	results []rueidis.RedisResult) (replies [][]rueidis.RedisResult, swept []map[int]int64, late []bool, err error) {
	n := len(lb.bounds) + 1
	var sweeps []scripts.Call
	var where [][2]int // window, shard of each sweep
	replies, swept, late = make([][]rueidis.RedisResult, len(live)), make([]map[int]int64, len(live)), make([]bool, len(live))
	at := 0
	for w, tg := range live {
		replies[w], swept[w] = make([]rueidis.RedisResult, n), map[int]int64{}
		for i := 0; i < n; i++ {
			replies[w][i] = results[at]
			at++
			if i == moves[w].to || i == moves[w].from {
				continue
			}
			err := results[at].Error()
			at++
			switch {
			case err == nil:
				// A write that changed nothing drops a copy no newer
				// write put there (one racing it may have).
				sweeps = append(sweeps, lb.shardWriteCall(i, tg, false, []shardOp{sweepOp(member, rows[w][0])}))
				where = append(where, [2]int{w, i})
			case !rueidis.IsRedisNil(err):
				return nil, nil, nil, err
			}
		}
	}
	for k, r := range scripts.ExecMulti(ctx, lb.client, sweeps) {
		v, err := r.AsIntSlice()
		if err != nil || len(v) != 2 {
			return nil, nil, nil, fmt.Errorf("shard sweep returned %v: %w", v, err)
		}
		late[where[k][0]] = late[where[k][0]] || v[0] == 1
		swept[where[k][0]][where[k][1]] = v[1]
	}
	return replies, swept, late, nil
}

// shardStanding works out one window's result of a Cluster-mode Submit
// from the partition's row and the shards' replies: the standing after,
// and the entry before, with global ranks from the shards' counts. It
// reports whether a shard refused the write as late.
func (lb *shardedBackend) shardStanding(member string, row indexRow, mv shardMove, replies []rueidis.RedisResult, swept map[int]int64, wr *WindowResult) (bool, error) {
	seen := shardSeen{cards: make([]int64, len(replies))}
	late := false
	for i, r := range replies {
		if i != mv.to && i != mv.from {
			var err error
			if c, ok := swept[i]; ok {
				seen.cards[i] = c
			} else if seen.cards[i], err = r.AsInt64(); err != nil {
				return false, err
			}
			continue
		}
		v, err := r.AsIntSlice()
		if err != nil || len(v) != 5 {
			return false, fmt.Errorf("shard write returned %v: %w", v, err)
		}
		late = late || v[0] == 1
		seen.cards[i] = v[4]
		if i == mv.to {
			copy(seen.put[:], v[1:4])
		} else {
			copy(seen.del[:], v[1:4])
		}
	}
	lb.seenStanding(member, row, mv, seen, wr)
	return late, nil
}

// shardSeen is what the second step of a write on a Cluster saw of a
// member in one window: every shard's count after it, and the member's
// ranks in its new shard (put) and in its old one (del): before, after,
// and members worse after (see shard_write.lua).
type shardSeen struct {
	cards    []int64
	put, del [3]int64
}

// seenStanding is a write's result in one window, from the partition's
// row and what the shards showed: the standing after, and the entry
// before, with global ranks from the shards' counts. It takes seen.cards
// for its own.
func (lb *shardedBackend) seenStanding(member string, row indexRow, mv shardMove, seen shardSeen, wr *WindowResult) {
	cards := seen.cards
	total := sum(cards)
	wr.Standing = Standing{Entry: Entry{Member: member}, Total: total}
	if row.has {
		rank, worse := lb.globalRank(cards, mv.to, seen.put[1], seen.put[2])
		wr.Standing = lb.standing(member, lb.plain(storedNow(row)), rank, worse, total)
	}
	if !row.had {
		wr.Changed = row.has
		return
	}
	prev, _ := strconv.ParseFloat(row.prev, 64)
	inPrev := seen.put[0]
	if mv.from != mv.to {
		inPrev = seen.del[0]
		cards[mv.from]++ // as they were before this write
		if mv.to >= 0 {
			cards[mv.to]--
		}
	}
	prank, _ := lb.globalRank(cards, mv.from, inPrev, 0)
	wr.Previous = Entry{Member: member, Score: lb.plain(prev), Rank: prank}
	wr.Changed = lb.plain(prev) != lb.plain(storedNow(row))
}

// storedNow is the row's stored value after the write.
func storedNow(row indexRow) float64 {
	v, _ := strconv.ParseFloat(row.now, 64)
	return v
}

func sum(cards []int64) int64 {
	var t int64
	for _, c := range cards {
		t += c
	}
	return t
}

// submitLocal is Submit on a sharded board whose keys all live on one node:
// one script, one round trip (see shard_local.lua), with the shadow's
// share and the rewrites of the mirrors hot after it.
func (lb *shardedBackend) submitLocal(ctx context.Context, sub submission, value string, live []target, where []int, out []WindowResult, hot []target) (bool, error) {
	scale, bounds := lb.scriptBounds()
	part := lb.parts.Of(keys.PartitionOf(sub.member))
	n := len(lb.bounds) + 1
	ks := make([]string, 0, len(live)*(1+n)+1)
	for _, tg := range live {
		ks = append(ks, part.Period(tg.window.Name(), tg.period.ID))
		ks = lb.appendShardKeys(ks, tg)
	}
	call := scripts.ShardLocalCall(lb.writeHeader(sub.t, &sub), ks, part.Data(), part.IDs(), sub.member, value, scale, bounds, expiresOf(live))
	if lb.shadow == nil && len(hot) == 0 {
		return lb.localReplies(call.Exec(ctx, lb.client), sub, live, where, out)
	}
	calls := []scripts.Call{call}
	if lb.shadow != nil {
		calls = lb.withShadowLocal(calls, live, []string{sub.member})
	}
	var results []rueidis.RedisResult
	if len(hot) == 0 {
		results = scripts.ExecMulti(ctx, lb.client, calls)
	} else {
		results = lb.withHot(ctx, calls, hot)
	}
	dup, err := lb.localReplies(results[0], sub, live, where, out)
	if err == nil {
		err = wrap("submit", firstErr(results[1:]))
	}
	return dup, err
}

// localReplies decodes shard_local.lua's reply into out.
func (lb *shardedBackend) localReplies(r rueidis.RedisResult, sub submission, live []target, where []int, out []WindowResult) (bool, error) {
	replies, err := r.ToArray()
	if err != nil {
		return false, lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, sub.member))
	}
	return lb.submitReplies(replies, sub.member, live, where, out)
}

// appendShardKeys appends every shard's sorted set of tg to ks.
func (lb *shardedBackend) appendShardKeys(ks []string, tg target) []string {
	return append(ks, lb.periodShardKeys(tg)...)
}

// scriptBounds are the tie-break's 10^decimals ("1" for none) and the
// bounds, as the one-node scripts take them (formatted once, in New).
func (lb *shardedBackend) scriptBounds() (scale string, bounds []string) {
	return lb.scale, lb.boundArgs
}

// formatBounds formats the one-node scripts' scale and bounds for New.
func formatBounds(lb *Leaderboard, bounds []float64) (scale string, args []string) {
	scale = "1"
	if lb.tb != nil {
		scale = formatScore(lb.tb.scale)
	}
	args = make([]string, len(bounds))
	for i, b := range bounds {
		args[i] = formatScore(b)
	}
	return scale, args
}

// manyLocal is SubmitMany ("submit"), Remove ("remove") or Check's repairs
// ("repair") on a sharded board whose keys all live on one node: one
// script, one round trip, atomic (see shard_local_many.lua); with a shadow,
// its share in the same round trip.
func (lb *shardedBackend) manyLocal(ctx context.Context, mode string, live []target, members, values []string, slot int64) error {
	calls := lb.withShadowLocal([]scripts.Call{lb.manyLocalCall(mode, live, members, values, slot)}, live, members)
	return firstErr(lb.execThenDrop(ctx, calls, live))
}

// manyLocalCall is manyLocal's script call.
func (lb *shardedBackend) manyLocalCall(mode string, live []target, members, values []string, slot int64) scripts.Call {
	scale, bounds := lb.scriptBounds()
	parts, at := byPartition(members)
	part := make([]int, len(members))
	for k, js := range at {
		for _, j := range js {
			part[j] = k + 1
		}
	}
	ks := make([]string, 0, len(live)*(len(lb.bounds)+1+len(parts))+len(parts))
	for _, tg := range live {
		ks = lb.appendShardKeys(ks, tg)
		for _, p := range parts {
			ks = append(ks, lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID))
		}
	}
	if mode == "remove" {
		for _, p := range parts {
			ks = append(ks, lb.parts.Of(p).Data())
		}
	}
	return scripts.ShardLocalManyCall(lb.writeHeader(slot, &submission{}), mode, ks, scale, bounds, len(parts), expiresOf(live), part, members, values)
}

// submitMany is SubmitMany on a sharded board.
func (lb *shardedBackend) submitMany(ctx context.Context, scores map[string]float64, live []target, slot int64) error {
	members := make([]string, 0, len(scores))
	values := make([]string, 0, len(scores))
	for m, s := range scores {
		members = append(members, m)
		values = append(values, lb.scriptValue(s))
	}
	if !lb.cluster {
		return lb.scriptErr("submit many", lb.manyLocal(ctx, "submit", live, members, values, slot), "a total")
	}
	rows, err := lb.partWrite(ctx, "submit", live, members, values, slot)
	if rows == nil {
		return lb.scriptErr("submit many", err, "a total")
	}
	// The groups that applied go to the shards even when another failed:
	// else their shards would trail their partitions.
	applied := lb.afterWrite(ctx, notGone(live, rows), lb.applyRows(ctx, "submit many", live, members, rows, false))
	if pr, ok := err.(partRefusal); ok {
		// Some groups applied: the store keeps theirs (refusedOnly).
		return partRefusal{err: lb.scriptErr("submit many", pr.err, "a total"), members: pr.members,
			failed: lb.scriptErr("submit many", pr.failed, "a total")}
	}
	if err != nil {
		return lb.scriptErr("submit many", err, "a total")
	}
	return applied
}

// notGone is the windows of live whose partitions the first step did not
// find deleted by Redis (see indexRow.gone): those whose mirrors a write
// may have changed. A turn taken on a period that is over would outlive
// it (hotTurnTTL).
func notGone(live []target, rows [][]indexRow) []target {
	var out []target
	for w, tg := range live {
		if slices.ContainsFunc(rows[w], func(r indexRow) bool { return !r.gone }) {
			out = append(out, tg)
		}
	}
	return out
}

// applyRows sends the partitions' changes to the shards, script calls of
// at most maxShardOps ops per shard and window. With sweep, every other
// shard also loses any copy of the members that a crashed write left
// behind: members x shards x windows sweeps, sent after every put and
// delete, so that those reach the shards before the sweeps of a large
// Remove keep the nodes busy for seconds (a put or delete that arrives
// later than versions.lua's bound is redone; a sweep that finds no copy
// never is).
func (lb *shardedBackend) applyRows(ctx context.Context, op string, live []target, members []string, rows [][]indexRow, sweep bool) error {
	var b shardBatch
	for w, tg := range live {
		b.add(lb, w, tg, lb.rowOps(members, rows[w]))
	}
	lb.addShadow(&b, live, members, rows, (*shardedBackend).rowOps)
	if sweep {
		for w, tg := range live {
			b.add(lb, w, tg, lb.cleanOps(members, rows[w]))
		}
		lb.addShadow(&b, live, members, rows, (*shardedBackend).cleanOps)
	}
	return wrap(op, lb.writeShards(ctx, live, b, true))
}

// cleanOps are sweepOps and unchangedOps with drops in one call a shard:
// a removal's (Remove, RemoveBetween's evict) upkeep of the copies writes
// that died between their steps left behind.
func (lb *shardedBackend) cleanOps(members []string, rows []indexRow) [][]shardOp {
	ops, strays := lb.sweepOps(members, rows), lb.unchangedOps(members, rows, true)
	for i := range ops {
		ops[i] = append(ops[i], strays[i]...)
	}
	return ops
}

// unchangedOps are, for each member whose row changed nothing, what a
// Submit that changes nothing sends (shardCalls, shardReplies): the check
// of its copy in its value's shard (keepOp; a copy found behind is
// repaired, settleShards) and, with drops, drops at the row's floor of a
// copy in the others that no newer write put there (sweepOp). RemoveBetween
// reads its members from the shards, where a write that died between its
// steps may have left a copy in the range while the member's partition
// holds a value out of it: without the drops the copy stayed, and the next
// chunk read it again, a chunk of such copies for ever. A Remove of
// members never submitted drops their stray copies too.
func (lb *shardedBackend) unchangedOps(members []string, rows []indexRow, drops bool) [][]shardOp {
	ops := make([][]shardOp, len(lb.bounds)+1)
	for j, m := range members {
		row := rows[j]
		keep, ok := lb.unchangedShard(row)
		if !ok {
			continue
		}
		if keep >= 0 {
			ops[keep] = append(ops[keep], keepOp(m, row))
		}
		for i := range ops {
			if drops && i != keep {
				ops[i] = append(ops[i], sweepOp(m, row))
			}
		}
	}
	return ops
}

// unchangedShard is, for a row that changed nothing, the shard of its
// value (-1 when the member holds none), the one shard where a copy of the
// member belongs; false for a row that changed something, or whose
// partition Redis deleted.
func (lb *shardedBackend) unchangedShard(row indexRow) (int, bool) {
	switch {
	case row.version != 0 || row.gone:
		return -1, false
	case !row.has:
		return -1, true
	}
	return lb.shardOfString(row.now), true
}

// keepOp checks member's copy in its shard against row, which changed
// nothing: a copy not at row's value that no write newer than the row's
// floor reached is one a write that died between its steps left behind
// (shard_write.lua's 'keep').
func keepOp(member string, row indexRow) shardOp {
	return shardOp{op: "keep", member: member, version: row.floor, value: row.now}
}

// sweepOp sweeps out of a shard a copy of member a write that died
// between its steps left: at row's version, or, for a row that changed
// nothing, a drop at its floor, which spares a copy a newer write put
// there (shard_write.lua's 'sweep' and 'drop').
func sweepOp(member string, row indexRow) shardOp {
	if row.version == 0 {
		return shardOp{op: "drop", member: member, version: row.floor}
	}
	return shardOp{op: "sweep", member: member, version: row.version}
}

// rowOps turns one window's partition rows into each shard's puts and
// deletes (by this layout's bounds).
func (lb *shardedBackend) rowOps(members []string, rows []indexRow) [][]shardOp {
	ops := make([][]shardOp, len(lb.bounds)+1)
	for j, m := range members {
		row := rows[j]
		if row.version == 0 {
			continue
		}
		mv := lb.moveOf(row)
		if mv.to >= 0 {
			ops[mv.to] = append(ops[mv.to], shardOp{op: "put", member: m, version: row.version, value: row.now})
		}
		if mv.from >= 0 && mv.from != mv.to {
			ops[mv.from] = append(ops[mv.from], shardOp{op: "del", member: m, version: row.version})
		}
	}
	return ops
}

// sweepOps are the sweeps of the members out of every shard rowOps leaves
// alone: the copies a crashed write left behind.
func (lb *shardedBackend) sweepOps(members []string, rows []indexRow) [][]shardOp {
	ops := make([][]shardOp, len(lb.bounds)+1)
	for j, m := range members {
		if row := rows[j]; row.version != 0 {
			mv := lb.moveOf(row)
			sweepOthers(ops, m, row.version, mv.to, mv.from)
		}
	}
	return ops
}

// sweepOthers appends to ops a sweep of member, at version, out of every
// shard but those of keep.
func sweepOthers(ops [][]shardOp, member string, version int64, keep ...int) {
	for i := range ops {
		if !slices.Contains(keep, i) {
			ops[i] = append(ops[i], shardOp{op: "sweep", member: member, version: version})
		}
	}
}

// shardBatch is the second step of a write on a Cluster: one call per
// shard and window, with what it carries.
type shardBatch struct {
	calls []scripts.Call
	by    []*shardedBackend // layout of each call: the board's, or its shadow
	win   []int             // window of each call
	ops   [][]shardOp
}

// maxShardOps bounds the ops of one shard script call: a Remove of many
// members sweeps every shard for each, and one call holding them all kept
// a node from its other clients for seconds, and past rueidis's read
// timeout.
const maxShardOps = 500

// add queues ops[i] for shard i of lb's layout in window w (tg), where
// there are any, in calls of at most maxShardOps.
func (b *shardBatch) add(lb *shardedBackend, w int, tg target, ops [][]shardOp) {
	for i, o := range ops {
		for len(o) > 0 {
			piece := o[:min(len(o), maxShardOps)]
			o = o[len(piece):]
			b.calls = append(b.calls, lb.shardWriteCall(i, tg, false, piece))
			b.by, b.win, b.ops = append(b.by, lb), append(b.win, w), append(b.ops, piece)
		}
	}
}

// maxRoundOps bounds the ops of one round trip of a batch: rueidis gives
// a pipeline of 2,000 commands or more one read timeout (10 s by default)
// for all of it, and a Remove of 40,000 members swept 65 shards in 2.6
// million ops, which no node answered in time.
const maxRoundOps = 100_000

// writeShards sends a batch, in one round trip unless it holds more than
// maxRoundOps ops (then in round trips of at most that many, in order:
// applyRows puts the sweeps last), and settles it.
func (lb *shardedBackend) writeShards(ctx context.Context, live []target, b shardBatch, redo bool) error {
	var results []rueidis.RedisResult
	from, ops := 0, 0
	for k := range b.calls {
		if ops += len(b.ops[k]); ops > maxRoundOps && k > from {
			results = append(results, scripts.ExecMulti(ctx, lb.client, b.calls[from:k])...)
			from, ops = k, len(b.ops[k])
		}
	}
	results = append(results, scripts.ExecMulti(ctx, lb.client, b.calls[from:])...)
	return lb.settleShards(ctx, live, b, results, redo)
}

// lateWrites are the members whose writes a layout's shards refused as
// late in one window.
type lateWrites struct {
	by *shardedBackend
	w  int
}

// settleShards reads a batch's results; with redo, a write a shard refused
// as late (see versions.lua) is redone as Check repairs a member, in the
// layout that refused it: a new version, then its right shard, and sweeps
// of every other (see repairCluster). A redo refused again is an error.
func (lb *shardedBackend) settleShards(ctx context.Context, live []target, b shardBatch, results []rueidis.RedisResult, redo bool) error {
	late := map[lateWrites]map[string]bool{}
	for k, r := range results {
		v, err := r.AsIntSlice()
		if err != nil {
			return err
		}
		if len(v) != len(b.ops[k])+1 {
			return fmt.Errorf("shard write returned %d values for %d writes", len(v), len(b.ops[k]))
		}
		for j, o := range b.ops[k] {
			if v[j] == 1 {
				at := lateWrites{b.by[k], b.win[k]}
				if late[at] == nil {
					late[at] = map[string]bool{}
				}
				late[at][o.member] = true
			}
		}
	}
	for at, ms := range late {
		if !redo {
			return fmt.Errorf("%d writes to the shards came too late twice", len(ms))
		}
		members := make([]string, 0, len(ms))
		for m := range ms {
			members = append(members, m)
		}
		if err := at.by.repairCluster(ctx, live[at.w], members, nil, false); err != nil {
			return err
		}
	}
	return nil
}

// remove is Remove on a sharded board. On one node it clears a member
// from the shard of its partition's value alone (every write there is one
// script, so that shard is the one holding it), every shard only for a
// member its partition does not hold; on a Cluster it sweeps every shard,
// as a member may be in two while a move is in flight.
func (lb *shardedBackend) remove(ctx context.Context, live []target, members []string) error {
	if !lb.cluster {
		return wrap("remove", lb.manyLocal(ctx, "remove", live, members, nil, 0))
	}
	rows, err := lb.partWrite(ctx, "remove", live, members, nil, 0)
	if rows == nil {
		return wrap("remove", err)
	}
	applied := lb.afterWrite(ctx, notGone(live, rows), lb.applyRows(ctx, "remove", live, members, rows, true))
	return cmp.Or(wrap("remove", err), applied)
}
