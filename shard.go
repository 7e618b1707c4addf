package leaderboard

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// WithShards splits the score axis at k strictly ascending, finite bounds
// into k+1 shards, so that one board can outgrow one Redis node: shard i
// holds the members whose plain score has exactly i bounds at or below it,
// and each shard of each window period is a sorted set with a hash tag of
// its own ("lb:{name#s3}:weekly:2026-W49"), which Redis Cluster places on
// any node. Default: no bounds, one sorted set per period.
//
// Every answer stays exact: a global rank is the member count of the better
// shards plus the rank inside the member's own shard, read in one DoMulti
// that rueidis sends to the nodes in parallel. Round trips: Rank, Top, Count
// and Among cost one; SubmitMany, Remove, Around and Page two; Submit two on
// a Cluster and one on a single node (standalone or Sentinel), where one
// script can reach every shard.
//
// # Consistency
//
// A sharded board keeps an index beside its shards, in the board's own slot:
// every member's stored value and a version. A write first applies the policy
// to the index in one script, which serializes all writes to a member (no
// increment or best is lost, whichever shards it moves between) and gives
// the change a new version; then it puts the member into its new shard and,
// when it crossed a bound, deletes it from the old one. Shards apply a
// member's writes only in version order, so late or repeated writes are
// ignored and every shard converges to the index.
//
// Each shard is read atomically, but a read that spans shards on several
// nodes is not a snapshot of all of them. While a member crosses a bound
// (between the two shard writes of its Submit, typically under a
// millisecond) a read may find it in both shards: reads keep only the copy
// with the newer version, so a member is never returned twice, but the
// counts of other members' ranks may be off by that one member for that
// instant. Count and every Total come from the index and are exact. A
// process that dies between a write's two round trips leaves the member's
// shard entry behind the index until the member's next Submit or Remove
// (which sweep every shard for stale copies, at the cost of a third round
// trip when they find one) or a Check with repair. SubmitMany does not
// sweep.
//
// Choose bounds from a histogram of your scores so the shards hold similar
// numbers of members (README: "Sharding"). Bounds that are NaN, ±Inf,
// unsorted or repeated are refused by New with ErrInvalidArgument.
func WithShards(bounds ...float64) Option {
	return func(c *config) {
		c.shards = append([]float64(nil), bounds...)
		for i, b := range bounds {
			if math.IsNaN(b) || math.IsInf(b, 0) {
				c.errs = append(c.errs, fmt.Errorf("WithShards: bound %v is not finite", b))
			} else if i > 0 && !(bounds[i-1] < b) {
				c.errs = append(c.errs, fmt.Errorf("WithShards: bounds must be strictly ascending: %v then %v", bounds[i-1], b))
			}
		}
	}
}

// CheckReport is what Check found in one window period of a sharded board.
// Every list is sorted by member name.
type CheckReport struct {
	// Window is the window's Name.
	Window string
	// Period is the ID of the period checked.
	Period string
	// Members is the number of members in the index.
	Members int64
	// Misplaced members are in a shard their score does not belong to, and
	// not in the right one.
	Misplaced []string
	// Duplicated members are in more than one shard.
	Duplicated []string
	// Missing members are in the index and in no shard.
	Missing []string
	// Stray members are in a shard and not in the index.
	Stray []string
	// Stale members are in the right shard with a score that differs from
	// the index.
	Stale []string
	// Repaired reports that repair was asked and every finding was fixed.
	Repaired bool
}

// Clean reports whether the check found nothing.
func (r CheckReport) Clean() bool {
	return len(r.Misplaced)+len(r.Duplicated)+len(r.Missing)+len(r.Stray)+len(r.Stale) == 0
}

// Check scans a sharded board's current period of every window (or the one
// the queries pick; In restricts it to one window) and compares each shard
// with the index: members in the wrong shard, in two shards, in none, in a
// shard but not in the index, or with a stale score. With repair, it
// rewrites every finding from the index. It reads whole shards, so run it
// from maintenance jobs and tests, not on a request path. On an unsharded
// board it returns ErrInvalidArgument.
func (lb *Leaderboard) Check(ctx context.Context, repair bool, q ...Query) ([]CheckReport, error) {
	qq, err := parseQueries(q)
	if err != nil {
		return nil, err
	}
	windows := lb.windows
	if qq.window != nil {
		w, err := lb.window(qq.window)
		if err != nil {
			return nil, err
		}
		windows = []Window{w}
	}
	at := qq.at
	if at.IsZero() {
		at = lb.now()
	}
	var out []CheckReport
	for _, w := range windows {
		tg, err := lb.target(w, at)
		if err != nil {
			return nil, err
		}
		r, err := lb.be.check(ctx, tg, repair)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func (lb *shardedBackend) check(ctx context.Context, tg target, repair bool) (CheckReport, error) {
	r := CheckReport{Window: tg.window.Name(), Period: tg.period.ID}
	truth, err := lb.scanHash(ctx, keys.Index(tg.key))
	if err != nil {
		return r, err
	}
	r.Members = int64(len(truth))
	where := map[string][]int{}    // member -> shards holding it
	found := map[string][]string{} // member -> values, as where
	for i := 0; i <= len(lb.bounds); i++ {
		zs, err := lb.scanSet(ctx, lb.shardKey(i, tg))
		if err != nil {
			return r, err
		}
		for m, v := range zs {
			where[m] = append(where[m], i)
			found[m] = append(found[m], v)
		}
	}
	bad := map[string]bool{}
	for m, v := range truth {
		right := lb.shardOfString(v)
		in := where[m]
		switch {
		case len(in) == 0:
			r.Missing = append(r.Missing, m)
		case len(in) > 1:
			r.Duplicated = append(r.Duplicated, m)
		case in[0] != right:
			r.Misplaced = append(r.Misplaced, m)
		case !sameValue(found[m][0], v):
			r.Stale = append(r.Stale, m)
		default:
			continue
		}
		bad[m] = true
	}
	for m := range where {
		if _, ok := truth[m]; !ok {
			r.Stray = append(r.Stray, m)
			bad[m] = true
		}
	}
	for _, l := range [][]string{r.Misplaced, r.Duplicated, r.Missing, r.Stray, r.Stale} {
		slices.Sort(l)
	}
	if !repair || len(bad) == 0 {
		return r, nil
	}
	members := make([]string, 0, len(bad))
	for m := range bad {
		members = append(members, m)
	}
	slices.Sort(members)
	// New versions through the index, so that the repairs win over any
	// write still in flight, then every shard rewritten from the index.
	rows, err := lb.shardIndex(ctx, "touch", []target{tg}, members, nil, 0)
	if err != nil {
		return r, wrap("check", err)
	}
	ops := make([][]shardOp, len(lb.bounds)+1)
	for j, m := range members {
		row := rows[0][j]
		right := -1
		if row.had {
			right = lb.shardOfString(row.now)
			ops[right] = append(ops[right], shardOp{put: true, member: m, version: row.version, value: row.now})
		}
		for _, i := range where[m] {
			if i != right {
				ops[i] = append(ops[i], shardOp{member: m, version: row.version})
			}
		}
	}
	var calls []scripts.Call
	for i, o := range ops {
		if len(o) > 0 {
			calls = append(calls, lb.shardWriteCall(i, tg, o))
		}
	}
	for _, res := range scripts.ExecMulti(ctx, lb.client, calls) {
		if err := res.Error(); err != nil {
			return r, wrap("check", err)
		}
	}
	r.Repaired = true
	return r, nil
}

// sameValue compares two stored values as numbers: Redis and Lua may print
// the same double differently.
func sameValue(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// scanHash reads a whole hash, field -> value, with HSCAN.
func (lb *shardedBackend) scanHash(ctx context.Context, key string) (map[string]string, error) {
	return lb.scanPairs(ctx, func(cursor uint64) rueidis.Completed {
		return lb.client.B().Hscan().Key(key).Cursor(cursor).Count(1000).Build()
	})
}

// scanSet reads a whole sorted set, member -> stored value, with ZSCAN.
func (lb *shardedBackend) scanSet(ctx context.Context, key string) (map[string]string, error) {
	return lb.scanPairs(ctx, func(cursor uint64) rueidis.Completed {
		return lb.client.B().Zscan().Key(key).Cursor(cursor).Count(1000).Build()
	})
}

// scanPairs runs a SCAN-style command to the end, collecting its flat
// name, value, name, value replies.
func (lb *shardedBackend) scanPairs(ctx context.Context, cmd func(cursor uint64) rueidis.Completed) (map[string]string, error) {
	out := map[string]string{}
	var cursor uint64
	for {
		e, err := lb.client.Do(ctx, cmd(cursor)).AsScanEntry()
		if err != nil {
			return nil, wrap("check", err)
		}
		for i := 0; i+1 < len(e.Elements); i += 2 {
			out[e.Elements[i]] = e.Elements[i+1]
		}
		if e.Cursor == 0 {
			return out, nil
		}
		cursor = e.Cursor
	}
}

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

// shardsBestFirst lists the shards in the board's order.
func (lb *shardedBackend) shardsBestFirst() []int {
	n := len(lb.bounds) + 1
	out := make([]int, n)
	for i := range out {
		out[i] = i
		if lb.high() {
			out[i] = n - 1 - i
		}
	}
	return out
}

func (lb *shardedBackend) shardKey(i int, tg target) string {
	return lb.keys.Shard(i).Period(tg.window.Name(), tg.period.ID)
}

// shardedBackend is a board split by score into shards (WithShards), each
// a sorted set with a hash tag of its own, beside an index in the board's
// slot that serializes every member's writes. cluster is whether the keys
// may live on several nodes: a write then takes two steps (index, shards),
// else one script reaches every key.
type shardedBackend struct {
	*Leaderboard
	cluster bool
}

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
	args := make([]string, 0, 10+len(live)+2*len(members))
	args = lb.tieBreakArgs(append(args, mode, lb.policyArg(), flag(lb.high())), slot)
	args = lb.idArgs(args, sub)
	for _, tg := range live {
		idx := keys.Index(tg.key)
		ks = append(ks, idx, keys.Versions(idx))
		args = append(args, strconv.FormatInt(tg.expire, 10))
	}
	if sub.id != "" {
		ks = append(ks, lb.keys.IDs())
	}
	for i, m := range members {
		args = append(args, m)
		if values != nil {
			args = append(args, values[i])
		}
	}
	r, err := scripts.ShardIndex.Exec(ctx, lb.client, ks, args).ToArray()
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

func optString(m *rueidis.RedisMessage) (string, bool, error) {
	if m.IsNil() {
		return "", false, nil
	}
	s, err := m.ToString()
	return s, true, err
}

// shardOp is one versioned write for shard_write.lua.
type shardOp struct {
	put     bool
	sweep   bool // a delete that leaves no tombstone where there is no copy
	member  string
	version int64
	value   string
}

func (lb *shardedBackend) shardWriteCall(i int, tg target, ops []shardOp) scripts.Call {
	key := lb.shardKey(i, tg)
	args := make([]string, 0, 4+4*len(ops))
	args = append(args, flag(lb.high()), flag(lb.ranking == Competition), lb.slotsArg(), strconv.FormatInt(tg.expire, 10))
	for _, o := range ops {
		op := "del"
		switch {
		case o.put:
			op = "put"
		case o.sweep:
			op = "sweep"
		}
		args = append(args, op, o.member, strconv.FormatInt(o.version, 10), o.value)
	}
	ks := []string{key, keys.Versions(key)}
	if !lb.cluster {
		// One node: the put can see the index (see shard_write.lua).
		ks = append(ks, keys.Versions(keys.Index(tg.key)))
	}
	return scripts.Call{Script: scripts.ShardWrite, Keys: ks, Args: args}
}

func (lb *shardedBackend) zcardCall(key string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zcard().Key(key).Build() }}
}

func (lb *shardedBackend) zscoreCall(key, member string) scripts.Call {
	return scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zscore().Key(key).Member(member).Build() }}
}

// submit is Submit on a sharded board: the index first, then the
// shards (see WithShards).
func (lb *shardedBackend) submit(ctx context.Context, sub submission, live []target, where []int, res *Result) error {
	out := res.Windows
	value := formatScore(sub.score)
	if lb.tb != nil {
		value = strconv.FormatInt(sub.s, 10)
	}
	if !lb.cluster {
		return lb.submitLocal(ctx, sub, value, live, where, res)
	}
	rows, dup, err := lb.shardIndexID(ctx, "submit", live, []string{sub.member}, []string{value}, sub.t, sub)
	if err != nil {
		return lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, sub.member))
	}
	res.Duplicate = dup
	n := len(lb.bounds) + 1
	calls := make([]scripts.Call, 0, n*len(live))
	type move struct{ from, to int }
	moves := make([]move, len(live))
	for w, tg := range live {
		row := rows[w][0]
		mv := move{from: -1, to: lb.shardOfString(row.now)}
		if row.had {
			mv.from = lb.shardOfString(row.prev)
		}
		moves[w] = mv
		for i := 0; i < n; i++ {
			switch i {
			case mv.to:
				calls = append(calls, lb.shardWriteCall(i, tg, []shardOp{{put: true, member: sub.member, version: row.version, value: row.now}}))
			case mv.from:
				calls = append(calls, lb.shardWriteCall(i, tg, []shardOp{{member: sub.member, version: row.version}}))
			default:
				// The count for the global rank, and whether a copy of the
				// member is here that a crashed write left behind.
				calls = append(calls, lb.zcardCall(lb.shardKey(i, tg)), lb.zscoreCall(lb.shardKey(i, tg), sub.member))
			}
		}
	}
	results := scripts.ExecMulti(ctx, lb.client, calls)
	var sweeps []scripts.Call
	type sweep struct{ window, shard int }
	var swept []sweep
	cardsAfterSweep := map[sweep]int64{}
	at := 0
	replies := make([][]rueidis.RedisResult, len(live)) // per window, per shard: its replies
	for w, tg := range live {
		replies[w] = make([]rueidis.RedisResult, n)
		for i := 0; i < n; i++ {
			replies[w][i] = results[at]
			at++
			if i == moves[w].to || i == moves[w].from {
				continue
			}
			if err := results[at].Error(); err == nil {
				sweeps = append(sweeps, lb.shardWriteCall(i, tg, []shardOp{{sweep: true, member: sub.member, version: rows[w][0].version}}))
				swept = append(swept, sweep{w, i})
			} else if !rueidis.IsRedisNil(err) {
				return wrap("submit", err)
			}
			at++
		}
	}
	if len(sweeps) > 0 {
		// Rare: a third round trip, only after a crashed or racing write.
		for k, r := range scripts.ExecMulti(ctx, lb.client, sweeps) {
			v, err := r.AsIntSlice()
			if err != nil || len(v) != 4 {
				return wrap("submit", fmt.Errorf("shard sweep returned %v: %w", v, err))
			}
			cardsAfterSweep[swept[k]] = v[3]
		}
	}
	for w := range live {
		row, mv := rows[w][0], moves[w]
		cards := make([]int64, n)
		var put, del [4]int64 // before, after, worse after, card
		for i := 0; i < n; i++ {
			r := replies[w][i]
			if i != mv.to && i != mv.from {
				if c, ok := cardsAfterSweep[sweep{w, i}]; ok {
					cards[i] = c
				} else if cards[i], err = r.AsInt64(); err != nil {
					return wrap("submit", err)
				}
				continue
			}
			v, err := r.AsIntSlice()
			if err != nil || len(v) != 4 {
				return wrap("submit", fmt.Errorf("shard write returned %v: %w", v, err))
			}
			cards[i] = v[3]
			if i == mv.to {
				copy(put[:], v)
			} else {
				copy(del[:], v)
			}
		}
		wr := &out[where[w]]
		after, _ := strconv.ParseFloat(row.now, 64)
		rank, worse := lb.globalRank(cards, mv.to, put[1], put[2])
		wr.Standing = lb.standing(sub.member, lb.plain(after), rank, worse, row.count)
		if !row.had {
			wr.Changed = true
			continue
		}
		prev, _ := strconv.ParseFloat(row.prev, 64)
		inPrev := put[0]
		if mv.from != mv.to {
			inPrev = del[0]
			cards[mv.from]++ // as they were before this write
			cards[mv.to]--
		}
		prank, _ := lb.globalRank(cards, mv.from, inPrev, 0)
		wr.Previous = Entry{Member: sub.member, Score: lb.plain(prev), Rank: prank}
		wr.Changed = lb.plain(prev) != lb.plain(after)
	}
	return nil
}

// submitLocal is Submit on a sharded board whose keys all live on one node:
// one script, one round trip (see shard_local.lua).
func (lb *shardedBackend) submitLocal(ctx context.Context, sub submission, value string, live []target, where []int, res *Result) error {
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
	scale := "1"
	if lb.tb != nil {
		scale = formatScore(lb.tb.scale)
	}
	args := make([]string, 0, 11+n+len(live))
	args = append(args, sub.member, value, lb.policyArg(), flag(lb.high()), flag(lb.ranking == Competition))
	args = lb.tieBreakArgs(args, sub.t)
	args = append(args, scale, strconv.Itoa(n))
	for _, b := range lb.bounds {
		args = append(args, formatScore(b))
	}
	for _, tg := range live {
		args = append(args, strconv.FormatInt(tg.expire, 10))
	}
	args = lb.idArgs(args, sub)
	if sub.id != "" {
		ks = append(ks, lb.keys.IDs())
	}
	replies, err := scripts.ShardLocal.Exec(ctx, lb.client, ks, args).ToArray()
	if err != nil {
		return lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, sub.member))
	}
	return lb.submitReplies(replies, sub.member, live, where, res)
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

// submitMany is SubmitMany on a sharded board.
func (lb *shardedBackend) submitMany(ctx context.Context, scores map[string]float64, live []target, slot int64) error {
	members := make([]string, 0, len(scores))
	values := make([]string, 0, len(scores))
	for m, s := range scores {
		v := formatScore(s)
		if lb.tb != nil {
			scaled, _ := lb.tb.scaled(s) // checked by SubmitMany
			v = strconv.FormatInt(scaled, 10)
		}
		members = append(members, m)
		values = append(values, v)
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
				calls = append(calls, lb.shardWriteCall(i, tg, o))
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
	rows, err := lb.shardIndex(ctx, "remove", live, members, nil, 0)
	if err != nil {
		return wrap("remove", err)
	}
	return lb.applyRows(ctx, "remove", live, members, rows, true)
}

// shardEntry is an entry read from one shard, with what dedupes it.
type shardEntry struct {
	Entry
	stored  float64
	version int64
	shard   int
}

// shardRange reads count entries from the global position start, given the
// shards' member counts, best first, with each shard's stale copies of
// moving members dropped. It also returns the competition rank of the
// first entry.
func (lb *shardedBackend) shardRange(ctx context.Context, tg target, cards []int64, start, count int64) ([]Entry, int64, error) {
	var calls []scripts.Call
	var shards []int
	offset := int64(0)
	for _, i := range lb.shardsBestFirst() {
		lo, hi := max(start-offset, 0), min(start+count-offset, cards[i])
		if lo < hi {
			shards = append(shards, i)
			calls = append(calls, lb.shardReadCall(i, tg, "range", strconv.FormatInt(lo, 10), strconv.FormatInt(hi-lo, 10)))
		}
		offset += cards[i]
	}
	if len(calls) == 0 {
		return []Entry{}, 0, nil
	}
	res := scripts.ExecMulti(ctx, lb.client, calls)
	var all []shardEntry
	var first int64
	for k, r := range res {
		es, betterIn, err := lb.shardRangeReply(r, shards[k])
		if err != nil {
			return nil, 0, err
		}
		if k == 0 {
			first, _ = lb.globalRank(cards, shards[k], betterIn+1, 0)
		}
		all = append(all, es...)
	}
	return dedupe(all), first, nil
}

func (lb *shardedBackend) shardReadCall(i int, tg target, args ...string) scripts.Call {
	key := lb.shardKey(i, tg)
	return scripts.Call{Script: scripts.ShardRead, Keys: []string{key, keys.Versions(key)},
		Args: append([]string{flag(lb.high()), lb.slotsArg()}, args...)}
}

func (lb *shardedBackend) shardRangeReply(r rueidis.RedisResult, shard int) ([]shardEntry, int64, error) {
	v, err := r.ToArray()
	if err != nil {
		return nil, 0, err
	}
	if len(v) < 2 || (len(v)-2)%3 != 0 {
		return nil, 0, fmt.Errorf("shard read returned %d values", len(v))
	}
	betterIn, err := v[1].AsInt64()
	if err != nil {
		return nil, 0, err
	}
	es := make([]shardEntry, 0, (len(v)-2)/3)
	for j := 2; j < len(v); j += 3 {
		m, err := v[j].ToString()
		if err != nil {
			return nil, 0, err
		}
		stored, err := v[j+1].AsFloat64()
		if err != nil {
			return nil, 0, err
		}
		ver, err := v[j+2].AsInt64()
		if err != nil {
			return nil, 0, err
		}
		es = append(es, shardEntry{Entry: Entry{Member: m, Score: lb.plain(stored)}, stored: stored, version: ver, shard: shard})
	}
	return es, betterIn, nil
}

// dedupe keeps, of a member found in two shards while it moves, the copy
// with the newer version, in the order of the input.
func dedupe(all []shardEntry) []Entry {
	newest := make(map[string]int64, len(all))
	dup := false
	for _, e := range all {
		if v, ok := newest[e.Member]; ok {
			dup = true
			if e.version <= v {
				continue
			}
		}
		newest[e.Member] = e.version
	}
	out := make([]Entry, 0, len(all))
	for _, e := range all {
		if dup {
			if v := newest[e.Member]; v != e.version {
				continue
			}
			newest[e.Member] = -1 // once
		}
		out = append(out, e.Entry)
	}
	return out
}

// shardCards reads every shard's member count and the index's, in one
// round trip.
func (lb *shardedBackend) shardCards(ctx context.Context, tg target) ([]int64, int64, error) {
	n := len(lb.bounds) + 1
	cmds := make(rueidis.Commands, 0, n+1)
	for i := 0; i < n; i++ {
		cmds = append(cmds, lb.client.B().Zcard().Key(lb.shardKey(i, tg)).Build())
	}
	cmds = append(cmds, lb.client.B().Hlen().Key(keys.Index(tg.key)).Build())
	res := lb.client.DoMulti(ctx, cmds...)
	cards := make([]int64, n)
	for i := range cards {
		var err error
		if cards[i], err = res[i].AsInt64(); err != nil {
			return nil, 0, err
		}
	}
	total, err := res[n].AsInt64()
	return cards, total, err
}

// shardStanding is a member's place found by reading every shard at once.
type shardStanding struct {
	found         bool
	stored        float64
	shard         int
	pos           int64 // 0-based position on the board
	better, worse int64 // members strictly better, worse (plain scores)
	cards         []int64
	total         int64 // members in the index
}

// locate finds member on a sharded board in one round trip.
func (lb *shardedBackend) locate(ctx context.Context, tg target, member string) (shardStanding, error) {
	n := len(lb.bounds) + 1
	calls := make([]scripts.Call, 0, n+1)
	for i := 0; i < n; i++ {
		calls = append(calls, lb.shardReadCall(i, tg, "rank", member))
	}
	idx := keys.Index(tg.key)
	calls = append(calls, scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Hlen().Key(idx).Build() }})
	res := scripts.ExecMulti(ctx, lb.client, calls)
	st := shardStanding{cards: make([]int64, n)}
	var err error
	if st.total, err = res[n].AsInt64(); err != nil {
		return st, err
	}
	var version int64 = -1
	var posIn, betterIn, worseIn int64
	for i := 0; i < n; i++ {
		v, err := res[i].ToArray()
		if err != nil {
			return st, err
		}
		if len(v) != 6 {
			return st, fmt.Errorf("shard read returned %d values, want 6", len(v))
		}
		if st.cards[i], err = v[0].AsInt64(); err != nil {
			return st, err
		}
		if v[1].IsNil() {
			continue
		}
		var ints [4]int64
		for k := range ints {
			if ints[k], err = v[2+k].AsInt64(); err != nil {
				return st, err
			}
		}
		if ints[0] <= version {
			continue // a stale copy left by a move in flight
		}
		if st.stored, err = v[1].AsFloat64(); err != nil {
			return st, err
		}
		st.found, st.shard, version = true, i, ints[0]
		posIn, betterIn, worseIn = ints[1], ints[2], ints[3]
	}
	if st.found {
		st.pos, _ = lb.globalRank(st.cards, st.shard, posIn, 0)
		st.better, st.worse = lb.globalRank(st.cards, st.shard, betterIn, worseIn)
	}
	return st, nil
}

func (lb *shardedBackend) rank(ctx context.Context, tg target, member string) (Standing, error) {
	st, err := lb.locate(ctx, tg, member)
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	if !st.found {
		return Standing{}, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	if lb.ranking == Competition {
		return lb.standing(member, lb.plain(st.stored), st.better+1, st.worse, st.total), nil
	}
	return lb.standing(member, lb.plain(st.stored), st.pos+1, 0, st.total), nil
}

func (lb *shardedBackend) top(ctx context.Context, tg target, n int) ([]Entry, error) {
	var calls []scripts.Call
	for _, i := range lb.shardsBestFirst() {
		calls = append(calls, lb.shardReadCall(i, tg, "range", "0", strconv.Itoa(n)))
	}
	var all []shardEntry
	for k, r := range scripts.ExecMulti(ctx, lb.client, calls) {
		es, _, err := lb.shardRangeReply(r, lb.shardsBestFirst()[k])
		if err != nil {
			return nil, wrap("top", err)
		}
		all = append(all, es...)
		if len(all) >= 2*n {
			break // enough even if every one of them were a duplicate
		}
	}
	es := dedupe(all)
	if len(es) > n {
		es = es[:n]
	}
	lb.rankEntries(es, 0, 1)
	return es, nil
}

func (lb *shardedBackend) page(ctx context.Context, tg target, number, size int) (Page, error) {
	cards, total, err := lb.shardCards(ctx, tg)
	if err != nil {
		return Page{}, wrap("page", err)
	}
	start := int64(number-1) * int64(size)
	es, first, err := lb.shardRange(ctx, tg, cards, start, int64(size))
	if err != nil {
		return Page{}, wrap("page", err)
	}
	lb.rankEntries(es, start, first)
	return Page{Entries: es, Number: number, Size: size, Total: total}, nil
}

func (lb *shardedBackend) around(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	st, err := lb.locate(ctx, tg, member)
	if err != nil {
		return nil, wrap("around", err)
	}
	if !st.found {
		return nil, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	var sum int64
	for _, c := range st.cards {
		sum += c
	}
	count := int64(2*radius + 1)
	start := max(0, min(st.pos-int64(radius), sum-count))
	es, first, err := lb.shardRange(ctx, tg, st.cards, start, count)
	if err != nil {
		return nil, wrap("around", err)
	}
	lb.rankEntries(es, start, first)
	return es, nil
}

// among reads members' stored values from every shard at once,
// keeping each member's newest copy.
func (lb *shardedBackend) among(ctx context.Context, tg target, members []string) ([]Entry, error) {
	n := len(lb.bounds) + 1
	cmds := make(rueidis.Commands, 0, 2*n)
	for i := 0; i < n; i++ {
		key := lb.shardKey(i, tg)
		cmds = append(cmds, lb.client.B().Zmscore().Key(key).Member(members...).Build(),
			lb.client.B().Hmget().Key(keys.Versions(key)).Field(members...).Build())
	}
	res := lb.client.DoMulti(ctx, cmds...)
	best := make(map[string]shardEntry, len(members))
	for i := 0; i < n; i++ {
		scores, err := res[2*i].ToArray()
		if err != nil {
			return nil, wrap("among", err)
		}
		versions, err := res[2*i+1].ToArray()
		if err != nil {
			return nil, wrap("among", err)
		}
		if len(scores) != len(members) || len(versions) != len(members) {
			return nil, wrap("among", fmt.Errorf("shard %d answered %d scores and %d versions for %d members", i, len(scores), len(versions), len(members)))
		}
		for j, m := range members {
			s, ok, err := optFloat(&scores[j])
			if err != nil {
				return nil, wrap("among", err)
			}
			if !ok {
				continue
			}
			var ver int64
			if !versions[j].IsNil() {
				if ver, err = versions[j].AsInt64(); err != nil {
					return nil, wrap("among", err)
				}
			}
			if cur, seen := best[m]; !seen || ver > cur.version {
				best[m] = shardEntry{Entry: Entry{Member: m, Score: s}, version: ver}
			}
		}
	}
	es := make([]Entry, 0, len(best))
	for _, e := range best {
		es = append(es, e.Entry)
	}
	return es, nil
}

// count reads the index, not the shards: it is exact even while members move.
func (lb *shardedBackend) count(ctx context.Context, tg target) (int64, error) {
	n, err := lb.client.Do(ctx, lb.client.B().Hlen().Key(keys.Index(tg.key)).Build()).AsInt64()
	return n, wrap("count", err)
}

// verifyReads reads the index, which holds a sharded board's values; the
// shards are Check's business.
func (lb *shardedBackend) verifyReads(tg target) (read func(members []string) rueidis.Completed, count rueidis.Completed) {
	idx := keys.Index(tg.key)
	read = func(members []string) rueidis.Completed {
		return lb.client.B().Hmget().Key(idx).Field(members...).Build()
	}
	return read, lb.client.B().Hlen().Key(idx).Build()
}

// rebuildKeys are the keys one period rebuilds, each with the fresh key it
// is built in first (same slot).
func (lb *shardedBackend) rebuildKeys(tg target) (zsets, hashes []string) {
	for i := 0; i <= len(lb.bounds); i++ {
		k := lb.shardKey(i, tg)
		zsets = append(zsets, k)
		hashes = append(hashes, keys.Versions(k))
	}
	idx := keys.Index(tg.key)
	return zsets, append(hashes, idx, keys.Versions(idx))
}

// rebuildAdd puts a standing into its shard and its version hash, and into
// the index and its versions (the last two hashes of rebuildKeys), all at
// version 1.
func (lb *shardedBackend) rebuildAdd(member, value string, v float64, add rebuildAdder) error {
	s, n := lb.shardOf(v), len(lb.bounds)+1
	return errors.Join(add(s, false, member, value), add(s, true, member, "1"),
		add(n, true, member, value), add(n+1, true, member, "1"))
}
