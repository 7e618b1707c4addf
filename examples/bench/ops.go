package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// pageSize is the size of the pages read by page and page-deep.
const pageSize = 20

// The raw versions return what the SDK returns and decode it as far as a
// caller would: they are what a user writes by hand instead of the SDK.

// standing is what a hand-written version decodes for one window.
type standing struct {
	score       float64
	rank, total int64
	had         bool
}

func (b *bench) submitOp() operation {
	op := operation{name: "submit", desc: fmt.Sprintf("Submit to %d window(s) with the full Result (every window's rank before and after)", len(b.windows))}
	op.impls = append(op.impls, impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
		i := w.pick(poolSize)
		_, err := b.board.Submit(ctx, b.members[i], b.scores[w.pick(poolSize)])
		return err
	}})
	if b.cfg.shards > 0 || b.cfg.tieBreak != "none" {
		// The raw versions do the work of an unsharded board without a
		// tie-break: beside a sharded or tie-broken board they are the cost
		// of plain sorted sets.
		op.desc += "; the baselines write plain sorted sets"
	}
	op.impls = append(op.impls,
		impl{name: "rueidis", units: 1, call: b.rawSubmit},
		impl{name: "go-redis", units: 1, call: b.goRedisSubmit},
	)
	if b.cfg.policy == leaderboard.KeepBest {
		op.impls = append(op.impls, impl{name: "go-redis articles", units: 1, call: b.articlesSubmit})
	}
	return b.withBaselines(op)
}

// rawSubmit is Submit by hand with rueidis: one MULTI with, per window, the
// standing before, the write, the expiry and the standing after.
func (b *bench) rawSubmit(ctx context.Context, w *worker) error {
	m, v := b.members[w.pick(poolSize)], b.scores[w.pick(poolSize)]
	bd := b.c.rue.B()
	cmds := make(rueidis.Commands, 0, 2+6*len(b.raw))
	cmds = append(cmds, bd.Multi().Build())
	for _, rk := range b.raw {
		cmds = append(cmds, bd.Zscore().Key(rk.key).Member(m).Build(), b.rankCmd(rk.key, m))
		cmds = append(cmds, b.writeCmd(rk.key, m, v))
		if !rk.expire.IsZero() {
			cmds = append(cmds, bd.Pexpireat().Key(rk.key).MillisecondsTimestamp(rk.expire.UnixMilli()).Build())
		}
		cmds = append(cmds, b.rankCmd(rk.key, m), bd.Zcard().Key(rk.key).Build())
	}
	cmds = append(cmds, bd.Exec().Build())
	res := b.c.rue.DoMulti(ctx, cmds...)
	replies, err := res[len(res)-1].ToArray()
	if err != nil {
		return err
	}
	for _, rk := range b.raw {
		var before, after standing
		r := replies[:5]
		if !rk.expire.IsZero() {
			r = replies[:6]
		}
		replies = replies[len(r):]
		if before.score, err = r[0].AsFloat64(); err == nil {
			before.had = true
			if before.rank, err = r[1].AsInt64(); err != nil {
				return err
			}
		} else if !rueidis.IsRedisNil(err) {
			return err
		}
		if b.cfg.policy == leaderboard.Accumulate {
			if after.score, err = r[2].AsFloat64(); err != nil {
				return err
			}
		} else if _, err = r[2].AsInt64(); err != nil {
			return err
		}
		if after.rank, err = r[len(r)-2].AsInt64(); err != nil {
			return err
		}
		if after.total, err = r[len(r)-1].AsInt64(); err != nil {
			return err
		}
		if after.total < 1 || before.had && before.rank < 0 {
			return errCheck
		}
	}
	return nil
}

// goRedisSubmit is rawSubmit with go-redis: the same commands in one MULTI.
func (b *bench) goRedisSubmit(ctx context.Context, w *worker) error {
	m, v := b.members[w.pick(poolSize)], b.scores[w.pick(poolSize)]
	type win struct {
		before *redis.FloatCmd
		brank  *redis.IntCmd
		write  redis.Cmder
		arank  *redis.IntCmd
		total  *redis.IntCmd
	}
	wins := make([]win, len(b.raw))
	_, err := b.c.goRed.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for j, rk := range b.raw {
			wi := &wins[j]
			wi.before = p.ZScore(ctx, rk.key, m)
			wi.brank = b.goRank(ctx, p, rk.key, m)
			wi.write = b.goWrite(ctx, p, rk.key, m, v)
			if !rk.expire.IsZero() {
				p.PExpireAt(ctx, rk.key, rk.expire)
			}
			wi.arank = b.goRank(ctx, p, rk.key, m)
			wi.total = p.ZCard(ctx, rk.key)
		}
		return nil
	})
	if err != nil && err != redis.Nil {
		return err
	}
	for _, wi := range wins {
		var before, after standing
		if before.score, err = wi.before.Result(); err == nil {
			before.had = true
			before.rank = wi.brank.Val()
		} else if err != redis.Nil {
			return err
		}
		if err := wi.write.Err(); err != nil {
			return err
		}
		if after.rank, err = wi.arank.Result(); err != nil {
			return err
		}
		if after.total, err = wi.total.Result(); err != nil {
			return err
		}
		if after.total < 1 {
			return errCheck
		}
	}
	return nil
}

// articlesSubmit is the submit of the design articles, hand-written with
// go-redis: one MULTI of ZADD GT to the all-time, weekly and daily sets and
// an EXPIRE pushed out on the two windowed ones, and no ranks read. The
// weekly and daily sets are the raw ones where the board has those
// windows, sets of their own otherwise.
func (b *bench) articlesSubmit(ctx context.Context, w *worker) error {
	m, v := b.members[w.pick(poolSize)], b.scores[w.pick(poolSize)]
	z := redis.Z{Score: v, Member: m}
	allTime, weekly, daily := b.articleKey("alltime"), b.articleKey("weekly"), b.articleKey("daily")
	_, err := b.c.goRed.TxPipelined(ctx, func(p redis.Pipeliner) error {
		if b.high() {
			p.ZAddGT(ctx, allTime, z)
			p.ZAddGT(ctx, weekly, z)
			p.ZAddGT(ctx, daily, z)
		} else {
			p.ZAddLT(ctx, allTime, z)
			p.ZAddLT(ctx, weekly, z)
			p.ZAddLT(ctx, daily, z)
		}
		p.Expire(ctx, weekly, 8*24*time.Hour)
		p.Expire(ctx, daily, 2*24*time.Hour)
		return nil
	})
	return err
}

func (b *bench) articleKey(window string) string {
	for _, rk := range b.raw {
		if rk.window == window {
			return rk.key
		}
	}
	return b.raw[0].key + ":articles:" + window
}

// writeCmd is Submit's write of score v for member m to key under the
// board's policy: ZINCRBY to accumulate, else a ZADD, with GT or LT to
// keep the better score; CH makes its reply count a changed score too,
// not only a new member, as the Result's Changed does.
func (b *bench) writeCmd(key, m string, v float64) rueidis.Completed {
	bd := b.c.rue.B()
	switch {
	case b.cfg.policy == leaderboard.Accumulate:
		return bd.Zincrby().Key(key).Increment(v).Member(m).Build()
	case b.cfg.policy == leaderboard.Replace:
		return bd.Zadd().Key(key).Ch().ScoreMember().ScoreMember(v, m).Build()
	case b.high():
		return bd.Zadd().Key(key).Gt().Ch().ScoreMember().ScoreMember(v, m).Build()
	default:
		return bd.Zadd().Key(key).Lt().Ch().ScoreMember().ScoreMember(v, m).Build()
	}
}

// goWrite is writeCmd with go-redis, queued on p.
func (b *bench) goWrite(ctx context.Context, p redis.Cmdable, key, m string, v float64) redis.Cmder {
	z := redis.ZAddArgs{Ch: true, Members: []redis.Z{{Score: v, Member: m}}}
	switch {
	case b.cfg.policy == leaderboard.Accumulate:
		return p.ZIncrBy(ctx, key, v, m)
	case b.cfg.policy == leaderboard.Replace:
		return p.ZAddArgs(ctx, key, z)
	case b.high():
		z.GT = true
		return p.ZAddArgs(ctx, key, z)
	default:
		z.LT = true
		return p.ZAddArgs(ctx, key, z)
	}
}

func (b *bench) rankCmd(key, m string) rueidis.Completed {
	if b.high() {
		return b.c.rue.B().Zrevrank().Key(key).Member(m).Build()
	}
	return b.c.rue.B().Zrank().Key(key).Member(m).Build()
}

func (b *bench) goRank(ctx context.Context, p redis.Cmdable, key, m string) *redis.IntCmd {
	if b.high() {
		return p.ZRevRank(ctx, key, m)
	}
	return p.ZRank(ctx, key, m)
}

func (b *bench) rangeCmd(key string, start, stop int64) rueidis.Completed {
	r := b.c.rue.B().Zrange().Key(key).Min(strconv.FormatInt(start, 10)).Max(strconv.FormatInt(stop, 10))
	if b.high() {
		return r.Rev().Withscores().Build()
	}
	return r.Withscores().Build()
}

func (b *bench) goRange(ctx context.Context, p redis.Cmdable, key string, start, stop int64) *redis.ZSliceCmd {
	if b.high() {
		return p.ZRevRangeWithScores(ctx, key, start, stop)
	}
	return p.ZRangeWithScores(ctx, key, start, stop)
}

func (b *bench) submitManyOp() operation {
	// A batch holds batchSize members, or every member of a smaller board
	// (drawPools): members/s counts what a call carries.
	units := len(b.batches[0])
	op := operation{name: "submit-many", desc: fmt.Sprintf("SubmitMany of %d members to %d window(s); the baseline: one ZADD of them per window (and its PEXPIREAT on a windowed set), pipelined", units, len(b.windows))}
	op.impls = append(op.impls, impl{name: "sdk", units: units, call: func(ctx context.Context, w *worker) error {
		return b.board.SubmitMany(ctx, b.batches[w.pick(len(b.batches))])
	}})
	op.impls = append(op.impls, impl{name: "rueidis", units: units, call: func(ctx context.Context, w *worker) error {
		batch := b.batches[w.pick(len(b.batches))]
		bd := b.c.rue.B()
		cmds := make(rueidis.Commands, 0, 2*len(b.raw))
		for _, rk := range b.raw {
			z := bd.Zadd().Key(rk.key)
			switch {
			case b.cfg.policy != leaderboard.KeepBest:
				cmds = append(cmds, scoreMembers(z.ScoreMember(), batch))
			case b.high():
				cmds = append(cmds, scoreMembers(z.Gt().ScoreMember(), batch))
			default:
				cmds = append(cmds, scoreMembers(z.Lt().ScoreMember(), batch))
			}
			cmds = b.appendExpire(cmds, rk)
		}
		for _, r := range b.c.rue.DoMulti(ctx, cmds...) {
			if err := r.Error(); err != nil {
				return err
			}
		}
		return nil
	}})
	if b.cfg.policy == leaderboard.Accumulate {
		// What Accumulate needs by hand: ZADD cannot add many at once.
		op.impls = append(op.impls, impl{name: "rueidis ZINCRBY", units: units, call: func(ctx context.Context, w *worker) error {
			batch := b.batches[w.pick(len(b.batches))]
			bd := b.c.rue.B()
			cmds := make(rueidis.Commands, 0, len(b.raw)*(len(batch)+1))
			for _, rk := range b.raw {
				for m, v := range batch {
					cmds = append(cmds, bd.Zincrby().Key(rk.key).Increment(v).Member(m).Build())
				}
				cmds = b.appendExpire(cmds, rk)
			}
			for _, r := range b.c.rue.DoMulti(ctx, cmds...) {
				if err := r.Error(); err != nil {
					return err
				}
			}
			return nil
		}})
	}
	return b.withBaselines(op)
}

// appendExpire appends rk's PEXPIREAT to cmds where its periods expire:
// a write by hand sets it each time, as the SDK's writes do, since any
// write may be its period's first.
func (b *bench) appendExpire(cmds rueidis.Commands, rk rawKey) rueidis.Commands {
	if rk.expire.IsZero() {
		return cmds
	}
	return append(cmds, b.c.rue.B().Pexpireat().Key(rk.key).MillisecondsTimestamp(rk.expire.UnixMilli()).Build())
}

// scoreMembers adds batch to a ZADD being built (rueidis's builder types
// are internal, hence the type parameter).
func scoreMembers[T interface {
	ScoreMember(float64, string) T
	Build() rueidis.Completed
}](z T, batch map[string]float64) rueidis.Completed {
	for m, v := range batch {
		z = z.ScoreMember(v, m)
	}
	return z.Build()
}

func (b *bench) topOp() operation {
	key := b.raw[0].key
	op := operation{name: "top", desc: "Top(10): the ten best with scores"}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, _ *worker) error {
			es, err := b.board.Top(ctx, 10)
			if err == nil && len(es) != 10 {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, _ *worker) error {
			zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, 0, 9)).AsZScores()
			if err == nil && len(zs) != 10 {
				return errCheck
			}
			return err
		}},
		impl{name: "go-redis", units: 1, call: func(ctx context.Context, _ *worker) error {
			zs, err := b.goRange(ctx, b.c.goRed, key, 0, 9).Result()
			if err == nil && len(zs) != 10 {
				return errCheck
			}
			return err
		}},
	)
	return b.withBaselines(op)
}

// checkStanding decodes the score, 0-based rank and total of a raw rank
// read and checks that they agree.
func checkStanding(replies []rueidis.RedisMessage) error {
	var s standing
	var err error
	if s.score, err = replies[0].AsFloat64(); err != nil {
		return err
	}
	if s.rank, err = replies[1].AsInt64(); err != nil {
		return err
	}
	if s.total, err = replies[2].AsInt64(); err != nil {
		return err
	}
	if s.total <= s.rank {
		return errCheck
	}
	return nil
}

func (b *bench) rankOp() operation {
	key := b.raw[0].key
	op := operation{name: "rank", desc: "Rank: a member's rank, score and the period's total (percentile), read atomically; \"rueidis\" pipelines the three reads, \"rueidis MULTI\" wraps them in MULTI/EXEC as the SDK does, so that they agree"}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			st, err := b.board.Rank(ctx, b.members[w.pick(poolSize)])
			if err == nil && (st.Rank < 1 || st.Total < st.Rank) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, w *worker) error {
			m := b.members[w.pick(poolSize)]
			bd := b.c.rue.B()
			res := b.c.rue.DoMulti(ctx, bd.Zscore().Key(key).Member(m).Build(), b.rankCmd(key, m), bd.Zcard().Key(key).Build())
			replies := make([]rueidis.RedisMessage, len(res))
			for i, r := range res {
				var err error
				if replies[i], err = r.ToMessage(); err != nil {
					return err
				}
			}
			return checkStanding(replies)
		}},
		impl{name: "rueidis MULTI", units: 1, call: func(ctx context.Context, w *worker) error {
			m := b.members[w.pick(poolSize)]
			bd := b.c.rue.B()
			res := b.c.rue.DoMulti(ctx, bd.Multi().Build(), bd.Zscore().Key(key).Member(m).Build(), b.rankCmd(key, m), bd.Zcard().Key(key).Build(), bd.Exec().Build())
			replies, err := res[4].ToArray()
			if err != nil {
				return err
			}
			return checkStanding(replies)
		}},
		impl{name: "go-redis", units: 1, call: func(ctx context.Context, w *worker) error {
			m := b.members[w.pick(poolSize)]
			var sc *redis.FloatCmd
			var rk, tot *redis.IntCmd
			_, err := b.c.goRed.Pipelined(ctx, func(p redis.Pipeliner) error {
				sc, rk, tot = p.ZScore(ctx, key, m), b.goRank(ctx, p, key, m), p.ZCard(ctx, key)
				return nil
			})
			if err != nil {
				return err
			}
			if sc.Val() < 0 || tot.Val() <= rk.Val() {
				return errCheck
			}
			return nil
		}},
	)
	return b.withBaselines(op)
}

// positionAndTotal reads member m's 0-based position in key and key's
// count, pipelined: the first round trip of Around by hand.
func (b *bench) positionAndTotal(ctx context.Context, key, m string) (pos, total int64, err error) {
	res := b.c.rue.DoMulti(ctx, b.rankCmd(key, m), b.c.rue.B().Zcard().Key(key).Build())
	if pos, err = res[0].AsInt64(); err != nil {
		return 0, 0, err
	}
	total, err = res[1].AsInt64()
	return pos, total, err
}

// aroundRadius is the radius Around is measured with.
const aroundRadius = 5

func (b *bench) aroundOp() operation {
	key := b.raw[0].key
	want := 2*aroundRadius + 1
	op := operation{name: "around", desc: fmt.Sprintf("Around(radius %d): the %d entries around a member; the baselines take the two round trips of the design articles (rank and total, then the range)", aroundRadius, want)}
	window := func(rank, total int64) (int64, int64) {
		start := max(0, min(rank-aroundRadius, total-int64(want)))
		return start, start + int64(want) - 1
	}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			es, err := b.board.Around(ctx, b.members[w.pick(poolSize)], aroundRadius)
			if err == nil && len(es) != want {
				return errCheck
			}
			return err
		}},
		b.twoStepAround(want),
		impl{name: "rueidis 2 RT", units: 1, call: func(ctx context.Context, w *worker) error {
			rank, total, err := b.positionAndTotal(ctx, key, b.members[w.pick(poolSize)])
			if err != nil {
				return err
			}
			start, stop := window(rank, total)
			zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, start, stop)).AsZScores()
			if err == nil && len(zs) != want {
				return errCheck
			}
			return err
		}},
		impl{name: "go-redis 2 RT", units: 1, call: func(ctx context.Context, w *worker) error {
			m := b.members[w.pick(poolSize)]
			var rk, tot *redis.IntCmd
			if _, err := b.c.goRed.Pipelined(ctx, func(p redis.Pipeliner) error {
				rk, tot = b.goRank(ctx, p, key, m), p.ZCard(ctx, key)
				return nil
			}); err != nil {
				return err
			}
			start, stop := window(rk.Val(), tot.Val())
			zs, err := b.goRange(ctx, b.c.goRed, key, start, stop).Result()
			if err == nil && len(zs) != want {
				return errCheck
			}
			return err
		}},
	)
	return b.withBaselines(op)
}

func (b *bench) pageOp(number int) operation {
	key := b.raw[0].key
	name := "page"
	if number > 1 {
		name = "page-deep"
	}
	op := operation{name: name, desc: fmt.Sprintf("Page(%d, %d): a page of %d entries and the total, read atomically; \"rueidis\" pipelines the two reads, \"rueidis MULTI\" wraps them in MULTI/EXEC as the SDK does", number, pageSize, pageSize)}
	start := int64(number-1) * pageSize
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, _ *worker) error {
			p, err := b.board.Page(ctx, number, pageSize)
			if err == nil && len(p.Entries) != pageSize {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, _ *worker) error {
			res := b.c.rue.DoMulti(ctx, b.rangeCmd(key, start, start+pageSize-1), b.c.rue.B().Zcard().Key(key).Build())
			zs, err := res[0].AsZScores()
			if err != nil {
				return err
			}
			if _, err := res[1].AsInt64(); err != nil {
				return err
			}
			if len(zs) != pageSize {
				return errCheck
			}
			return nil
		}},
		impl{name: "rueidis MULTI", units: 1, call: func(ctx context.Context, _ *worker) error {
			return b.rawPageMulti(ctx, key, start)
		}},
		impl{name: "go-redis", units: 1, call: func(ctx context.Context, _ *worker) error {
			var zs *redis.ZSliceCmd
			var tot *redis.IntCmd
			if _, err := b.c.goRed.Pipelined(ctx, func(p redis.Pipeliner) error {
				zs, tot = b.goRange(ctx, p, key, start, start+pageSize-1), p.ZCard(ctx, key)
				return nil
			}); err != nil {
				return err
			}
			if len(zs.Val()) != pageSize || tot.Val() < pageSize {
				return errCheck
			}
			return nil
		}},
	)
	return b.withBaselines(op)
}

// rawPageMulti is Page by hand with rueidis as the SDK reads it: the page
// of key from 0-based position start and the ZCARD in one MULTI/EXEC, so
// that the total is the page's, of the same moment.
func (b *bench) rawPageMulti(ctx context.Context, key string, start int64) error {
	bd := b.c.rue.B()
	res := b.c.rue.DoMulti(ctx, bd.Multi().Build(), b.rangeCmd(key, start, start+pageSize-1), bd.Zcard().Key(key).Build(), bd.Exec().Build())
	replies, err := res[3].ToArray()
	if err != nil {
		return err
	}
	zs, err := replies[0].AsZScores()
	if err != nil {
		return err
	}
	if _, err := replies[1].AsInt64(); err != nil {
		return err
	}
	if len(zs) != pageSize {
		return errCheck
	}
	return nil
}

// rankAmong is what the raw Among versions do by hand, as Among does: the
// members that have a score (ok), each once, best first, equal scores in
// the board's member order (the name that sorts last first on a
// highest-first board, first on a lowest-first one, as ZRANGE orders
// them), ranked among themselves under the board's rank mode.
func (b *bench) rankAmong(ms []string, scores []float64, ok []bool) []leaderboard.Entry {
	out := make([]leaderboard.Entry, 0, len(ms))
	for i, m := range ms {
		if ok[i] {
			out = append(out, leaderboard.Entry{Member: m, Score: scores[i]})
		}
	}
	slices.SortFunc(out, func(x, y leaderboard.Entry) int {
		c := cmp.Or(cmp.Compare(x.Score, y.Score), strings.Compare(x.Member, y.Member))
		if b.high() {
			return -c
		}
		return c
	})
	out = slices.CompactFunc(out, func(x, y leaderboard.Entry) bool { return x.Member == y.Member })
	for i := range out {
		out[i].Rank = int64(i + 1)
		if b.competes() && i > 0 && out[i].Score == out[i-1].Score {
			out[i].Rank = out[i-1].Rank
		}
	}
	return out
}

// amongByHand is Among by hand with rueidis: a ZMSCORE of ms in key, then
// rankAmong.
func (b *bench) amongByHand(ctx context.Context, key string, ms []string) ([]leaderboard.Entry, error) {
	vals, err := b.c.rue.Do(ctx, b.c.rue.B().Zmscore().Key(key).Member(ms...).Build()).ToArray()
	if err != nil {
		return nil, err
	}
	scores, ok := make([]float64, len(ms)), make([]bool, len(ms))
	for i := range vals {
		if vals[i].IsNil() {
			continue
		}
		if scores[i], err = vals[i].AsFloat64(); err != nil {
			return nil, err
		}
		ok[i] = true
	}
	return b.rankAmong(ms, scores, ok), nil
}

func (b *bench) amongOp() operation {
	key := b.raw[0].key
	op := operation{name: "among", desc: "Among(50 friends): the ranked ones among 50 members, best first, ranked among them; the baselines: ZMSCORE, then a sort in the board's order, the repeats dropped and the ranks numbered, as Among does"}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			es, err := b.board.Among(ctx, b.friends[w.pick(len(b.friends))])
			if err == nil && len(es) == 0 {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, w *worker) error {
			es, err := b.amongByHand(ctx, key, b.friends[w.pick(len(b.friends))])
			if err == nil && len(es) == 0 {
				return errCheck
			}
			return err
		}},
		impl{name: "go-redis", units: 1, call: func(ctx context.Context, w *worker) error {
			ms := b.friends[w.pick(len(b.friends))]
			vals, err := b.c.goRed.ZMScore(ctx, key, ms...).Result()
			if err != nil {
				return err
			}
			// go-redis reads a missing member as 0: ZMSCORE cannot tell it from
			// a score of 0 through it, so a hand-written version must accept that.
			ok := make([]bool, len(ms))
			for i := range ok {
				ok[i] = true
			}
			if len(b.rankAmong(ms, vals, ok)) == 0 {
				return errCheck
			}
			return nil
		}},
	)
	return b.withBaselines(op)
}

func (b *bench) countOp() operation {
	key := b.raw[0].key
	op := operation{name: "count", desc: "Count: the period's member count"}
	n := int64(b.cfg.members)
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, _ *worker) error {
			c, err := b.board.Count(ctx)
			if err == nil && c < n {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, _ *worker) error {
			c, err := b.c.rue.Do(ctx, b.c.rue.B().Zcard().Key(key).Build()).AsInt64()
			if err == nil && c < n {
				return errCheck
			}
			return err
		}},
		impl{name: "go-redis", units: 1, call: func(ctx context.Context, _ *worker) error {
			c, err := b.c.goRed.ZCard(ctx, key).Result()
			if err == nil && c < n {
				return errCheck
			}
			return err
		}},
	)
	return b.withBaselines(op)
}

// twoStepAround is Around on the same board WithTwoStepAround (two round
// trips of plain commands instead of the script): beside the SDK's script,
// what the option saves Redis.
func (b *bench) twoStepAround(want int) impl {
	board, err := leaderboard.New(b.c.rue, b.name, append(slices.Clone(b.opts), leaderboard.WithTwoStepAround())...)
	return impl{name: "sdk two-step", units: 1, call: func(ctx context.Context, w *worker) error {
		if err != nil {
			return err
		}
		es, err := board.Around(ctx, b.members[w.pick(poolSize)], aroundRadius)
		if err == nil && len(es) != want {
			return errCheck
		}
		return err
	}}
}
