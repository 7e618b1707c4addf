package main

import (
	"context"
	"slices"
	"sort"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
)

// The "rueidis shards" versions of the reads of a sharded board (-shards):
// the same data read by hand from the board's own shard keys, as a rueidis
// user would read a board split by score (every shard's count to turn a
// position in a shard into a rank on the board), where the "rueidis"
// versions read one plain sorted set holding the same members. The SDK's
// cost against these is what its code adds; against the plain set, what
// the sharded layout adds as well. Only without -tiebreak (the shards then
// hold plain scores) and for the first window.

// shardKeys is the board's shard layout as the raw versions read it.
type shardKeys struct {
	keys      []string  // shard i's sorted set in the first window's current period
	bounds    []float64 // the board's WithShards bounds
	bestFirst []int     // shard indexes in the board's order
}

// newShardKeys is the layout of the board b measures; nil unsharded or
// with a tie-break.
func newShardKeys(b *bench) *shardKeys {
	if len(b.bounds) == 0 || b.cfg.tieBreak != "none" {
		return nil
	}
	w := b.windows[0]
	p := w.Period(time.Now())
	s := &shardKeys{bounds: b.bounds}
	for i, sh := range keys.NewBoard(b.cfg.prefix, b.name).Shards(b.bounds) {
		s.keys = append(s.keys, sh.Period(w.Name(), p.ID))
		s.bestFirst = append(s.bestFirst, i)
	}
	if b.high() {
		for i, j := 0, len(s.bestFirst)-1; i < j; i, j = i+1, j-1 {
			s.bestFirst[i], s.bestFirst[j] = s.bestFirst[j], s.bestFirst[i]
		}
	}
	return s
}

// onShards adds op's "rueidis shards" version, which sends what, on a
// sharded board the tool can read by hand (see shardKeys).
func (b *bench) onShards(op *operation, what string, call func(context.Context, *worker) error) {
	b.onShardsAs(op, "rueidis shards", what, call)
}

// onShardsAs is onShards with the version's name.
func (b *bench) onShardsAs(op *operation, name, what string, call func(context.Context, *worker) error) {
	if b.shardKeys == nil {
		return
	}
	op.desc += "; \"" + name + "\" reads the board's own shards: " + what
	op.impls = append(op.impls, impl{name: name, units: 1, call: call})
}

// of is the shard holding score x: the number of bounds at or below it.
func (s *shardKeys) of(x float64) int {
	return sort.Search(len(s.bounds), func(i int) bool { return s.bounds[i] > x })
}

// cards reads every shard's count in one round trip, with more commands
// after them in the same pipeline; it returns the counts and the replies
// to more.
func (b *bench) shardCards(ctx context.Context, more ...rueidis.Completed) ([]int64, []rueidis.RedisResult, error) {
	s := b.shardKeys
	cmds := make(rueidis.Commands, 0, len(s.keys)+len(more))
	for _, k := range s.keys {
		cmds = append(cmds, b.c.rue.B().Zcard().Key(k).Build())
	}
	res := b.c.rue.DoMulti(ctx, append(cmds, more...)...)
	cards := make([]int64, len(s.keys))
	for i := range cards {
		var err error
		if cards[i], err = res[i].AsInt64(); err != nil {
			return nil, nil, err
		}
	}
	return cards, res[len(s.keys):], nil
}

// shardSlice reads positions [start, start+n) of the board (0-based, its
// order) given the shards' counts, one ZRANGE on each shard they span, in
// one round trip; it returns how many entries came back.
func (b *bench) shardSlice(ctx context.Context, cards []int64, start, n int64) (int, error) {
	var cmds rueidis.Commands
	offset := int64(0)
	for _, i := range b.shardKeys.bestFirst {
		if lo, hi := max(start-offset, 0), min(start+n-offset, cards[i]); lo < hi {
			cmds = append(cmds, b.rangeCmd(b.shardKeys.keys[i], lo, hi-1))
		}
		offset += cards[i]
	}
	got := 0
	for _, r := range b.c.rue.DoMulti(ctx, cmds...) {
		zs, err := r.AsZScores()
		if err != nil {
			return 0, err
		}
		got += len(zs)
	}
	return got, nil
}

// rangeShards is Range by hand: every shard's count, then the slice from
// the shards it spans (two round trips).
func (b *bench) rangeShards(ctx context.Context, from int64) error {
	cards, _, err := b.shardCards(ctx)
	if err != nil {
		return err
	}
	got, err := b.shardSlice(ctx, cards, from-1, rangeLen)
	if err == nil && got != rangeLen {
		return errCheck
	}
	return err
}

// betweenShards is Between by hand in one pipeline (not one moment): the
// count of each shard wholly better than the window, the members better
// than the window in the best shard it spans, and the best betweenN of
// each shard it spans; the entries are the first betweenN of those in the
// board's order.
func (b *bench) betweenShards(ctx context.Context, lo, hi float64, multi bool) error {
	s := b.shardKeys
	first, last := s.of(hi), s.of(lo) // best and worst spanned shard
	if !b.high() {
		first, last = last, first
	}
	// With multi the best spanned shard's two reads are one MULTI, first.
	cmds, ntx := rueidis.Commands{}, 0
	if multi {
		cmds, ntx = make(rueidis.Commands, 4, 4+len(s.bestFirst)), 4
	}
	betterShards := 0
	for _, i := range s.bestFirst {
		if i == first {
			break
		}
		cmds = append(cmds, b.c.rue.B().Zcard().Key(s.keys[i]).Build())
		betterShards++
	}
	for k, i := range s.bestFirst {
		if k < betterShards {
			continue
		}
		better, entries := b.betweenCmds(s.keys[i], lo, hi)
		switch {
		case i == first && multi:
			cmds[0], cmds[1], cmds[2], cmds[3] = b.c.rue.B().Multi().Build(), better, entries, b.c.rue.B().Exec().Build()
		case i == first:
			cmds = append(cmds, better, entries)
		default:
			cmds = append(cmds, entries)
		}
		if i == last {
			break
		}
	}
	res, err := b.doApart(ctx, cmds, ntx)
	if err != nil {
		return err
	}
	// The counts (ZCARD, ZCOUNT) sum to the first rank; the rest are
	// entries.
	rank, got := int64(1), 0
	for _, r := range res {
		if r.IsInt64() {
			n, _ := r.AsInt64()
			rank += n
			continue
		}
		zs, err := r.AsZScores()
		if err != nil {
			return err
		}
		got += len(zs)
	}
	if got = min(got, betweenN); rank+int64(got)-1 > int64(b.cfg.members) {
		return errCheck
	}
	return nil
}

// doApart sends cmds, the first ntx of them one MULTI/EXEC, in one round
// trip, as a rueidis user must on a Cluster, where rueidis cannot pipeline
// a MULTI beside other slots' commands: two pipelines at once. It returns
// the replies in the order of cmds, the MULTI's as EXEC's elements (the
// MULTI's own "OK" and "QUEUED"s dropped).
func (b *bench) doApart(ctx context.Context, cmds rueidis.Commands, ntx int) ([]rueidis.RedisMessage, error) {
	var res []rueidis.RedisResult
	if b.c.rue.Mode() != rueidis.ClientModeCluster || ntx == 0 {
		res = b.c.rue.DoMulti(ctx, cmds...)
	} else {
		done := make(chan []rueidis.RedisResult, 1)
		go func() { done <- b.c.rue.DoMulti(ctx, cmds[:ntx]...) }()
		rest := b.c.rue.DoMulti(ctx, cmds[ntx:]...)
		res = append(<-done, rest...)
	}
	out := make([]rueidis.RedisMessage, 0, len(res))
	if ntx > 0 {
		exec, err := res[ntx-1].ToArray()
		if err != nil {
			return nil, err
		}
		out, res = append(out, exec...), res[ntx:]
	}
	for _, r := range res {
		m, err := r.ToMessage()
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// countBetweenShards is CountBetween by hand: a ZCOUNT on each shard the
// window spans, in one round trip.
func (b *bench) countBetweenShards(ctx context.Context, lo, hi float64) (int64, error) {
	s := b.shardKeys
	var cmds rueidis.Commands
	for i := s.of(lo); i <= s.of(hi); i++ {
		cmds = append(cmds, b.c.rue.B().Zcount().Key(s.keys[i]).Min(formatScore(lo)).Max(formatScore(hi)).Build())
	}
	n := int64(0)
	for _, r := range b.c.rue.DoMulti(ctx, cmds...) {
		c, err := r.AsInt64()
		if err != nil {
			return 0, err
		}
		n += c
	}
	return n, nil
}

// aroundScoreShards is AroundScore by hand: every shard's count and the
// members strictly better than the score in its own shard, then the slice
// around that place (two round trips).
func (b *bench) aroundScoreShards(ctx context.Context, score float64) error {
	s := b.shardKeys
	own := s.of(score)
	v := formatScore(score)
	cnt := b.c.rue.B().Zcount().Key(s.keys[own]).Min("-inf").Max("(" + v)
	if b.high() {
		cnt = b.c.rue.B().Zcount().Key(s.keys[own]).Min("(" + v).Max("+inf")
	}
	cards, res, err := b.shardCards(ctx, cnt.Build())
	if err != nil {
		return err
	}
	better, err := res[0].AsInt64()
	if err != nil {
		return err
	}
	for _, i := range s.bestFirst {
		if i == own {
			break
		}
		better += cards[i]
	}
	total := sum(cards)
	start := max(0, better-aroundScoreRadius)
	got, err := b.shardSlice(ctx, cards, start, better+aroundScoreRadius-start)
	if err == nil && got != aroundScoreLen(better, total) {
		return errCheck
	}
	return err
}

// aroundScoreShardsMulti is AroundScore by hand as the SDK reads it on
// one node (on a Cluster the SDK reads the score's shard by a script), one
// moment of that shard in one round trip: a MULTI/EXEC on that
// shard of the ZCOUNT of its members strictly better than the score and
// the aroundScoreRadius entries nearest the score on either side (ZRANGE
// BYSCORE LIMIT), beside every shard's ZCARD (on a Cluster the MULTI in a
// pipeline of its own, at once: doApart); only when the slice reaches past
// that shard's edge into a shard holding members, a second round trip
// reads it by rank, as aroundScoreShards does.
func (b *bench) aroundScoreShardsMulti(ctx context.Context, score float64) error {
	s, bd := b.shardKeys, b.c.rue.B()
	own, v, r := s.of(score), formatScore(score), int64(aroundScoreRadius)
	tx := b.aroundScoreTx(s.keys[own], v, r)
	for _, k := range s.keys {
		tx = append(tx, bd.Zcard().Key(k).Build())
	}
	out, err := b.doApart(ctx, tx, 5)
	if err != nil {
		return err
	}
	better, err := out[0].AsInt64()
	if err != nil {
		return err
	}
	near := [2]int64{}
	for j := range near {
		zs, err := out[1+j].AsZScores()
		if err != nil {
			return err
		}
		near[j] = int64(len(zs))
	}
	cards, err := int64Messages(out[3:])
	if err != nil {
		return err
	}
	var betterOut, worseOut, total int64
	at := slices.Index(s.bestFirst, own)
	for k, i := range s.bestFirst {
		switch {
		case k == at:
		case k < at:
			betterOut += cards[i]
		default:
			worseOut += cards[i]
		}
		total += cards[i]
	}
	better += betterOut
	got := int(min(near[0], r) + min(near[1], r))
	if (near[0] < r && betterOut > 0) || (near[1] < r && worseOut > 0) {
		start := max(0, better-r)
		if got, err = b.shardSlice(ctx, cards, start, better+r-start); err != nil {
			return err
		}
	}
	if got != aroundScoreLen(better, total) {
		return errCheck
	}
	return nil
}

// aroundScoreTx is aroundScoreShardsMulti's MULTI/EXEC on the score's
// shard key: the ZCOUNT of its members strictly better than the score v,
// the r entries nearest v strictly better than it, and the r nearest at
// or worse than it. The better side comes first whatever the board's
// order: aroundScoreShardsMulti reads the replies by place.
func (b *bench) aroundScoreTx(key, v string, r int64) rueidis.Commands {
	bd := b.c.rue.B()
	tx := rueidis.Commands{bd.Multi().Build(),
		bd.Zcount().Key(key).Min("-inf").Max("(" + v).Build(),
		bd.Zrange().Key(key).Min("("+v).Max("-inf").Byscore().Rev().Limit(0, r).Withscores().Build(),
		bd.Zrange().Key(key).Min(v).Max("+inf").Byscore().Limit(0, r).Withscores().Build(),
		bd.Exec().Build()}
	if b.high() {
		tx[1] = bd.Zcount().Key(key).Min("(" + v).Max("+inf").Build()
		tx[2] = bd.Zrange().Key(key).Min("("+v).Max("+inf").Byscore().Limit(0, r).Withscores().Build()
		tx[3] = bd.Zrange().Key(key).Min(v).Max("-inf").Byscore().Rev().Limit(0, r).Withscores().Build()
	}
	return tx
}

// int64Messages reads integer replies.
func int64Messages(ms []rueidis.RedisMessage) ([]int64, error) {
	out := make([]int64, len(ms))
	for i := range ms {
		var err error
		if out[i], err = ms[i].AsInt64(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cutoffShards is Cutoff by hand: every shard's count, then the one
// position from its shard (two round trips).
func (b *bench) cutoffShards(ctx context.Context) error {
	cards, _, err := b.shardCards(ctx)
	if err != nil {
		return err
	}
	total := sum(cards)
	got, err := b.shardSlice(ctx, cards, cutoffPos(total)-1, 1)
	if err == nil && (got != 1 || cutoffPos(total) != cutoffPos(int64(b.cfg.members))) {
		return errCheck
	}
	return err
}
