package main

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// The reads games ask for (issue 15) and the operator's Set, each beside
// the raw rueidis commands that return the same data, decoded as far as a
// caller would. The raw versions read ordinal ranks: an entry's rank is
// its position, which they count from the position they read. Under
// -ranking competition that is less than the SDK returns where a rank needs
// the count of an entry's ties first (Range, Cutoff, Rank), and the same
// where the count comes from the bounds asked (Between, AroundScore).

const (
	// rangeLen is how many entries range reads.
	rangeLen = 20
	// betweenN is Between's n.
	betweenN = 20
	// windowMembers is how many loaded members a random score window of
	// between and count-between holds on average.
	windowMembers = 100
	// cutoffPercent is Cutoff's percent.
	cutoffPercent = 10
	// aroundScoreRadius is AroundScore's radius.
	aroundScoreRadius = 5
)

// scoreWindow draws a random score range lo..hi (inclusive) inside
// [0, score-max) wide enough to hold windowMembers of the members as
// loaded on average (their scores are uniform), so that Between's n fill.
func (b *bench) scoreWindow(w *worker) (lo, hi float64) {
	width := int(min(int64(b.cfg.scoreMax), max(1, int64(b.cfg.scoreMax)*windowMembers/int64(b.cfg.members))))
	l := w.pick(b.cfg.scoreMax - width + 1)
	return float64(l), float64(l + width - 1)
}

func formatScore(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func (b *bench) rangeOp() operation {
	key := b.raw[0].key
	op := operation{name: "range", desc: fmt.Sprintf("Range(from, from+%d): the %d entries from a random position, with their ranks; \"rueidis\": one ZRANGE by rank, the ranks counted from the position (Ordinal)", rangeLen-1, rangeLen)}
	from := func(w *worker) int64 { return 1 + int64(w.pick(b.cfg.members-rangeLen+1)) }
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			f := from(w)
			es, err := b.board.Range(ctx, f, f+rangeLen-1)
			if err == nil && (len(es) != rangeLen || !b.rankFits(es[rangeLen-1].Rank, f+rangeLen-1)) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, w *worker) error {
			f := from(w)
			zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, f-1, f+rangeLen-2)).AsZScores()
			if err == nil && len(zs) != rangeLen {
				return errCheck
			}
			return err
		}},
	)
	b.onShards(&op, "every shard's ZCARD, then a ZRANGE on each shard the range spans", func(ctx context.Context, w *worker) error {
		return b.rangeShards(ctx, from(w))
	})
	return b.withBaselines(op)
}

// betweenCmds are Between by hand: the members better than the range (the
// first entry's rank is one more under Ordinal ranks) and the best
// betweenN entries inside it.
func (b *bench) betweenCmds(key string, lo, hi float64) (better, entries rueidis.Completed) {
	bd := b.c.rue.B()
	l, h := formatScore(lo), formatScore(hi)
	if b.high() {
		return bd.Zcount().Key(key).Min("(" + h).Max("+inf").Build(),
			bd.Zrange().Key(key).Min(h).Max(l).Byscore().Rev().Limit(0, betweenN).Withscores().Build()
	}
	return bd.Zcount().Key(key).Min("-inf").Max("(" + l).Build(),
		bd.Zrange().Key(key).Min(l).Max(h).Byscore().Limit(0, betweenN).Withscores().Build()
}

// checkBetween decodes a hand-written Between's replies: the first rank
// and the entries.
func (b *bench) checkBetween(better, entries *rueidis.RedisMessage) error {
	n, err := better.AsInt64()
	if err != nil {
		return err
	}
	zs, err := entries.AsZScores()
	if err != nil {
		return err
	}
	if first := n + 1; len(zs) > betweenN || first+int64(len(zs))-1 > int64(b.cfg.members) {
		return errCheck
	}
	return nil
}

func (b *bench) betweenOp() operation {
	key := b.raw[0].key
	op := operation{name: "between", desc: fmt.Sprintf("Between(lo, hi, %d): the best %d entries of a random score window holding about %d members as loaded, with their ranks, read atomically; \"rueidis\" pipelines a ZCOUNT of the members better than the window (the first rank) and a ZRANGE BYSCORE LIMIT 0 %d, \"rueidis MULTI\" wraps them in MULTI/EXEC", betweenN, betweenN, windowMembers, betweenN)}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			lo, hi := b.scoreWindow(w)
			es, err := b.board.Between(ctx, lo, hi, betweenN)
			// Fewer than n where submits have moved the scores (KeepBest
			// pushes the members it draws up the board).
			if err == nil && len(es) > 0 && (len(es) > betweenN || !b.ranksRun(es)) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, w *worker) error {
			lo, hi := b.scoreWindow(w)
			better, entries := b.betweenCmds(key, lo, hi)
			res := b.c.rue.DoMulti(ctx, better, entries)
			replies := make([]rueidis.RedisMessage, len(res))
			for i, r := range res {
				var err error
				if replies[i], err = r.ToMessage(); err != nil {
					return err
				}
			}
			return b.checkBetween(&replies[0], &replies[1])
		}},
		impl{name: "rueidis MULTI", units: 1, call: func(ctx context.Context, w *worker) error {
			lo, hi := b.scoreWindow(w)
			better, entries := b.betweenCmds(key, lo, hi)
			bd := b.c.rue.B()
			res := b.c.rue.DoMulti(ctx, bd.Multi().Build(), better, entries, bd.Exec().Build())
			replies, err := res[3].ToArray()
			if err != nil {
				return err
			}
			return b.checkBetween(&replies[0], &replies[1])
		}},
	)
	b.onShards(&op, "one pipeline of a ZCARD of each shard wholly better than the window, the ZCOUNT of the members better than it in the best shard it spans, and a ZRANGE BYSCORE LIMIT 0 "+fmt.Sprint(betweenN)+" on each shard it spans", func(ctx context.Context, w *worker) error {
		lo, hi := b.scoreWindow(w)
		return b.betweenShards(ctx, lo, hi, false)
	})
	b.onShardsAs(&op, "rueidis shards MULTI", "the same, the best shard's ZCOUNT and ZRANGE in one MULTI/EXEC (one moment of that shard, as the SDK reads it), sent first; on a Cluster the MULTI in a pipeline of its own beside the others, at once, as rueidis cannot pipeline a MULTI beside other slots' commands", func(ctx context.Context, w *worker) error {
		lo, hi := b.scoreWindow(w)
		return b.betweenShards(ctx, lo, hi, true)
	})
	return b.withBaselines(op)
}

func (b *bench) countBetweenOp() operation {
	key := b.raw[0].key
	op := operation{name: "count-between", desc: fmt.Sprintf("CountBetween(lo, hi): the members of a random score window holding about %d as loaded; \"rueidis\": ZCOUNT", windowMembers)}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			lo, hi := b.scoreWindow(w)
			n, err := b.board.CountBetween(ctx, lo, hi)
			if err == nil && (n < 0 || n > int64(b.cfg.members)) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, w *worker) error {
			lo, hi := b.scoreWindow(w)
			n, err := b.c.rue.Do(ctx, b.c.rue.B().Zcount().Key(key).Min(formatScore(lo)).Max(formatScore(hi)).Build()).AsInt64()
			if err == nil && (n < 0 || n > int64(b.cfg.members)) {
				return errCheck
			}
			return err
		}},
	)
	b.onShards(&op, "a ZCOUNT on each shard the window spans, pipelined", func(ctx context.Context, w *worker) error {
		lo, hi := b.scoreWindow(w)
		n, err := b.countBetweenShards(ctx, lo, hi)
		if err == nil && (n < 0 || n > int64(b.cfg.members)) {
			return errCheck
		}
		return err
	})
	return b.withBaselines(op)
}

// aroundScoreLen is how many entries AroundScore returns for a score with
// better members strictly better than it on a board of total members.
func aroundScoreLen(better, total int64) int {
	return int(min(better+aroundScoreRadius, total) - max(0, better-aroundScoreRadius))
}

func (b *bench) aroundScoreOp() operation {
	key := b.raw[0].key
	total := int64(b.cfg.members)
	op := operation{name: "around-score", desc: fmt.Sprintf("AroundScore(score, %d): where a random score would place and the %d entries around that place; \"rueidis MULTI\": the ZCOUNT of the members strictly better and the %d entries nearest the score either side (ZRANGE BYSCORE LIMIT) in one MULTI/EXEC, as the SDK reads it under Ordinal ranks; \"rueidis 2 RT\": that ZCOUNT, then a ZRANGE by rank: two round trips, as a range by rank depends on the count", aroundScoreRadius, 2*aroundScoreRadius, aroundScoreRadius)}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			r, es, err := b.board.AroundScore(ctx, float64(w.pick(b.cfg.scoreMax)), aroundScoreRadius)
			if err == nil && (r < 1 || len(es) != aroundScoreLen(r-1, total)) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis MULTI", units: 1, call: func(ctx context.Context, w *worker) error {
			better, es, err := b.aroundScoreMulti(ctx, key, float64(w.pick(b.cfg.scoreMax)))
			if err == nil && len(es) != aroundScoreLen(better, total) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis 2 RT", units: 1, call: func(ctx context.Context, w *worker) error {
			s := formatScore(float64(w.pick(b.cfg.scoreMax)))
			cnt := b.c.rue.B().Zcount().Key(key).Min("-inf").Max("(" + s)
			if b.high() {
				cnt = b.c.rue.B().Zcount().Key(key).Min("(" + s).Max("+inf")
			}
			better, err := b.c.rue.Do(ctx, cnt.Build()).AsInt64()
			if err != nil {
				return err
			}
			start, stop := max(0, better-aroundScoreRadius), better+aroundScoreRadius-1
			zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, start, stop)).AsZScores()
			if err == nil && len(zs) != aroundScoreLen(better, total) {
				return errCheck
			}
			return err
		}},
	)
	b.onShards(&op, "every shard's ZCARD and a ZCOUNT of the members strictly better in the score's shard, then a ZRANGE on each shard the slice spans", func(ctx context.Context, w *worker) error {
		return b.aroundScoreShards(ctx, float64(w.pick(b.cfg.scoreMax)))
	})
	b.onShardsAs(&op, "rueidis shards MULTI", "every shard's ZCARD and, in one MULTI/EXEC on the score's shard (one moment of that shard, as the SDK reads it on one node; on a Cluster the SDK reads that shard by a script), the ZCOUNT of its members strictly better and the entries nearest the score either side (ZRANGE BYSCORE LIMIT), in one round trip (on a Cluster the MULTI in a pipeline of its own beside the others, at once); a second round trip by rank only when the slice reaches past that shard's edge", func(ctx context.Context, w *worker) error {
		return b.aroundScoreShardsMulti(ctx, float64(w.pick(b.cfg.scoreMax)))
	})
	return b.withBaselines(op)
}

// aroundScoreMulti is AroundScore by hand in one round trip, as the SDK
// reads an unsharded board under Ordinal ranks: a MULTI/EXEC of the
// ZCOUNT of the members strictly better than score and the
// aroundScoreRadius entries nearest it on either side (ZRANGE BYSCORE
// LIMIT). It returns the count and the entries, best first, with their
// ranks, counted from the count.
func (b *bench) aroundScoreMulti(ctx context.Context, key string, score float64) (int64, []leaderboard.Entry, error) {
	res := b.c.rue.DoMulti(ctx, b.aroundScoreTx(key, formatScore(score), aroundScoreRadius)...)
	replies, err := res[len(res)-1].ToArray()
	if err != nil {
		return 0, nil, err
	}
	better, err := replies[0].AsInt64()
	if err != nil {
		return 0, nil, err
	}
	before, err := replies[1].AsZScores() // nearest first
	if err != nil {
		return 0, nil, err
	}
	after, err := replies[2].AsZScores()
	if err != nil {
		return 0, nil, err
	}
	es := make([]leaderboard.Entry, 0, len(before)+len(after))
	for i := range before {
		z := before[len(before)-1-i]
		es = append(es, leaderboard.Entry{Member: z.Member, Score: z.Score})
	}
	for _, z := range after {
		es = append(es, leaderboard.Entry{Member: z.Member, Score: z.Score})
	}
	first := better - int64(len(before)) + 1
	for i := range es {
		es[i].Rank = first + int64(i)
	}
	return better, es, nil
}

// cutoffPos is Cutoff's 1-based position among total members.
func cutoffPos(total int64) int64 {
	return max(1, int64(math.Ceil(float64(total)*cutoffPercent/100)))
}

func (b *bench) cutoffOp() operation {
	key := b.raw[0].key
	want := cutoffPos(int64(b.cfg.members))
	op := operation{name: "cutoff", desc: fmt.Sprintf("Cutoff(%d): the entry at position ceil(total*%d/100), the score to reach to be in the best %d%%; \"rueidis 2 RT\": ZCARD, then a ZRANGE of that position: two round trips, as the position depends on the count", cutoffPercent, cutoffPercent, cutoffPercent)}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, _ *worker) error {
			e, err := b.board.Cutoff(ctx, cutoffPercent)
			if err == nil && !b.rankFits(e.Rank, want) {
				return errCheck
			}
			return err
		}},
		impl{name: "rueidis 2 RT", units: 1, call: func(ctx context.Context, _ *worker) error {
			total, err := b.c.rue.Do(ctx, b.c.rue.B().Zcard().Key(key).Build()).AsInt64()
			if err != nil {
				return err
			}
			pos := cutoffPos(total)
			zs, err := b.c.rue.Do(ctx, b.rangeCmd(key, pos-1, pos-1)).AsZScores()
			if err == nil && (len(zs) != 1 || pos != want) {
				return errCheck
			}
			return err
		}},
	)
	b.onShards(&op, "every shard's ZCARD, then a ZRANGE of the position on its shard", func(ctx context.Context, _ *worker) error {
		return b.cutoffShards(ctx)
	})
	return b.withBaselines(op)
}

func (b *bench) setOp() operation {
	rk := b.raw[0]
	op := operation{name: "set", desc: "Set(member, score): an operator's correction, the member's score in the first window becomes the given one whatever the policy; \"rueidis\": a ZADD of it to that window's set (and its PEXPIREAT on a windowed set, pipelined), no standing read"}
	if b.cfg.shards > 0 || b.cfg.tieBreak != "none" {
		op.desc += "; the baseline writes a plain sorted set"
	}
	op.impls = append(op.impls,
		impl{name: "sdk", units: 1, call: func(ctx context.Context, w *worker) error {
			return b.board.Set(ctx, b.members[w.pick(poolSize)], b.scores[w.pick(poolSize)])
		}},
		impl{name: "rueidis", units: 1, call: func(ctx context.Context, w *worker) error {
			m, v := b.members[w.pick(poolSize)], b.scores[w.pick(poolSize)]
			bd := b.c.rue.B()
			zadd := bd.Zadd().Key(rk.key).ScoreMember().ScoreMember(v, m).Build()
			if rk.expire.IsZero() {
				return b.c.rue.Do(ctx, zadd).Error()
			}
			for _, r := range b.c.rue.DoMulti(ctx, zadd, bd.Pexpireat().Key(rk.key).MillisecondsTimestamp(rk.expire.UnixMilli()).Build()) {
				if err := r.Error(); err != nil {
					return err
				}
			}
			return nil
		}},
	)
	return b.withBaselines(op)
}
