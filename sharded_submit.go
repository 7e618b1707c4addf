package leaderboard

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// indexRow is what the index did to one member in one window.
type indexRow struct {
	had, has  bool   // the member was, is in the index
	prev, now string // stored values before and after
	version   int64
	count     int64 // members in the index after the call
}

// shardIndex runs the first step of a write (see shard_index.lua) and
// returns rows[window][member].
func (lb *shardedBackend) shardIndex(ctx context.Context, mode string, live []target, members, values []string, slot int64) ([][]indexRow, error) {
	rows, _, err := lb.shardIndexID(ctx, mode, live, members, values, slot, submission{})
	return rows, err
}

// shardIndexID is shardIndex with a Submit's WithID id (sub.id), reporting
// whether the id was applied before.
func (lb *shardedBackend) shardIndexID(ctx context.Context, mode string, live []target, members, values []string, slot int64, sub submission) ([][]indexRow, bool, error) {
	ks := make([]string, 0, 2*len(live)+1)
	expires := make([]int64, 0, len(live))
	for _, tg := range live {
		idx := keys.Index(tg.key)
		ks = append(ks, idx, keys.Versions(idx))
		expires = append(expires, tg.expire)
	}
	call := scripts.ShardIndexCall(lb.writeHeader(slot, &sub), mode, ks, lb.keys.IDs(), expires, members, values)
	r, err := call.Exec(ctx, lb.client).ToArray()
	if err != nil {
		return nil, false, err
	}
	dup := false
	if sub.id != "" && len(r) > 0 {
		flag, err := r[len(r)-1].AsInt64()
		if err != nil {
			return nil, false, err
		}
		dup, r = flag == 1, r[:len(r)-1]
	}
	if len(r) != 4*len(live)*len(members) {
		return nil, false, fmt.Errorf("index script returned %d values, want %d", len(r), 4*len(live)*len(members))
	}
	rows := make([][]indexRow, len(live))
	for w := range live {
		rows[w] = make([]indexRow, len(members))
		for j := range members {
			v := r[4*(w*len(members)+j):]
			row := &rows[w][j]
			if row.prev, row.had, err = optString(&v[0]); err != nil {
				return nil, false, err
			}
			if row.now, row.has, err = optString(&v[1]); err != nil {
				return nil, false, err
			}
			if row.version, err = v[2].AsInt64(); err != nil {
				return nil, false, err
			}
			if row.count, err = v[3].AsInt64(); err != nil {
				return nil, false, err
			}
		}
	}
	return rows, dup, nil
}

// shardOp is one versioned write for shard_write.lua.
type shardOp struct {
	put     bool
	sweep   bool // a delete that leaves no tombstone where there is no copy
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
		op := "del"
		switch {
		case o.put:
			op = "put"
		case o.sweep:
			op = "sweep"
		}
		sops[j] = scripts.ShardOp{Op: op, Member: o.member, Version: o.version, Value: o.value}
	}
	ks := []string{key, keys.Versions(key)}
	if !lb.cluster {
		// One node: the put can see the index (see shard_write.lua).
		ks = append(ks, keys.Versions(keys.Index(tg.key)))
	}
	return scripts.ShardWriteCall(lb.readHeader(), ks, tg.expire, report, sops)
}

func (lb *shardedBackend) zcardCall(key string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zcard().Key(key).Build() }}
}

func (lb *shardedBackend) zscoreCall(key, member string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zscore().Key(key).Member(member).Build() }}
}

// submit is Submit on a sharded board: the index first, then the
// shards (see WithShards).
func (lb *shardedBackend) submit(ctx context.Context, sub submission, live []target, where []int, out []WindowResult) (bool, error) {
	value := lb.scriptValue(sub.score)
	if !lb.cluster {
		return lb.submitLocal(ctx, sub, value, live, where, out)
	}
	rows, dup, err := lb.shardIndexID(ctx, "submit", live, []string{sub.member}, []string{value}, sub.t, sub)
	if err != nil {
		return false, lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, sub.member))
	}
	calls, moves := lb.shardCalls(sub.member, live, rows)
	replies, swept, err := lb.shardReplies(ctx, sub.member, live, rows, moves, scripts.ExecMulti(ctx, lb.client, calls))
	if err != nil {
		return false, wrap("submit", err)
	}
	for w := range live {
		if err := lb.shardStanding(sub.member, rows[w][0], moves[w], replies[w], swept[w], &out[where[w]]); err != nil {
			return false, wrap("submit", err)
		}
	}
	return dup, nil
}

// shardMove is where one window's write takes a member: from its old shard
// (-1 when it was not ranked) to its new one.
type shardMove struct{ from, to int }

// shardCalls builds the second step of a Cluster-mode Submit, per window:
// the put into the member's new shard, the delete from its old one, and
// from every other shard its count (for the global rank) and the member's
// score there (a copy a crashed write left behind).
func (lb *shardedBackend) shardCalls(member string, live []target, rows [][]indexRow) ([]scripts.Call, []shardMove) {
	n := len(lb.bounds) + 1
	calls := make([]scripts.Call, 0, n*len(live))
	moves := make([]shardMove, len(live))
	for w, tg := range live {
		row := rows[w][0]
		mv := shardMove{from: -1, to: lb.shardOfString(row.now)}
		if row.had {
			mv.from = lb.shardOfString(row.prev)
		}
		moves[w] = mv
		for i := 0; i < n; i++ {
			switch i {
			case mv.to:
				calls = append(calls, lb.shardWriteCall(i, tg, true, []shardOp{{put: true, member: member, version: row.version, value: row.now}}))
			case mv.from:
				calls = append(calls, lb.shardWriteCall(i, tg, true, []shardOp{{member: member, version: row.version}}))
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
// after the sweep in swept[window][shard].
func (lb *shardedBackend) shardReplies(ctx context.Context, member string, live []target, rows [][]indexRow, moves []shardMove,
	results []rueidis.RedisResult) (replies [][]rueidis.RedisResult, swept []map[int]int64, err error) {
	n := len(lb.bounds) + 1
	var sweeps []scripts.Call
	var where [][2]int // window, shard of each sweep
	replies = make([][]rueidis.RedisResult, len(live))
	swept = make([]map[int]int64, len(live))
	at := 0
	for w, tg := range live {
		replies[w] = make([]rueidis.RedisResult, n)
		swept[w] = map[int]int64{}
		for i := 0; i < n; i++ {
			replies[w][i] = results[at]
			at++
			if i == moves[w].to || i == moves[w].from {
				continue
			}
			if err := results[at].Error(); err == nil {
				sweeps = append(sweeps, lb.shardWriteCall(i, tg, false, []shardOp{{sweep: true, member: member, version: rows[w][0].version}}))
				where = append(where, [2]int{w, i})
			} else if !rueidis.IsRedisNil(err) {
				return nil, nil, err
			}
			at++
		}
	}
	if len(sweeps) == 0 {
		return replies, swept, nil
	}
	for k, r := range scripts.ExecMulti(ctx, lb.client, sweeps) {
		v, err := r.AsIntSlice()
		if err != nil || len(v) != 1 {
			return nil, nil, fmt.Errorf("shard sweep returned %v: %w", v, err)
		}
		swept[where[k][0]][where[k][1]] = v[0]
	}
	return replies, swept, nil
}

// shardStanding works out one window's result of a Cluster-mode Submit
// from the index's row and the shards' replies: the standing after, and
// the entry before, with global ranks from the shards' counts.
func (lb *shardedBackend) shardStanding(member string, row indexRow, mv shardMove, replies []rueidis.RedisResult, swept map[int]int64, wr *WindowResult) error {
	cards := make([]int64, len(replies))
	var put, del [4]int64 // before, after, worse after, card
	for i, r := range replies {
		if i != mv.to && i != mv.from {
			var err error
			if c, ok := swept[i]; ok {
				cards[i] = c
			} else if cards[i], err = r.AsInt64(); err != nil {
				return err
			}
			continue
		}
		v, err := r.AsIntSlice()
		if err != nil || len(v) != 4 {
			return fmt.Errorf("shard write returned %v: %w", v, err)
		}
		cards[i] = v[3]
		if i == mv.to {
			copy(put[:], v)
		} else {
			copy(del[:], v)
		}
	}
	after, _ := strconv.ParseFloat(row.now, 64)
	rank, worse := lb.globalRank(cards, mv.to, put[1], put[2])
	wr.Standing = lb.standing(member, lb.plain(after), rank, worse, row.count)
	if !row.had {
		wr.Changed = true
		return nil
	}
	prev, _ := strconv.ParseFloat(row.prev, 64)
	inPrev := put[0]
	if mv.from != mv.to {
		inPrev = del[0]
		cards[mv.from]++ // as they were before this write
		cards[mv.to]--
	}
	prank, _ := lb.globalRank(cards, mv.from, inPrev, 0)
	wr.Previous = Entry{Member: member, Score: lb.plain(prev), Rank: prank}
	wr.Changed = lb.plain(prev) != lb.plain(after)
	return nil
}

// submitLocal is Submit on a sharded board whose keys all live on one node:
// one script, one round trip (see shard_local.lua).
func (lb *shardedBackend) submitLocal(ctx context.Context, sub submission, value string, live []target, where []int, out []WindowResult) (bool, error) {
	scale, bounds := lb.scriptBounds()
	call := scripts.ShardLocalCall(lb.writeHeader(sub.t, &sub), lb.localKeys(live), lb.keys.IDs(), sub.member, value, scale, bounds, expiresOf(live))
	replies, err := call.Exec(ctx, lb.client).ToArray()
	if err != nil {
		return false, lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, sub.member))
	}
	return lb.submitReplies(replies, sub.member, live, where, out)
}

// localKeys are the keys of the live periods for the one-node scripts: per
// window its index and index versions, then every shard's sorted set and
// version hash.
func (lb *shardedBackend) localKeys(live []target) []string {
	n := len(lb.bounds) + 1
	ks := make([]string, 0, len(live)*(2+2*n))
	for _, tg := range live {
		idx := keys.Index(tg.key)
		ks = append(ks, idx, keys.Versions(idx))
		for i := 0; i < n; i++ {
			key := lb.shardKey(i, tg)
			ks = append(ks, key, keys.Versions(key))
		}
	}
	return ks
}

// scriptBounds are the tie-break's 10^decimals ("1" for none) and the
// bounds, as the one-node scripts take them.
func (lb *shardedBackend) scriptBounds() (scale string, bounds []string) {
	scale = "1"
	if lb.tb != nil {
		scale = formatScore(lb.tb.scale)
	}
	bounds = make([]string, len(lb.bounds))
	for i, b := range lb.bounds {
		bounds[i] = formatScore(b)
	}
	return scale, bounds
}

// manyLocal is SubmitMany ("submit") or Remove ("remove") on a sharded
// board whose keys all live on one node: one script, one round trip,
// atomic (see shard_local_many.lua).
func (lb *shardedBackend) manyLocal(ctx context.Context, mode string, live []target, members, values []string, slot int64) error {
	scale, bounds := lb.scriptBounds()
	call := scripts.ShardLocalManyCall(lb.writeHeader(slot, &submission{}), mode, lb.localKeys(live), scale, bounds, expiresOf(live), members, values)
	return call.Exec(ctx, lb.client).Error()
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
		if err := lb.manyLocal(ctx, "submit", live, members, values, slot); err != nil {
			return lb.scriptErr("submit many", err, "a total")
		}
		return nil
	}
	rows, err := lb.shardIndex(ctx, "submit", live, members, values, slot)
	if err != nil {
		return lb.scriptErr("submit many", err, "a total")
	}
	return lb.applyRows(ctx, "submit many", live, members, rows, false)
}

// applyRows sends the index's changes to the shards, one script call per
// shard and window. With sweep, every other shard also loses any copy of
// the members that a crashed write left behind.
func (lb *shardedBackend) applyRows(ctx context.Context, op string, live []target, members []string, rows [][]indexRow, sweep bool) error {
	var calls []scripts.Call
	for w, tg := range live {
		ops := make([][]shardOp, len(lb.bounds)+1)
		for j, m := range members {
			row := rows[w][j]
			if sweep {
				keep, from := -1, -1
				if row.has {
					keep = lb.shardOfString(row.now)
				}
				if row.had {
					from = lb.shardOfString(row.prev)
				}
				for i := range ops {
					if i != keep && i != from {
						ops[i] = append(ops[i], shardOp{sweep: true, member: m, version: row.version})
					}
				}
			}
			if row.had == row.has && row.prev == row.now {
				continue
			}
			to := -1
			if row.has {
				to = lb.shardOfString(row.now)
				ops[to] = append(ops[to], shardOp{put: true, member: m, version: row.version, value: row.now})
			}
			if row.had {
				if from := lb.shardOfString(row.prev); from != to {
					ops[from] = append(ops[from], shardOp{member: m, version: row.version})
				}
			}
		}
		for i, o := range ops {
			if len(o) > 0 {
				calls = append(calls, lb.shardWriteCall(i, tg, false, o))
			}
		}
	}
	for _, r := range scripts.ExecMulti(ctx, lb.client, calls) {
		if err := r.Error(); err != nil {
			return wrap(op, err)
		}
	}
	return nil
}

// remove is Remove on a sharded board.
func (lb *shardedBackend) remove(ctx context.Context, live []target, members []string) error {
	if !lb.cluster {
		return wrap("remove", lb.manyLocal(ctx, "remove", live, members, nil, 0))
	}
	rows, err := lb.shardIndex(ctx, "remove", live, members, nil, 0)
	if err != nil {
		return wrap("remove", err)
	}
	return lb.applyRows(ctx, "remove", live, members, rows, true)
}
