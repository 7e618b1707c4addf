package main

import (
	"context"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard"
)

// The "rueidis competition" versions (-ranking competition): the reads
// whose ranks need the count of the members strictly better than an entry
// (Rank; Range, a page past the first, Around, AroundScore and Cutoff, for
// their first entry), read by hand with plain commands in the fewest round
// trips those allow, returning the ranks the SDK returns. The ordinal
// versions beside them ("rueidis", "rueidis 2 RT") return less: positions.
//
// A slice reads one entry more, the one before it: when its score differs
// from the first entry's, every member before the slice is strictly better
// and the first entry's rank is its position; only when they tie does a
// ZCOUNT round trip more count the members strictly better. A score-range
// shard holds every member of a score, so on a sharded board a tie never
// crosses a shard's edge. Neither is one moment of the board, where the
// SDK's are.

// competitionName is the versions' name.
const competitionName = "rueidis competition"

// competes reports whether the board ranks by competition, where the
// versions above are added.
func (b *bench) competes() bool { return b.cfg.ranking == leaderboard.Competition }

// onCompetition adds op's "rueidis competition" version, which sends what.
func (b *bench) onCompetition(op *operation, what string, call func(context.Context, *worker) error) {
	if !b.competes() {
		return
	}
	op.desc += "; \"" + competitionName + "\" reads the competition ranks the SDK returns by hand: " + what
	op.impls = append(op.impls, impl{name: competitionName, units: 1, call: call})
}

// betterCmd counts the members of key strictly better than the score v.
func (b *bench) betterCmd(key, v string) rueidis.Completed {
	if b.high() {
		return b.c.rue.B().Zcount().Key(key).Min("(" + v).Max("+inf").Build()
	}
	return b.c.rue.B().Zcount().Key(key).Min("-inf").Max("(" + v).Build()
}

// worseCmd counts the members of key strictly worse than the score v.
func (b *bench) worseCmd(key, v string) rueidis.Completed {
	if b.high() {
		return b.c.rue.B().Zcount().Key(key).Min("-inf").Max("(" + v).Build()
	}
	return b.c.rue.B().Zcount().Key(key).Min("(" + v).Max("+inf").Build()
}

// competitionRanks numbers entries read from 0-based position start whose
// first entry's rank is first, as the SDK does: a tie shares the rank
// before it, a new score's rank is its position.
func competitionRanks(zs []rueidis.ZScore, start, first int64) []int64 {
	ranks := make([]int64, len(zs))
	for i := range zs {
		switch {
		case i == 0:
			ranks[i] = first
		case zs[i].Score == zs[i-1].Score:
			ranks[i] = ranks[i-1]
		default:
			ranks[i] = start + int64(i) + 1
		}
	}
	return ranks
}

// firstRank is the competition rank of zs[1], at 0-based position start of
// key (better members before key's first counted in offset), where zs[0]
// is the entry before it: its position, or after a ZCOUNT round trip when
// the two tie. It returns the entries from start and their ranks.
func (b *bench) firstRank(ctx context.Context, key string, zs []rueidis.ZScore, start, offset int64) ([]rueidis.ZScore, []int64, error) {
	if len(zs) < 2 {
		return nil, nil, nil
	}
	prev, zs := zs[0], zs[1:]
	first := start + 1
	if prev.Score == zs[0].Score {
		n, err := b.c.rue.Do(ctx, b.betterCmd(key, formatScore(zs[0].Score))).AsInt64()
		if err != nil {
			return nil, nil, err
		}
		first = offset + n + 1
	}
	return zs, competitionRanks(zs, start, first), nil
}

// competitionSlice reads positions start..stop (0-based) of key with their
// competition ranks (see firstRank), more sent in the same pipeline as the
// slice; it returns the entries, their ranks and more's replies.
func (b *bench) competitionSlice(ctx context.Context, key string, start, stop int64, more ...rueidis.Completed) ([]rueidis.ZScore, []int64, []rueidis.RedisResult, error) {
	lo := max(0, start-1)
	res := b.c.rue.DoMulti(ctx, append(rueidis.Commands{b.rangeCmd(key, lo, stop)}, more...)...)
	zs, err := res[0].AsZScores()
	if err != nil {
		return nil, nil, nil, err
	}
	if start == 0 {
		return zs, competitionRanks(zs, 0, 1), res[1:], nil
	}
	zs, ranks, err := b.firstRank(ctx, key, zs, start, 0)
	return zs, ranks, res[1:], err
}

// rankCompetition is Rank by hand: the member's score and the total, then
// the members strictly better (its rank) and strictly worse (its
// percentile), two round trips.
func (b *bench) rankCompetition(ctx context.Context, key, m string) error {
	res := b.c.rue.DoMulti(ctx, b.c.rue.B().Zscore().Key(key).Member(m).Build(), b.c.rue.B().Zcard().Key(key).Build())
	s, err := res[0].AsFloat64()
	if err != nil {
		return err
	}
	total, err := res[1].AsInt64()
	if err != nil {
		return err
	}
	v := formatScore(s)
	res = b.c.rue.DoMulti(ctx, b.betterCmd(key, v), b.worseCmd(key, v))
	better, err := res[0].AsInt64()
	if err != nil {
		return err
	}
	worse, err := res[1].AsInt64()
	if err != nil {
		return err
	}
	if better+worse >= total {
		return errCheck
	}
	return nil
}

// checkSlice checks a slice read by hand from 0-based position start:
// want entries, whose ranks never fall and lie between 1 and their
// position (ties share the best of their places).
func checkSlice(zs []rueidis.ZScore, ranks []int64, start int64, want int) error {
	if len(zs) != want {
		return errCheck
	}
	for i, r := range ranks {
		if r < 1 || r > start+int64(i)+1 || (i > 0 && r < ranks[i-1]) {
			return errCheck
		}
	}
	return nil
}

// addCompetition adds the "rueidis competition" version of the reads that
// have one; the rest keep theirs.
func (b *bench) addCompetition(op *operation) {
	key := b.raw[0].key
	switch op.name {
	case "rank":
		b.onCompetition(op, "the member's ZSCORE and the ZCARD, then the ZCOUNTs of the members strictly better and strictly worse (two round trips)", func(ctx context.Context, w *worker) error {
			return b.rankCompetition(ctx, key, b.members[w.pick(poolSize)])
		})
	case "range":
		b.onCompetition(op, "one ZRANGE of the positions and the one before, a ZCOUNT round trip more when those two tie", func(ctx context.Context, w *worker) error {
			f := 1 + int64(w.pick(b.cfg.members-rangeLen+1))
			zs, ranks, _, err := b.competitionSlice(ctx, key, f-1, f+rangeLen-2)
			if err != nil {
				return err
			}
			return checkSlice(zs, ranks, f-1, rangeLen)
		})
	case "page-deep":
		start := int64(max(1, b.cfg.members/2/pageSize)-1) * pageSize
		b.onCompetition(op, "the page's ZRANGE with the entry before it and the ZCARD pipelined, a ZCOUNT round trip more when those two tie", func(ctx context.Context, _ *worker) error {
			zs, ranks, more, err := b.competitionSlice(ctx, key, start, start+pageSize-1, b.c.rue.B().Zcard().Key(key).Build())
			if err != nil {
				return err
			}
			if _, err := more[0].AsInt64(); err != nil {
				return err
			}
			return checkSlice(zs, ranks, start, pageSize)
		})
	case "around":
		b.onCompetition(op, "the member's rank and the ZCARD, then the slice's ZRANGE with the entry before it, a ZCOUNT round trip more when those two tie", func(ctx context.Context, w *worker) error {
			return b.aroundCompetition(ctx, key, b.members[w.pick(poolSize)])
		})
	case "around-score":
		b.onCompetition(op, "the ZCOUNT of the members strictly better, then the slice's ZRANGE with the entry before it, a ZCOUNT round trip more when those two tie", func(ctx context.Context, w *worker) error {
			return b.aroundScoreCompetition(ctx, key, float64(w.pick(b.cfg.scoreMax)))
		})
	case "cutoff":
		b.onCompetition(op, "the ZCARD, then the ZRANGE of the position and the one before, a ZCOUNT round trip more when those two tie", func(ctx context.Context, _ *worker) error {
			n, err := b.c.rue.Do(ctx, b.c.rue.B().Zcard().Key(key).Build()).AsInt64()
			if err != nil {
				return err
			}
			pos := cutoffPos(n)
			zs, ranks, _, err := b.competitionSlice(ctx, key, pos-1, pos-1)
			if err != nil {
				return err
			}
			return checkSlice(zs, ranks, pos-1, 1)
		})
	}
	if b.shardKeys != nil {
		b.addShardsCompetition(op)
	}
}

// aroundCompetition is Around by hand under competition ranks.
func (b *bench) aroundCompetition(ctx context.Context, key, m string) error {
	want := 2*aroundRadius + 1
	rank, total, err := b.positionAndTotal(ctx, key, m)
	if err != nil {
		return err
	}
	start := max(0, min(rank-aroundRadius, total-int64(want)))
	zs, ranks, _, err := b.competitionSlice(ctx, key, start, start+int64(want)-1)
	if err != nil {
		return err
	}
	return checkSlice(zs, ranks, start, want)
}

// aroundScoreCompetition is AroundScore by hand under competition ranks:
// the members strictly better than score, then the slice around that
// place; a slice cut short by either end of the board holds fewer
// entries (aroundScoreLen).
func (b *bench) aroundScoreCompetition(ctx context.Context, key string, score float64) error {
	better, err := b.c.rue.Do(ctx, b.betterCmd(key, formatScore(score))).AsInt64()
	if err != nil {
		return err
	}
	start := max(0, better-aroundScoreRadius)
	zs, ranks, _, err := b.competitionSlice(ctx, key, start, better+aroundScoreRadius-1)
	if err != nil {
		return err
	}
	return checkSlice(zs, ranks, start, aroundScoreLen(better, int64(b.cfg.members)))
}

// addShardsCompetition adds the "rueidis shards competition" version of
// range and cutoff on a sharded board.
func (b *bench) addShardsCompetition(op *operation) {
	if !b.competes() {
		return
	}
	name := "rueidis shards competition"
	switch op.name {
	case "range":
		b.onShardsAs(op, name, "every shard's ZCARD, then a ZRANGE on each shard the range spans, on the first one from the entry before the range when that shard holds it, and a ZCOUNT on that shard when the two tie (two round trips, three on a tie)", func(ctx context.Context, w *worker) error {
			return b.shardsCompetition(ctx, func(int64) int64 { return int64(w.pick(b.cfg.members - rangeLen + 1)) }, rangeLen)
		})
	case "cutoff":
		b.onShardsAs(op, name, "every shard's ZCARD, then the ZRANGE of the position and the one before on its shard, and a ZCOUNT on that shard when the two tie (two round trips, three on a tie)", func(ctx context.Context, _ *worker) error {
			return b.shardsCompetition(ctx, func(total int64) int64 { return cutoffPos(total) - 1 }, 1)
		})
	}
}

// shardsCompetition reads n positions of a sharded board from the one
// startAt gives (0-based, from the board's total) with their competition
// ranks, by hand, and checks them.
func (b *bench) shardsCompetition(ctx context.Context, startAt func(total int64) int64, n int64) error {
	zs, ranks, start, err := b.shardsCompetitionSlice(ctx, startAt, n)
	if err != nil {
		return err
	}
	return checkSlice(zs, ranks, start, int(n))
}

// shardsCompetitionSlice is shardsCompetition's read: the entries, their
// ranks and the position of the first.
func (b *bench) shardsCompetitionSlice(ctx context.Context, startAt func(total int64) int64, n int64) ([]rueidis.ZScore, []int64, int64, error) {
	cards, _, err := b.shardCards(ctx)
	if err != nil {
		return nil, nil, 0, err
	}
	start := startAt(sum(cards))
	var cmds rueidis.Commands
	var firstKey string
	offset, firstOffset, extra := int64(0), int64(0), false
	for _, i := range b.shardKeys.bestFirst {
		if lo, hi := max(start-offset, 0), min(start+n-offset, cards[i]); lo < hi {
			if len(cmds) == 0 {
				firstKey, firstOffset, extra = b.shardKeys.keys[i], offset, lo > 0
				lo -= min(lo, 1)
			}
			cmds = append(cmds, b.rangeCmd(b.shardKeys.keys[i], lo, hi-1))
		}
		offset += cards[i]
	}
	var zs []rueidis.ZScore
	for _, r := range b.c.rue.DoMulti(ctx, cmds...) {
		got, err := r.AsZScores()
		if err != nil {
			return nil, nil, 0, err
		}
		zs = append(zs, got...)
	}
	if !extra {
		return zs, competitionRanks(zs, start, start+1), start, nil
	}
	zs, ranks, err := b.firstRank(ctx, firstKey, zs, start, firstOffset)
	return zs, ranks, start, err
}
