package leaderboard

import (
	"cmp"
	"context"
	"fmt"
	"math"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// plainBackend is a board without shards: one sorted set per window
// period, every key in the board's slot, every operation one round trip.
type plainBackend struct{ *Leaderboard }

// layoutKeys: one sorted set a period, whose key is the target's own.
func (lb *plainBackend) layoutKeys(window, period string) (shards, shadow []string) {
	return nil, nil
}

// top reads the first n entries of one sorted set: one ZRANGE, or with
// IncludeData range.lua, which reads their data too.
func (lb *plainBackend) top(ctx context.Context, tg target, n int) ([]Entry, error) {
	if lb.hotServes(tg, 0, n) {
		if es, ok, err := lb.hotFirst(ctx, tg, n); ok {
			return es, err
		}
	}
	if tg.data {
		v, err := scripts.TopDataCall(lb.readHeader(), tg.key, lb.keys.Data(), n).Exec(ctx, lb.client).ToArray()
		if err != nil {
			return nil, wrap("top", err)
		}
		es, err := lb.entriesWith(v, true)
		if err != nil {
			return nil, wrap("top", err)
		}
		lb.rankEntries(es, 0, 1)
		return es, nil
	}
	res := lb.client.Do(ctx, lb.rangeCmd(tg.key, 0, int64(n)-1))
	es, err := lb.zEntries(&res)
	if err != nil {
		return nil, wrap("top", err)
	}
	lb.rankEntries(es, 0, 1)
	return es, nil
}

// rank reads a standing atomically (see standings).
func (lb *plainBackend) rank(ctx context.Context, tg target, member string) (Standing, error) {
	sts, found, err := lb.standings(ctx, tg, []string{member})
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	if !found[0] {
		return Standing{}, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	return sts[0], nil
}

func (lb *plainBackend) ranks(ctx context.Context, tg target, members []string) ([]Standing, error) {
	sts, _, err := lb.standings(ctx, tg, members)
	return sts, wrap("ranks", err)
}

// standings reads members' standings atomically: under Competition ranks
// (and with WithReplicaReads, where a MULTI would reach the primary) with
// one script (rank.lua: it counts the members strictly better than each
// score, or reads the position) and for more members than a MULTI of
// maxTx commands holds (two a member; see pipeChunk), else with a MULTI of
// ZCARD and each member's ZSCORE and Z(REV)RANK; with IncludeData, their
// data in the same call (also of a member without a score). found[i]
// reports that members[i] has a score; else its Standing holds its Member,
// the Total and its Data alone.
func (lb *plainBackend) standings(ctx context.Context, tg target, members []string) (out []Standing, found []bool, err error) {
	out, found = make([]Standing, len(members)), make([]bool, len(members))
	per := 2 // replies a member
	var replies []rueidis.RedisMessage
	script := lb.ranking == Competition || lb.replicaReads || 4+2*len(members) > maxTx
	if script {
		per = 3
		replies, err = scripts.RankCall(lb.readHeader(), tg.key, lb.dataOf(tg), members...).Exec(ctx, lb.client).ToArray()
	} else {
		b := lb.client.B()
		cmds := make(rueidis.Commands, 0, 4+2*len(members))
		cmds = append(cmds, b.Multi().Build(), b.Zcard().Key(tg.key).Build())
		for _, m := range members {
			cmds = append(cmds, b.Zscore().Key(tg.key).Member(m).Build(), lb.rankCmd(tg.key, m))
		}
		if tg.data {
			cmds = append(cmds, b.Hmget().Key(lb.keys.Data()).Field(members...).Build())
		}
		replies, err = execResult(lb.client.DoMulti(ctx, append(cmds, b.Exec().Build())...))
	}
	if err != nil {
		return nil, nil, err
	}
	var data []rueidis.RedisMessage
	if tg.data {
		if data, replies, err = splitData(replies, len(members), !script); err != nil {
			return nil, nil, err
		}
	}
	if len(replies) != 1+per*len(members) {
		return nil, nil, fmt.Errorf("%d replies for %d members", len(replies), len(members))
	}
	total, err := replies[0].AsInt64()
	if err != nil {
		return nil, nil, err
	}
	for i, m := range members {
		x := replies[1+per*i : 1+per*(i+1)]
		out[i] = Standing{Entry: Entry{Member: m}, Total: total}
		score, ok, err := optFloat(&x[0])
		if err != nil {
			return nil, nil, err
		}
		if ok {
			var counts [2]int64 // position (Ordinal), or members better and worse
			for k := range per - 1 {
				if counts[k], err = x[1+k].AsInt64(); err != nil {
					return nil, nil, err
				}
			}
			out[i], found[i] = lb.standing(m, lb.plain(score), counts[0]+1, counts[1], total), true
		}
		if data != nil {
			if out[i].Data, _, err = optString(&data[i]); err != nil {
				return nil, nil, err
			}
		}
	}
	return out, found, nil
}

// splitData takes the members' data off the end of standings' replies: one
// HMGET reply (an array) in a transaction's, or n values after a script's.
func splitData(replies []rueidis.RedisMessage, n int, hmget bool) (data, rest []rueidis.RedisMessage, err error) {
	if hmget {
		if len(replies) == 0 {
			return nil, nil, fmt.Errorf("no data reply")
		}
		data, err = replies[len(replies)-1].ToArray()
		rest = replies[:len(replies)-1]
	} else if len(replies) >= n {
		data, rest = replies[len(replies)-n:], replies[:len(replies)-n]
	}
	if err == nil && len(data) != n {
		err = fmt.Errorf("%d data for %d members", len(data), n)
	}
	return data, rest, err
}

// around reads the rank and the slice in one script (range.lua), or with
// WithTwoStepAround in two steps (aroundSteps).
func (lb *plainBackend) around(ctx context.Context, tg target, member string, radius int) ([]Entry, error) {
	// Not with replica reads: the first step is a MULTI, which goes to
	// the primary.
	if lb.aroundSteps && lb.ranking == Ordinal && !tg.data && !lb.replicaReads {
		for range 3 {
			es, ok, err := lb.aroundSteps2(ctx, tg, member, radius)
			if err != nil || ok {
				return es, notRankedOr("around", member, err)
			}
		}
	}
	res := scripts.AroundCall(lb.readHeader(), tg.key, lb.dataOf(tg), member, radius).Exec(ctx, lb.client)
	es, _, err := lb.rangeReply(res, tg.data)
	if err != nil {
		return nil, notRankedOr("around", member, err)
	}
	return es, nil
}

// aroundSteps2 reads Around in two round trips of plain commands: the
// member's position and the count in one MULTI, then the slice they
// place; ok is false when the board moved between the steps so that the
// slice is not the Around of the board the second step read: it does not
// hold the member where the position put it, it is short of what the
// count promised, or (when the board's end placed it) the count changed.
// A slice that holds the member at the same position and was placed by
// the position alone is the Around of that board whatever its count.
func (lb *plainBackend) aroundSteps2(ctx context.Context, tg target, member string, radius int) ([]Entry, bool, error) {
	b := lb.client.B()
	replies, err := execResult(lb.client.DoMulti(ctx, b.Multi().Build(), lb.rankCmd(tg.key, member), b.Zcard().Key(tg.key).Build(), b.Exec().Build()))
	if err != nil {
		return nil, false, err
	}
	p, ranked, err := optInt(&replies[0])
	if err != nil || !ranked {
		return nil, false, cmp.Or(err, error(rueidis.Nil))
	}
	total, err := replies[1].AsInt64()
	if err != nil {
		return nil, false, err
	}
	count := 2*int64(radius) + 1
	start := max(0, min(p-int64(radius), total-count))
	stop := start + count - 1
	if p-int64(radius) > total-count {
		// The end of the board placed the slice: it holds for the board
		// the second step reads only if that board has the same count,
		// so read one entry past the slice, which must not be there.
		stop++
	}
	res := lb.client.Do(ctx, lb.rangeCmd(tg.key, start, stop))
	es, err := lb.zEntries(&res)
	if err != nil {
		return nil, false, err
	}
	at := p - start
	if at >= int64(len(es)) || es[at].Member != member || int64(len(es)) != min(count, total) {
		return nil, false, nil
	}
	lb.rankEntries(es, start, start+1)
	return es, true, nil
}

// page reads a page, and with total the board's count, atomically: one
// ZRANGE, or a MULTI of ZRANGE and ZCARD; under Competition ranks past the
// first position a MULTI of ZRANGE and a small script (competitionPage),
// its ZCARD with total; range.lua with IncludeData (the
// data of the members read) and with WithReplicaReads (a MULTI would reach
// the primary).
func (lb *plainBackend) page(ctx context.Context, tg target, start int64, size int, total bool) (Page, error) {
	if lb.hotServes(tg, start, size) {
		p, ok, err := lb.hotPage(ctx, tg, start, size, total, func(ctx context.Context, tg target) (int64, error) {
			return lb.client.Do(ctx, lb.client.B().Zcard().Key(tg.key).Build()).AsInt64()
		})
		if ok {
			return p, err
		}
	}
	key := tg.key
	p := Page{Entries: []Entry{}}
	// Past the first position a competition rank needs the count of the
	// first entry's ties; from it the first rank is 1.
	counts := lb.ranking == Competition && start > 0
	if tg.data || (lb.replicaReads && (total || counts)) {
		res := scripts.PageCall(lb.readHeader(), key, lb.dataOf(tg), start, size).Exec(ctx, lb.client)
		es, total, err := lb.rangeReply(res, tg.data)
		if err != nil {
			return Page{}, err
		}
		if len(es) > 0 {
			p.Entries = es
		}
		p.Total = total
		return p, nil
	}
	if counts {
		return lb.competitionPage(ctx, tg, start, size, total)
	}
	if !total {
		// Range: the entries alone, one ZRANGE.
		res := lb.client.Do(ctx, lb.rangeCmd(key, start, start+int64(size)-1))
		es, err := lb.zEntries(&res)
		if err != nil {
			return Page{}, err
		}
		lb.rankEntries(es, start, start+1)
		if len(es) > 0 {
			p.Entries = es
		}
		return p, nil
	}
	return lb.pageTx(ctx, key, start, size)
}

// pageTx reads a page by position and the total in one MULTI of ZRANGE and
// ZCARD (ranks by position: Ordinal ranks, or the first page).
func (lb *plainBackend) pageTx(ctx context.Context, key string, start int64, size int) (Page, error) {
	b := lb.client.B()
	replies, err := execResult(lb.client.DoMulti(ctx,
		b.Multi().Build(),
		lb.rangeCmd(key, start, start+int64(size)-1),
		b.Zcard().Key(key).Build(),
		b.Exec().Build(),
	))
	if err != nil {
		return Page{}, err
	}
	es, err := lb.zMessageEntries(&replies[0])
	if err != nil {
		return Page{}, err
	}
	p := Page{Entries: []Entry{}}
	if p.Total, err = replies[1].AsInt64(); err != nil {
		return Page{}, err
	}
	if len(es) > 0 {
		p.Entries = es
	}
	lb.rankEntries(p.Entries, start, start+1)
	return p, nil
}

// competitionPage reads a page past the first position under Competition
// ranks, and with total the board's count, in one MULTI: the page's plain
// ZRANGE, first_better.lua, which settles the members strictly better than
// the page's first entry (its rank less one; only the server can, in the
// same step: from the entry before it, a count only on a tie), and a ZCARD.
// The page's entries never pass through Lua: that trip cost a script
// reading them about twice the ZRANGE itself (BENCHMARKS.md, "competition
// pages by a MULTI"), and the script returns that count alone ("a page's
// first rank by its own script").
func (lb *plainBackend) competitionPage(ctx context.Context, tg target, start int64, size int, total bool) (Page, error) {
	key := tg.key
	calls := []scripts.Call{
		{Cmd: func() rueidis.Completed { return lb.rangeCmd(key, start, start+int64(size)-1) }},
		scripts.FirstBetterCall(lb.readHeader(), key, start),
	}
	if total {
		calls = append(calls, scripts.Call{Cmd: func() rueidis.Completed { return lb.client.B().Zcard().Key(key).Build() }})
	}
	replies, err := execResult(scripts.ExecTx(ctx, lb.client, calls))
	if err != nil {
		return Page{}, err
	}
	es, err := lb.zMessageEntries(&replies[0])
	if err != nil {
		return Page{}, err
	}
	better, err := replies[1].AsInt64()
	if err != nil {
		return Page{}, err
	}
	p := Page{Entries: []Entry{}}
	if total {
		if p.Total, err = replies[2].AsInt64(); err != nil {
			return Page{}, err
		}
	}
	if len(es) > 0 {
		p.Entries = es
	}
	lb.rankEntries(p.Entries, start, better+1)
	return p, nil
}

// among reads members' stored values from one sorted set: one ZMSCORE, in
// a MULTI with an HMGET of their data under IncludeData.
func (lb *plainBackend) among(ctx context.Context, tg target, members []string) ([]Entry, error) {
	var replies, data []rueidis.RedisMessage
	var err error
	if tg.data {
		replies, data, err = lb.storedWithData(ctx, tg, members)
	} else {
		replies, err = lb.stored(ctx, tg, members)
	}
	if err != nil {
		return nil, wrap("among", err)
	}
	es := make([]Entry, 0, len(members))
	for i := range replies {
		// Not AsFloatSlice: it would read a missing member as a score of 0.
		s, ok, err := optFloat(&replies[i])
		if err != nil {
			return nil, wrap("among", err)
		}
		if !ok {
			continue
		}
		e := Entry{Member: members[i], Score: s}
		if data != nil {
			if e.Data, _, err = optString(&data[i]); err != nil {
				return nil, wrap("among", err)
			}
		}
		es = append(es, e)
	}
	return es, nil
}

// storedWithData reads members' stored values and their data in one
// transaction; with WithReplicaReads in one pipeline of the two reads,
// which a replica can serve (a MULTI reaches the primary).
func (lb *plainBackend) storedWithData(ctx context.Context, tg target, members []string) (stored, data []rueidis.RedisMessage, err error) {
	b := lb.client.B()
	read := rueidis.Commands{b.Zmscore().Key(tg.key).Member(members...).Build(), b.Hmget().Key(lb.keys.Data()).Field(members...).Build()}
	var replies []rueidis.RedisMessage
	if lb.replicaReads {
		for _, r := range lb.client.DoMulti(ctx, read...) {
			v, err := r.ToMessage()
			if err != nil {
				return nil, nil, err
			}
			replies = append(replies, v)
		}
	} else if replies, err = execResult(lb.client.DoMulti(ctx, append(append(rueidis.Commands{b.Multi().Build()}, read...), b.Exec().Build())...)); err != nil {
		return nil, nil, err
	}
	if stored, err = replies[0].ToArray(); err != nil {
		return nil, nil, err
	}
	if data, err = replies[1].ToArray(); err != nil {
		return nil, nil, err
	}
	if len(stored) != len(members) || len(data) != len(members) {
		return nil, nil, fmt.Errorf("%d scores and %d data for %d members", len(stored), len(data), len(members))
	}
	return stored, data, nil
}

// cutoff reads the count and the entry at Cutoff's position in one script.
func (lb *plainBackend) cutoff(ctx context.Context, tg target, percent float64) ([]Entry, error) {
	es, _, err := lb.rangeReply(scripts.CutoffCall(lb.readHeader(), tg.key, lb.dataOf(tg), percent).Exec(ctx, lb.client), tg.data)
	return es, err
}

// dataOf is the data hash a read of tg reads: the board's under
// IncludeData, else "" (none).
func (lb *plainBackend) dataOf(tg target) string {
	if tg.data {
		return lb.keys.Data()
	}
	return ""
}

func (lb *plainBackend) count(ctx context.Context, tg target) (int64, error) {
	n, err := lb.client.Do(ctx, lb.client.B().Zcard().Key(tg.key).Build()).AsInt64()
	return n, wrap("count", err)
}

// submit writes a submission as a MULTI/EXEC of plain commands where
// nothing needs to branch on what is stored (txSubmits), else as one script.
// With a hot top (WithHotTop) the windows whose mirrors the write is
// expected to change are rewritten after it in the same round trip, the
// others it turns out to reach in one more (see hot.go).
func (lb *plainBackend) submit(ctx context.Context, sub submission, live []target, where []int, out []WindowResult) (dup bool, err error) {
	hot := lb.hotExpected(live, sub)
	if lb.txSubmits(sub) {
		err = lb.submitTx(ctx, sub, live, where, out, hot)
	} else {
		dup, err = lb.submitScript(ctx, sub, live, where, out, hot)
	}
	if err != nil || lb.hot == nil || dup {
		lb.hotSubmitFailed(ctx, live, hot, err)
		return dup, err
	}
	lb.hotFollow(ctx, live, where, out, hot)
	return false, nil
}

// txSubmits reports whether sub can be a MULTI/EXEC of plain commands:
// nothing may need to branch on what is stored. A WithID id is checked and
// recorded inside the script; Competition ranks count by the stored score;
// KeepBest under LaterFirst compares plain scores, not composites; and an
// Accumulate must refuse a total that leaves its range before writing (a
// tie-break's range always, float64's only for increments that can reach
// it). Those run the script. A transaction costs Redis about half of what a
// script doing the same costs (BENCHMARKS.md).
func (lb *plainBackend) txSubmits(sub submission) bool {
	policy := lb.policyOf(sub)
	switch {
	case sub.id != "" || lb.ranking != Ordinal:
		return false
	case policy == Replace:
		return true
	case policy == KeepBest:
		// ZADD GT/LT on an EarlierFirst composite keeps the first time a
		// best was reached, as KeepBest must.
		return lb.tb == nil || !lb.tb.later
	case policy == Accumulate:
		return lb.tb == nil && math.Abs(sub.stored) < incrNeverOverflows
	}
	return false
}

// policyOf is the policy sub is written by: Replace for a Set (whose
// scripts' policy is "SET", see writeHeader), else the board's.
func (lb *plainBackend) policyOf(sub submission) Policy {
	if sub.set {
		return Replace
	}
	return lb.policy
}

// submitTx runs a submission as one MULTI/EXEC; see txSubmits.
func (lb *plainBackend) submitTx(ctx context.Context, sub submission, live []target, where []int, out []WindowResult, hot []target) error {
	member, score := sub.member, sub.stored // Submit has made -0 into 0
	policy := lb.policyOf(sub)
	b := lb.client.B()
	cmds := make(rueidis.Commands, 0, 2+txPerWindow*len(live))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range live {
		cmds = append(cmds, b.Zscore().Key(tg.key).Member(member).Build(), lb.rankCmd(tg.key, member))
		switch {
		case policy == Accumulate:
			cmds = append(cmds, b.Zincrby().Key(tg.key).Increment(score).Member(member).Build())
		case policy == Replace:
			cmds = append(cmds, b.Zadd().Key(tg.key).Ch().ScoreMember().ScoreMember(score, member).Build())
		case lb.high():
			cmds = append(cmds, b.Zadd().Key(tg.key).Gt().Ch().ScoreMember().ScoreMember(score, member).Build())
		default:
			cmds = append(cmds, b.Zadd().Key(tg.key).Lt().Ch().ScoreMember().ScoreMember(score, member).Build())
		}
		if tg.expire != 0 {
			cmds = append(cmds, b.Pexpireat().Key(tg.key).MillisecondsTimestamp(tg.expire).Build())
		} else {
			// Keeps every window's replies the same length: a read of the
			// key (not a PING, which an application's ACL, without
			// @connection, may refuse).
			cmds = append(cmds, b.Zcard().Key(tg.key).Build())
		}
		cmds = append(cmds, lb.rankCmd(tg.key, member), b.Zcard().Key(tg.key).Build())
	}
	extra := 0 // replies after the windows'
	if sub.data != "" {
		cmds, extra = append(cmds, b.Hset().Key(lb.keys.Data()).FieldValue().FieldValue(member, sub.data).Build()), 1
	}
	cmds = append(cmds, b.Exec().Build())
	var res []rueidis.RedisResult
	if len(hot) == 0 {
		res = lb.client.DoMulti(ctx, cmds...)
	} else {
		calls := make([]scripts.Call, len(cmds))
		for i, cmd := range cmds {
			calls[i] = scripts.Call{Cmd: func() rueidis.Completed { return cmd }}
		}
		res = lb.withHot(ctx, calls, hot)
	}
	replies, err := execResult(res)
	if err != nil {
		return wrap("submit", err)
	}
	if len(replies) != txPerWindow*len(live)+extra {
		return wrap("submit", fmt.Errorf("transaction returned %d replies, want %d", len(replies), txPerWindow*len(live)+extra))
	}
	for j := range live {
		if err := lb.txWindow(member, score, policy, replies[txPerWindow*j:txPerWindow*(j+1)], &out[where[j]]); err != nil {
			return wrap("submit", err)
		}
	}
	return nil
}

// txPerWindow is how many replies submitTx's transaction has per window:
// score and rank before, the write, the expiry (or a ZCARD where there is
// none), rank and count after.
const txPerWindow = 6

// txWindow decodes one window's replies of submitTx, written by policy.
func (lb *plainBackend) txWindow(member string, score float64, policy Policy, r []rueidis.RedisMessage, wr *WindowResult) error {
	prev, had, err := optFloat(&r[0])
	if err != nil {
		return err
	}
	if had {
		prank, _, err := optInt(&r[1])
		if err != nil {
			return err
		}
		wr.Previous = Entry{Member: member, Score: lb.plain(prev), Rank: prank + 1}
	}
	after := score
	if policy == Accumulate {
		// ZINCRBY replies with the new total, added by Redis exactly as
		// the script would add it.
		if after, err = r[2].AsFloat64(); err != nil {
			return err
		}
	} else {
		changed, err := r[2].AsInt64()
		if err != nil {
			return err
		}
		if changed == 0 {
			after = prev
		}
	}
	if r[4].IsNil() {
		// Ranked by nobody after its write: Redis deleted the key as the
		// write set an expiry its clock had passed.
		closeWindow(wr, member)
		return nil
	}
	wr.Changed = !had || lb.plain(prev) != lb.plain(after)
	rank, err := r[4].AsInt64()
	if err != nil {
		return err
	}
	total, err := r[5].AsInt64()
	if err != nil {
		return err
	}
	wr.Standing = lb.standing(member, lb.plain(after), rank+1, 0, total)
	return nil
}

// submitScript runs a submission that must branch on what is stored (see
// txSubmits and internal/scripts/submit.lua).
func (lb *plainBackend) submitScript(ctx context.Context, sub submission, live []target, where []int, out []WindowResult, hot []target) (bool, error) {
	member := sub.member
	ks, expires := keysOf(live)
	call := scripts.SubmitCall(lb.writeHeader(sub.t, &sub), ks, lb.keys.Data(), lb.keys.IDs(), member, lb.subValue(sub), expires)
	var res rueidis.RedisResult
	if len(hot) == 0 {
		res = call.Exec(ctx, lb.client)
	} else {
		res = lb.withHot(ctx, []scripts.Call{call}, hot)[0]
	}
	replies, err := res.ToArray()
	if err != nil {
		return false, lb.scriptErr("submit", err, fmt.Sprintf("adding %v to %q", sub.score, member))
	}
	return lb.submitReplies(replies, member, live, where, out)
}

// submitManyIncr runs an Accumulate SubmitMany as one MULTI/EXEC of a
// ZINCRBY per member and window: Redis adds each in C, several times
// cheaper than the script's per-member Lua (BENCHMARKS.md).
func (lb *plainBackend) submitManyIncr(ctx context.Context, scores map[string]float64, live []target) error {
	b := lb.client.B()
	cmds := make(rueidis.Commands, 0, 2+len(live)*(1+len(scores)))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range live {
		for m, s := range scores { // never -0: SubmitMany took them (takeScore)
			cmds = append(cmds, b.Zincrby().Key(tg.key).Increment(s).Member(m).Build())
		}
		if tg.expire != 0 {
			cmds = append(cmds, b.Pexpireat().Key(tg.key).MillisecondsTimestamp(tg.expire).Build())
		}
	}
	cmds = append(append(cmds, lb.hotDrop(live)...), b.Exec().Build())
	_, err := execResult(lb.client.DoMulti(ctx, cmds...))
	return wrap("submit many", err)
}

// submitManyScript runs SubmitMany where a transaction of ZADDs cannot:
// see internal/scripts/many.lua.
func (lb *plainBackend) submitManyScript(ctx context.Context, scores map[string]float64, live []target, slot int64) error {
	ks, expires := keysOf(live)
	members := make([]string, 0, len(scores))
	values := make([]string, 0, len(scores))
	for m, s := range scores {
		members, values = append(members, m), append(values, lb.scriptValue(s))
	}
	err := lb.execThenDrop(ctx, []scripts.Call{scripts.ManyCall(lb.writeHeader(slot, nil), ks, expires, members, values)}, live)[0].Error()
	return lb.scriptErr("submit many", err, "a total")
}

// submitMany writes a checked SubmitMany batch: ZINCRBYs in a MULTI where no
// total can overflow and the MULTI stays within maxTx, a script where a
// total must be checked first or the MULTI would be longer, else ZADDs in
// a MULTI.
func (lb *plainBackend) submitMany(ctx context.Context, scores map[string]float64, live []target, slot int64) error {
	// The MULTI of ZINCRBYs holds one a member and window: past maxTx it
	// would be sent whole on a connection of rueidis's dedicated pool
	// (see pipeChunk); the script is one command.
	incrs := 3 + len(live)*(1+len(scores))
	if lb.policy == Accumulate && lb.tb == nil && incrs <= maxTx && incrsNeverOverflow(scores) {
		return lb.submitManyIncr(ctx, scores, live)
	}
	if lb.policy == Accumulate || lb.tb != nil {
		return lb.submitManyScript(ctx, scores, live, slot)
	}
	b := lb.client.B()
	// Redis parses a command's arguments into one buffer: chunks keep any one
	// ZADD small, while the transaction keeps the batch atomic; a batch of
	// millions takes larger ones, so that the transaction stays within
	// maxTx (its MULTI, EXEC, a hot top's UNLINK, and each window's ZADDs
	// and PEXPIREAT).
	chunk := zaddChunk(len(scores), len(live))
	cmds := make(rueidis.Commands, 0, 2+len(live)*(2+len(scores)/chunk))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range live {
		args := make([]string, 0, 1+2*min(chunk, len(scores)))
		flush := func() {
			cmds = append(cmds, b.Arbitrary("ZADD").Keys(tg.key).Args(args...).Build())
			args = args[:0]
		}
		for m, s := range scores {
			if len(args) == 0 && lb.policy == KeepBest {
				args = append(args, lb.policyArg())
			}
			args = append(args, formatScore(s), m)
			if len(args) >= 2*chunk {
				flush()
			}
		}
		if len(args) > 0 {
			flush()
		}
		if tg.expire != 0 {
			cmds = append(cmds, b.Pexpireat().Key(tg.key).MillisecondsTimestamp(tg.expire).Build())
		}
	}
	cmds = append(append(cmds, lb.hotDrop(live)...), b.Exec().Build())
	_, err := execResult(lb.client.DoMulti(ctx, cmds...))
	return wrap("submit many", err)
}

// zaddChunk is how many members one ZADD of a SubmitMany of n members to
// windows periods carries: 1,000, or more when the transaction would hold
// more than maxTx commands.
func zaddChunk(n, windows int) int {
	perWindow := max(1, (maxTx-3)/max(1, windows)-1) // ZADDs a window
	return max(1000, (n+perWindow-1)/perWindow)
}

// remove deletes members from the live periods in one MULTI/EXEC, a ZREM
// a period; on a board keeping so many periods that the MULTI would pass
// maxTx, by one script of the same commands (remove.lua).
func (lb *plainBackend) remove(ctx context.Context, live []target, members []string) error {
	if 4+len(live) > maxTx {
		periods := make([]string, len(live))
		for i, tg := range live {
			periods[i] = tg.key
		}
		call := scripts.RemoveCall(lb.readHeader(), periods, lb.keys.Data(), lb.hotDropKeys(live), members)
		return wrap("remove", call.Exec(ctx, lb.client).Error())
	}
	b := lb.client.B()
	cmds := make(rueidis.Commands, 0, 3+len(live))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range live {
		cmds = append(cmds, b.Zrem().Key(tg.key).Member(members...).Build())
	}
	cmds = append(append(cmds, b.Hdel().Key(lb.keys.Data()).Field(members...).Build()), lb.hotDrop(live)...)
	_, err := execResult(lb.client.DoMulti(ctx, append(cmds, b.Exec().Build())...))
	return wrap("remove", err)
}

// hotRewrite rewrites tgs' mirrors with one hot_top.lua each, in one
// round trip.
func (lb *plainBackend) hotRewrite(ctx context.Context, tgs []target) ([]Entry, error) {
	return lb.hotRewriteAll(ctx, tgs)
}

// hotSets is the sorted set a rewrite of tg's mirror copies: tg's own.
func (lb *plainBackend) hotSets(tg target) []string { return []string{tg.key} }

// dropHot deletes tgs' mirrors, all in the board's slot: one UNLINK.
func (lb *plainBackend) dropHot(ctx context.Context, tgs []target) error {
	drop := lb.hotDrop(tgs)
	if len(drop) == 0 {
		return nil
	}
	return lb.client.Do(ctx, drop[0]).Error()
}

func (lb *plainBackend) idSet(string) string { return lb.keys.IDs() }

func (lb *plainBackend) idSets() []string { return []string{lb.keys.IDs()} }

func (lb *plainBackend) dataKey(string) string { return lb.keys.Data() }

func (lb *plainBackend) rebuildKeys(tg target) (zsets, hashes []string) {
	return []string{tg.key}, nil
}

func (lb *plainBackend) rebuildAdd(member, value string, _ float64, add rebuildAdder) error {
	return add(0, false, member, value)
}

func (lb *plainBackend) stored(ctx context.Context, tg target, members []string) ([]rueidis.RedisMessage, error) {
	replies, err := lb.client.Do(ctx, lb.client.B().Zmscore().Key(tg.key).Member(members...).Build()).ToArray()
	if err == nil && len(replies) != len(members) {
		err = fmt.Errorf("ZMSCORE returned %d scores for %d members", len(replies), len(members))
	}
	return replies, err
}

func (lb *plainBackend) check(context.Context, target, bool) ([]CheckReport, error) {
	return nil, errCheckUnsharded
}

func (lb *plainBackend) fillShadow(context.Context, target) (int64, error) { return 0, errNoShadow }

func (lb *plainBackend) dropShadow(context.Context, target) error { return errNoShadow }

// incrNeverOverflows bounds the Accumulate increments that Submit sends as a
// plain ZINCRBY: a finite total t plus an x with |x| < 2^970 never rounds to
// ±Inf, since overflow needs |t + x| to reach MaxFloat64 plus half its ulp
// (2^970). Larger increments, which could overflow, go through the script,
// which refuses an overflowing total before writing anything.
const incrNeverOverflows = 0x1p970

// incrsNeverOverflow reports whether every increment is below
// incrNeverOverflows, so that no ZINCRBY of them can overflow.
func incrsNeverOverflow(scores map[string]float64) bool {
	for _, s := range scores {
		if math.Abs(s) >= incrNeverOverflows {
			return false
		}
	}
	return true
}

// entriesAt reads each position with a ZRANGE of its own, all in one
// DoMulti.
func (lb *plainBackend) entriesAt(ctx context.Context, tg target, positions []int64) ([]Entry, error) {
	cmds := make(rueidis.Commands, len(positions))
	for i, p := range positions {
		cmds[i] = lb.rangeCmd(tg.key, p, p)
	}
	return lb.entriesOf(lb.client.DoMulti(ctx, cmds...))
}

func (lb *plainBackend) counts(ctx context.Context, tgs []target) ([]int64, error) {
	cmds := make(rueidis.Commands, len(tgs))
	for i, tg := range tgs {
		cmds[i] = lb.client.B().Zcard().Key(tg.key).Build()
	}
	return int64s(lb.client.DoMulti(ctx, cmds...))
}

// clear unlinks the periods' sorted sets and top mirrors (hotDropKeys), and
// with board the board's ids, data and marker: all in the board's slot, so
// one UNLINK.
func (lb *plainBackend) clear(ctx context.Context, tgs []target, board bool) error {
	ks := make([]string, 0, len(tgs)+2)
	for _, tg := range tgs {
		ks = append(ks, tg.key)
	}
	if board {
		ks = append(ks, lb.keys.IDs(), lb.keys.Data(), lb.keys.Marker())
	}
	ks = append(ks, lb.hotDropKeys(tgs)...)
	return lb.client.Do(ctx, lb.client.B().Unlink().Key(ks...).Build()).Error()
}
