package leaderboard

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// Top returns the best n entries (1 <= n <= MaxN) of the default window's
// current period, or of the one the queries pick. One round trip (a sharded
// board too).
func (lb *Leaderboard) Top(ctx context.Context, n int, q ...Query) ([]Entry, error) {
	if n < 1 || n > MaxN {
		return nil, fmt.Errorf("%w: n = %d, want 1..%d", ErrInvalidArgument, n, MaxN)
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if lb.sharded() {
		return lb.topSharded(ctx, tg, n)
	}
	res := lb.client.Do(ctx, lb.rangeCmd(tg.key, 0, int64(n)-1))
	es, err := lb.zEntries(&res)
	if err != nil {
		return nil, wrap("top", err)
	}
	lb.rankEntries(es, 0, 1)
	return es, nil
}

// Rank returns member's standing: rank, score, the period's member count and
// percentile. ErrNotRanked when the member has no score there. One round trip;
// the parts are read atomically, so they always agree with each other (on a
// sharded board each shard is read atomically; see WithShards).
func (lb *Leaderboard) Rank(ctx context.Context, member string, q ...Query) (Standing, error) {
	if err := checkMember(member); err != nil {
		return Standing{}, err
	}
	tg, err := lb.read(q)
	if err != nil {
		return Standing{}, err
	}
	if lb.sharded() {
		return lb.rankSharded(ctx, tg, member)
	}
	key := tg.key
	if lb.ranking == Competition {
		r, err := scripts.Rank.Exec(ctx, lb.client, []string{key}, []string{member, flag(lb.high()), lb.slotsArg()}).ToArray()
		if err != nil {
			return Standing{}, notRankedOr("rank", member, err)
		}
		if len(r) != 4 {
			return Standing{}, wrap("rank", fmt.Errorf("script returned %d values, want 4", len(r)))
		}
		score, err := r[0].AsFloat64()
		if err != nil {
			return Standing{}, wrap("rank", err)
		}
		var v [3]int64
		for i := range v {
			if v[i], err = r[i+1].AsInt64(); err != nil {
				return Standing{}, wrap("rank", err)
			}
		}
		return lb.standing(member, lb.plain(score), v[0]+1, v[1], v[2]), nil
	}
	b := lb.client.B()
	replies, err := execResult(lb.client.DoMulti(ctx,
		b.Multi().Build(),
		b.Zscore().Key(key).Member(member).Build(),
		lb.rankCmd(key, member),
		b.Zcard().Key(key).Build(),
		b.Exec().Build(),
	))
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	score, ok, err := optFloat(&replies[0])
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	if !ok {
		return Standing{}, fmt.Errorf("%w: %q", ErrNotRanked, member)
	}
	rank, err := replies[1].AsInt64()
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	total, err := replies[2].AsInt64()
	if err != nil {
		return Standing{}, wrap("rank", err)
	}
	return lb.standing(member, lb.plain(score), rank+1, 0, total), nil
}

// Around returns the entries around member: min(2*radius+1, Total) entries
// holding member, centred on it where possible and shifted at either end of
// the board (0 <= radius <= MaxRadius). ErrNotRanked when the member has no
// score there. One round trip: the rank and the slice are read by one script;
// two on a sharded board (WithShards).
func (lb *Leaderboard) Around(ctx context.Context, member string, radius int, q ...Query) ([]Entry, error) {
	if err := checkMember(member); err != nil {
		return nil, err
	}
	if radius < 0 || radius > MaxRadius {
		return nil, fmt.Errorf("%w: radius = %d, want 0..%d", ErrInvalidArgument, radius, MaxRadius)
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if lb.sharded() {
		return lb.aroundSharded(ctx, tg, member, radius)
	}
	res := scripts.Range.Exec(ctx, lb.client, []string{tg.key},
		[]string{flag(lb.high()), flag(lb.ranking == Competition), "around", member, strconv.Itoa(radius), lb.slotsArg()})
	es, _, err := lb.rangeReply(res)
	if err != nil {
		return nil, notRankedOr("around", member, err)
	}
	return es, nil
}

// Page returns page number (1-based) of size entries (1 <= size <= MaxN). A
// page past the end has no entries and no error. One round trip; the entries
// and the total are read atomically. Two on a sharded board (WithShards).
func (lb *Leaderboard) Page(ctx context.Context, number, size int, q ...Query) (Page, error) {
	if size < 1 || size > MaxN {
		return Page{}, fmt.Errorf("%w: page size = %d, want 1..%d", ErrInvalidArgument, size, MaxN)
	}
	if number < 1 || int64(number-1) > (math.MaxInt64-int64(size))/int64(size) {
		return Page{}, fmt.Errorf("%w: page number = %d, want 1 or more", ErrInvalidArgument, number)
	}
	tg, err := lb.read(q)
	if err != nil {
		return Page{}, err
	}
	if lb.sharded() {
		return lb.pageSharded(ctx, tg, number, size)
	}
	key := tg.key
	start := int64(number-1) * int64(size)
	p := Page{Number: number, Size: size, Entries: []Entry{}}
	if lb.ranking == Competition {
		// The first entry's rank counts the members strictly better than it,
		// which only the server can do in the same step.
		res := scripts.Range.Exec(ctx, lb.client, []string{key},
			[]string{flag(lb.high()), "1", "page", strconv.FormatInt(start, 10), strconv.Itoa(size), lb.slotsArg()})
		es, total, err := lb.rangeReply(res)
		if err != nil {
			return Page{}, wrap("page", err)
		}
		p.Entries, p.Total = es, total
		return p, nil
	}
	b := lb.client.B()
	replies, err := execResult(lb.client.DoMulti(ctx,
		b.Multi().Build(),
		lb.rangeCmd(key, start, start+int64(size)-1),
		b.Zcard().Key(key).Build(),
		b.Exec().Build(),
	))
	if err != nil {
		return Page{}, wrap("page", err)
	}
	es, err := lb.zMessageEntries(&replies[0])
	if err != nil {
		return Page{}, wrap("page", err)
	}
	if p.Total, err = replies[1].AsInt64(); err != nil {
		return Page{}, wrap("page", err)
	}
	if len(es) > 0 {
		p.Entries = es
	}
	lb.rankEntries(p.Entries, start, 0)
	return p, nil
}

// Among returns the ranked members among members (a friends board), best
// first in the board's order, with Rank their rank among themselves;
// unranked members and repeats are left out. At most MaxN members. One round
// trip.
func (lb *Leaderboard) Among(ctx context.Context, members []string, q ...Query) ([]Entry, error) {
	if len(members) > MaxN {
		return nil, fmt.Errorf("%w: %d members, want at most %d", ErrInvalidArgument, len(members), MaxN)
	}
	for _, m := range members {
		if err := checkMember(m); err != nil {
			return nil, err
		}
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return []Entry{}, nil
	}
	var es []Entry // stored values in Score until decoded below
	if lb.sharded() {
		if es, err = lb.amongSharded(ctx, tg, members); err != nil {
			return nil, err
		}
	} else if es, err = lb.amongValues(ctx, tg.key, members); err != nil {
		return nil, err
	}
	// Sorted on the stored values, which hold the tie-break, then decoded.
	slices.SortFunc(es, lb.compare)
	es = slices.CompactFunc(es, func(a, b Entry) bool { return a.Member == b.Member })
	for i := range es {
		es[i].Score = lb.plain(es[i].Score)
	}
	lb.rankEntries(es, 0, 1)
	return es, nil
}

// amongValues reads members' stored values from one sorted set.
func (lb *Leaderboard) amongValues(ctx context.Context, key string, members []string) ([]Entry, error) {
	replies, err := lb.client.Do(ctx, lb.client.B().Zmscore().Key(key).Member(members...).Build()).ToArray()
	if err != nil {
		return nil, wrap("among", err)
	}
	if len(replies) != len(members) {
		return nil, wrap("among", fmt.Errorf("ZMSCORE returned %d scores for %d members", len(replies), len(members)))
	}
	es := make([]Entry, 0, len(members))
	for i := range replies {
		// Not AsFloatSlice: it would read a missing member as a score of 0.
		s, ok, err := optFloat(&replies[i])
		if err != nil {
			return nil, wrap("among", err)
		}
		if ok {
			es = append(es, Entry{Member: members[i], Score: s})
		}
	}
	return es, nil
}

// Count returns the number of members in the period. One round trip.
func (lb *Leaderboard) Count(ctx context.Context, q ...Query) (int64, error) {
	tg, err := lb.read(q)
	if err != nil {
		return 0, err
	}
	cmd := lb.client.B().Zcard().Key(tg.key).Build()
	if lb.sharded() {
		// The index, not the shards: it is exact even while members move.
		cmd = lb.client.B().Hlen().Key(keys.Index(tg.key)).Build()
	}
	n, err := lb.client.Do(ctx, cmd).AsInt64()
	return n, wrap("count", err)
}

// compare orders entries as the board does: by score, best first, and equal
// scores as Redis orders them in the board's direction: descending member
// bytes on a HighestFirst board (ZREVRANGE), ascending on a LowestFirst one.
func (lb *Leaderboard) compare(a, b Entry) int {
	c := 0
	switch {
	case a.Score < b.Score:
		c = -1
	case a.Score > b.Score:
		c = 1
	default:
		c = strings.Compare(a.Member, b.Member)
	}
	if lb.high() {
		return -c
	}
	return c
}

// rangeCmd reads positions start..stop (0-based, inclusive) best first.
func (lb *Leaderboard) rangeCmd(key string, start, stop int64) rueidis.Completed {
	r := lb.client.B().Zrange().Key(key).Min(strconv.FormatInt(start, 10)).Max(strconv.FormatInt(stop, 10))
	if lb.high() {
		return r.Rev().Withscores().Build()
	}
	return r.Withscores().Build()
}

// rangeReply decodes range.lua's reply into ranked entries and the total.
func (lb *Leaderboard) rangeReply(res rueidis.RedisResult) ([]Entry, int64, error) {
	r, err := res.ToArray()
	if err != nil {
		return nil, 0, err
	}
	if len(r) < 3 {
		return nil, 0, fmt.Errorf("script returned %d values, want at least 3", len(r))
	}
	var v [3]int64
	for i := range v {
		if v[i], err = r[i].AsInt64(); err != nil {
			return nil, 0, err
		}
	}
	es, err := lb.entries(r[3:])
	if err != nil {
		return nil, 0, err
	}
	lb.rankEntries(es, v[1], v[2])
	return es, v[0], nil
}
