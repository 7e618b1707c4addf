package leaderboard

import (
	"cmp"
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// between reads Between's entries with range.lua ('between'): the members
// better than the range, the entries and their data in one script;
// without data and without WithReplicaReads, one MULTI (betweenTx).
func (lb *plainBackend) between(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	if !tg.data && !lb.replicaReads {
		return lb.betweenTx(ctx, tg, r, n)
	}
	res := scripts.BetweenCall(lb.readHeader(), tg.key, lb.dataOf(tg), r.storedLo, r.storedHi, n).Exec(ctx, lb.client)
	es, _, err := lb.rangeReply(res, tg.data)
	if es == nil && err == nil {
		es = []Entry{}
	}
	return es, err
}

// betweenTx is Between without data, where nothing needs the script: one
// MULTI of the count better than the range (the first entry's position,
// and under Competition ranks its rank less one: no member lies between
// the range's better end and its first entry) and the range by score.
func (lb *plainBackend) betweenTx(ctx context.Context, tg target, r scoreRange, n int) ([]Entry, error) {
	b := lb.client.B()
	better, in := lb.betweenCmds(tg.key, r, n)
	replies, err := execResult(lb.client.DoMulti(ctx, b.Multi().Build(), better, in, b.Exec().Build()))
	if err != nil {
		return nil, err
	}
	start, err := replies[0].AsInt64()
	if err != nil {
		return nil, err
	}
	es, err := lb.zMessageEntries(&replies[1])
	if err != nil {
		return nil, err
	}
	if es == nil {
		es = []Entry{}
	}
	lb.rankEntries(es, start, start+1)
	return es, nil
}

// betweenCmds are Between's plain commands on one sorted set: the count of
// its members better than r, and its first n entries within r
// (betweenInCmd).
func (lb *Leaderboard) betweenCmds(key string, r scoreRange, n int) (better, in rueidis.Completed) {
	b := lb.client.B()
	if lb.high() {
		better = b.Zcount().Key(key).Min("(" + r.storedHi).Max("+inf").Build()
	} else {
		better = b.Zcount().Key(key).Min("-inf").Max("(" + r.storedLo).Build()
	}
	return better, lb.betweenInCmd(key, r, n)
}

// betweenInCmd reads the first n entries of one sorted set within r.
func (lb *Leaderboard) betweenInCmd(key string, r scoreRange, n int) rueidis.Completed {
	b := lb.client.B()
	if lb.high() {
		return b.Zrange().Key(key).Min(r.storedHi).Max(r.storedLo).Byscore().Rev().Limit(0, int64(n)).Withscores().Build()
	}
	return b.Zrange().Key(key).Min(r.storedLo).Max(r.storedHi).Byscore().Limit(0, int64(n)).Withscores().Build()
}

func (lb *plainBackend) countBetween(ctx context.Context, tg target, r scoreRange) (int64, error) {
	return lb.client.Do(ctx, lb.client.B().Zcount().Key(tg.key).Min(r.storedLo).Max(r.storedHi).Build()).AsInt64()
}

// dropBetween removes one chunk of a score range with remove_between.lua.
func (lb *plainBackend) dropBetween(ctx context.Context, tg target, r scoreRange, n int) (int64, bool, error) {
	v, err := lb.execThenDrop(ctx, []scripts.Call{scripts.RemoveBetweenCall(lb.readHeader(), tg.key, r.storedLo, r.storedHi, n)}, []target{tg})[0].ToArray()
	if err != nil {
		return 0, false, err
	}
	if len(v) != 2 {
		return 0, false, fmt.Errorf("remove script returned %d values, want 2", len(v))
	}
	removed, err := v[0].AsInt64()
	if err != nil {
		return 0, false, err
	}
	left, err := v[1].AsInt64()
	return removed, left > 0, err
}

// evictChunk is MaxN: one script removes a chunk in a few milliseconds.
func (lb *plainBackend) evictChunk() int { return MaxN }

// evict removes from one period those of members whose stored values
// lie within r, their data kept (remove_between.lua); RemoveBetween with
// a store passes anyScore.
func (lb *plainBackend) evict(ctx context.Context, tg target, r scoreRange, members []string) (int64, error) {
	call := scripts.EvictBetweenCall(lb.readHeader(), tg.key, r.storedLo, r.storedHi, members)
	v, err := lb.execThenDrop(ctx, []scripts.Call{call}, []target{tg})[0].ToArray()
	if err != nil {
		return 0, err
	}
	if len(v) != 2 {
		return 0, fmt.Errorf("remove script returned %d values, want 2", len(v))
	}
	return v[0].AsInt64()
}

// aroundScore reads AroundScore's place and slice: under Ordinal ranks
// without data or WithReplicaReads in one MULTI (aroundScoreTx), else
// with range.lua ('score'), which answers the members better than the
// score in place of the count.
func (lb *plainBackend) aroundScore(ctx context.Context, tg target, edge string, _ float64, radius int) (int64, []Entry, error) {
	if lb.ranking == Ordinal && !tg.data && !lb.replicaReads {
		return lb.aroundScoreTx(ctx, tg, edge, radius)
	}
	res := scripts.ScoreCall(lb.readHeader(), tg.key, lb.dataOf(tg), edge, radius).Exec(ctx, lb.client)
	es, better, err := lb.rangeReply(res, tg.data)
	if err != nil {
		return 0, nil, err
	}
	if es == nil {
		es = []Entry{}
	}
	return better + 1, es, nil
}

// aroundScoreTx is aroundScore under Ordinal ranks without data or
// WithReplicaReads (where a MULTI would force the primary): one MULTI of
// plain commands (scorePlaceCmds), which costs Redis less than the
// script; under Competition ranks the slice's first entry needs the count
// of its ties, which only a script can take in the same moment.
func (lb *plainBackend) aroundScoreTx(ctx context.Context, tg target, edge string, radius int) (int64, []Entry, error) {
	cmds := lb.scorePlaceCmds(make(rueidis.Commands, 0, scorePlaceCalls), tg.key, edge, radius)
	better, before, after, err := lb.scorePlace(lb.client.DoMulti(ctx, cmds...))
	if err != nil {
		return 0, nil, err
	}
	return better + 1, lb.placeSlice(before, after, better), nil
}

// walk reads All's next chunk: without IncludeData first as the raw walk
// would (walkTx), by position, checking in the same MULTI that the last
// entry yielded still stands where it stood; else (with IncludeData or
// WithReplicaReads), or when it moved, with range.lua ('after'), which
// finds where the walk resumes. Either reads one entry past the n it
// yields, so that a chunk knows whether the walk is done: a board of k*n
// members is walked in k chunks, not k and an empty one.
func (lb *plainBackend) walk(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, error) {
	if !tg.data && !lb.replicaReads {
		es, next, ok, err := lb.walkTx(ctx, tg, at, n)
		if err != nil || ok {
			return es, next, err
		}
	}
	res := scripts.AfterCall(lb.readHeader(), tg.key, lb.dataOf(tg), at.value, at.member, n+1).Exec(ctx, lb.client)
	es, _, err := lb.rangeReply(res, tg.data)
	if err != nil {
		return nil, at, err
	}
	return walkNext(es, n, func(i int) (string, error) { return storedAt(res, tg.data, i) })
}

// walkNext is the cursor after a chunk es of a walk that yields n and read
// one more: done when es holds no more than n, else after es's n-th entry,
// whose stored value stored(n-1) gives, es cut to n.
func walkNext(es []Entry, n int, stored func(i int) (string, error)) ([]Entry, walkCursor, error) {
	if len(es) <= n {
		return es, walkCursor{done: true}, nil
	}
	es = es[:n]
	value, err := stored(n - 1)
	e := es[n-1]
	return es, walkCursor{value: value, member: e.Member, pos: e.Rank}, err
}

// walkTx reads a chunk by position, the last entry's value and place
// beside it in one MULTI: ok when that entry still holds the value at the
// place the cursor knows (Ordinal: the position is its rank), so that the
// chunk starts right after it.
func (lb *plainBackend) walkTx(ctx context.Context, tg target, at walkCursor, n int) ([]Entry, walkCursor, bool, error) {
	if lb.ranking == Competition && at.value != "" {
		return nil, at, false, nil // the cursor's rank is no position
	}
	b := lb.client.B()
	read := lb.rangeCmd(tg.key, at.pos, at.pos+int64(n)) // n and one past them
	cmds := rueidis.Commands{read}
	if at.value != "" {
		cmds = rueidis.Commands{b.Multi().Build(), b.Zscore().Key(tg.key).Member(at.member).Build(), lb.rankCmd(tg.key, at.member), read, b.Exec().Build()}
	}
	res := lb.client.DoMulti(ctx, cmds...)
	chunk, err := res[0].ToMessage()
	if at.value != "" {
		replies, err := execResult(res)
		if err != nil {
			return nil, at, false, err
		}
		if holds, err := cursorHolds(replies, at); err != nil || !holds {
			return nil, at, false, err
		}
		chunk = replies[2]
	} else if err != nil {
		return nil, at, false, err
	}
	es, err := lb.zMessageEntries(&chunk)
	if err != nil {
		return nil, at, false, err
	}
	lb.rankEntries(es, at.pos, 1) // a resumed chunk's ranks are Ordinal's
	es, next, err := walkNext(es, n, func(i int) (string, error) { return zScoreAt(&chunk, i) })
	return es, next, true, err
}

// zScoreAt is the stored value of a ZRANGE reply's entry i, as the
// 'after' script reads it back.
func zScoreAt(m *rueidis.RedisMessage, i int) (string, error) {
	zs, err := m.AsZScores()
	if err != nil || i >= len(zs) {
		return "", fmt.Errorf("entry %d of a chunk of %d entries: %v", i, len(zs), err)
	}
	return formatScore(zs[i].Score), nil
}

// storedAt is the stored value (a string, as Redis printed it) of entry i
// of a range.lua reply: where the next chunk of a walk resumes.
func storedAt(res rueidis.RedisResult, data bool, i int) (string, error) {
	v, err := res.ToArray()
	if err != nil {
		return "", err
	}
	stride := 2
	if data {
		stride = 3
	}
	if j := 3 + stride*i + 1; j < len(v) {
		return v[j].ToString()
	}
	return "", fmt.Errorf("range script returned %d values for entry %d of a chunk", len(v), i)
}

// set is Set on an unsharded board: the stored value, whatever the policy,
// needs no branch on what is stored: one MULTI of ZADD and the expiry.
// With WithHotTop it is written as a Submit of policy Replace is, whose
// reply's ranks before and after tell whether it reached the top k: a
// correction below the top leaves the mirror, and the cached reads of it,
// as a Submit below the top does (hotFollow).
func (lb *plainBackend) set(ctx context.Context, tg target, sub submission) error {
	if lb.hot != nil {
		return setBySubmit(ctx, lb, tg, sub)
	}
	b := lb.client.B()
	cmds := rueidis.Commands{b.Multi().Build(), b.Zadd().Key(tg.key).ScoreMember().ScoreMember(sub.stored, sub.member).Build()}
	if tg.expire != 0 {
		cmds = append(cmds, expireGone(b, tg.key, tg.expire)...)
	}
	cmds = append(cmds, b.Exec().Build())
	replies, err := execResult(lb.client.DoMulti(ctx, cmds...))
	if err != nil || tg.expire == 0 {
		return err
	}
	if gone, err := goneAfter(replies, 1); err != nil || gone {
		return cmp.Or(err, expiredByRedis(tg))
	}
	return nil
}
