package leaderboard

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/redis/rueidis"
)

// Top returns the best n entries (1 <= n <= MaxN) of the default window's
// current period, or of the one the queries pick. One round trip; on a
// sharded board two when it finds the best shard holding fewer than n
// members where it last held n or more (see WithShards). With WithHotTop
// and n <= k, from the client's memory while the top is unchanged, and in
// two round trips (four on a sharded Cluster board) when it finds no
// mirror and builds it (see WithHotTop).
func (lb *Leaderboard) Top(ctx context.Context, n int, q ...Query) (_ []Entry, err error) {
	defer endedWith(ctx, &err)
	if n < 1 || n > MaxN {
		return nil, fmt.Errorf("%w: n = %d, want 1..%d", ErrInvalidArgument, n, MaxN)
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if err := notStarted(ctx, "top"); err != nil {
		return nil, err
	}
	return lb.be.top(ctx, tg, n)
}

// Rank returns member's standing: rank, score, the period's member count and
// percentile. ErrNotRanked when the member has no score there. One round trip;
// the parts are read atomically, so they always agree with each other (on a
// sharded board each shard is read atomically, on a Cluster under Ordinal
// ranks by three commands of one pipeline; under Competition ranks on a
// Cluster two round trips, as Ranks reads, one for a member without a
// score there; see WithShards).
func (lb *Leaderboard) Rank(ctx context.Context, member string, q ...Query) (_ Standing, err error) {
	defer endedWith(ctx, &err)
	if err := checkMember(member); err != nil {
		return Standing{}, err
	}
	tg, err := lb.read(q)
	if err != nil {
		return Standing{}, err
	}
	if err := notStarted(ctx, "rank"); err != nil {
		return Standing{}, err
	}
	return lb.be.rank(ctx, tg, member)
}

// Ranks returns each member's standing on the whole board (its world rank,
// score, the period's Total and Percentile) in the order given: the world
// ranks of a friends screen in one call. A member without a score there
// gets its Member and the period's Total, Rank 0, Score 0 and Percentile 0,
// and no error. 1..MaxN members (ErrInvalidArgument), each a valid member
// (ErrInvalidMember); a repeat is answered twice. One round trip, read
// atomically; on a sharded board two: the shards' counts beside the
// members' partitions (which shard holds each), then each member's place in
// its shard (one more for a member caught between two shards, read from
// every shard; see WithShards).
func (lb *Leaderboard) Ranks(ctx context.Context, members []string, q ...Query) (_ []Standing, err error) {
	defer endedWith(ctx, &err)
	if err := checkMembers(members, 1); err != nil {
		return nil, err
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if err := notStarted(ctx, "ranks"); err != nil {
		return nil, err
	}
	return lb.be.ranks(ctx, tg, members)
}

// Around returns the entries around member: min(2*radius+1, Total) entries
// holding member, centred on it where possible and shifted at either end of
// the board (0 <= radius <= MaxRadius). ErrNotRanked when the member has no
// score there. One round trip: the rank and the slice are read by one script;
// two on a sharded board on a Cluster (WithShards; one for a member without
// a score there, which the first finds), and two, each atomic,
// on an unsharded board under Ordinal ranks with WithTwoStepAround
// (without IncludeData).
func (lb *Leaderboard) Around(ctx context.Context, member string, radius int, q ...Query) (_ []Entry, err error) {
	defer endedWith(ctx, &err)
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
	if err := notStarted(ctx, "around"); err != nil {
		return nil, err
	}
	return lb.be.around(ctx, tg, member, radius)
}

// Page returns page number (1-based) of size entries (1 <= size <= MaxN). A
// page past the end has no entries and no error. One round trip; the entries
// and the total are read atomically. On a sharded board one for a page
// inside the best shard (under Competition ranks, the first page only),
// else two (see WithShards). With WithHotTop a page within the first k
// positions takes its entries from the client's memory (see WithHotTop)
// and its total from Redis, not in one moment.
func (lb *Leaderboard) Page(ctx context.Context, number, size int, q ...Query) (_ Page, err error) {
	defer endedWith(ctx, &err)
	if size < 1 || size > MaxN {
		return Page{}, fmt.Errorf("%w: page size = %d, want 1..%d", ErrInvalidArgument, size, MaxN)
	}
	if number < 1 {
		return Page{}, fmt.Errorf("%w: page number = %d, want 1 or more", ErrInvalidArgument, number)
	}
	// A page whose first position overflows int64 lies past the end of
	// any board: it is read from the last positions int64 holds, as empty.
	start := math.MaxInt64 - int64(size)
	if int64(number-1) <= start/int64(size) {
		start = int64(number-1) * int64(size)
	}
	p, err := lb.positions(ctx, "page", q, start, size, true)
	if err != nil {
		return Page{}, err
	}
	p.Number, p.Size = number, size
	return p, nil
}

// positions reads n entries from the 0-based position start of the
// period q picks (its total too, with total), as Page, Range and Seal
// read: the period resolved on every call (one whose retention ended
// meanwhile is ErrExpired), ctx looked at before the round trip, op
// naming the error.
func (lb *Leaderboard) positions(ctx context.Context, op string, q []Query, start int64, n int, total bool) (Page, error) {
	tg, err := lb.read(q)
	if err != nil {
		return Page{}, err
	}
	if err := notStarted(ctx, op); err != nil {
		return Page{}, err
	}
	p, err := lb.be.page(ctx, tg, start, n, total)
	if err != nil {
		return Page{}, wrap(op, err)
	}
	return p, nil
}

// Cutoff returns the entry at position ceil(Total*percent/100), the first
// at least: the score to reach to be in the best percent% (a reward
// tier's threshold), with its rank. A product within float64 rounding of a
// whole number is that number, so a percent written in decimal names the
// position its decimal does (64.4% of 250 members: the 161st). 0 < percent <= 100, else
// ErrInvalidArgument; an empty period returns ErrNotRanked. One round trip
// (one script reads the count and the entry); on a sharded board one on a
// single node, two on a Cluster (the shards' counts, then the entry); with
// IncludeData see IncludeData.
func (lb *Leaderboard) Cutoff(ctx context.Context, percent float64, q ...Query) (_ Entry, err error) {
	defer endedWith(ctx, &err)
	if !(percent > 0 && percent <= 100) {
		return Entry{}, fmt.Errorf("%w: percent = %v, want 0 < percent <= 100", ErrInvalidArgument, percent)
	}
	tg, err := lb.read(q)
	if err != nil {
		return Entry{}, err
	}
	if err := notStarted(ctx, "cutoff"); err != nil {
		return Entry{}, err
	}
	es, err := lb.be.cutoff(ctx, tg, percent)
	if err != nil {
		return Entry{}, wrap("cutoff", err)
	}
	if len(es) == 0 {
		return Entry{}, fmt.Errorf("%w: the period is empty", ErrNotRanked)
	}
	return es[0], nil
}

// cutoffPosition is Cutoff's 1-based position among total members, as the
// scripts compute it (order.lua's cutoff_position, which range.lua and
// shard_page.lua call): ceil(total*percent/100), at least 1. A percent written in decimal is a float64 a hair off it
// (64.4 is 64.400000000000006), and the product can land a hair above the
// whole position the decimal names (250*64.4/100 computes as
// 161.00000000000003, where 64.4% of 250 is 161): within the error of its
// three roundings (the percent's, the product's and the quotient's, under
// 2^-51 of it), a product is the whole number it is that close to.
func cutoffPosition(total int64, percent float64) int64 {
	x := float64(total) * percent / 100
	if r := math.Round(x); math.Abs(x-r) <= r*0x1p-51 {
		x = r
	}
	return max(1, int64(math.Ceil(x)))
}

// Range returns the entries at board positions from..to inclusive (1-based,
// in board order: "ranks 4 to 20 under the podium"), each with its rank
// under the board's RankMode: 1 <= from <= to and at most MaxN entries
// (to-from+1), else ErrInvalidArgument. Past the end it returns what
// exists, possibly none. It reads as Page does, one round trip, the
// entries read atomically; on a sharded board one inside the best shard
// (under Competition ranks, from the first position only), else two (see
// WithShards); with IncludeData see IncludeData. With
// WithHotTop, entries within the first k positions come from the client's
// memory while the top is unchanged.
func (lb *Leaderboard) Range(ctx context.Context, from, to int64, q ...Query) (_ []Entry, err error) {
	defer endedWith(ctx, &err)
	if from < 1 || to < from || to-from >= MaxN {
		return nil, fmt.Errorf("%w: range %d..%d, want 1 <= from <= to, at most %d entries", ErrInvalidArgument, from, to, MaxN)
	}
	p, err := lb.positions(ctx, "range", q, from-1, int(to-from+1), false)
	if err != nil {
		return nil, err
	}
	if p.Entries == nil {
		p.Entries = []Entry{}
	}
	return p.Entries, nil
}

// Among returns the ranked members among members (a friends board), best
// first in the board's order, with Rank their rank among themselves;
// unranked members and repeats are left out. At most MaxN members. One round
// trip (none for an empty list, which has no entries).
func (lb *Leaderboard) Among(ctx context.Context, members []string, q ...Query) (_ []Entry, err error) {
	defer endedWith(ctx, &err)
	if err := checkMembers(members, 0); err != nil {
		return nil, err
	}
	tg, err := lb.read(q)
	if err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return []Entry{}, nil
	}
	if err := notStarted(ctx, "among"); err != nil {
		return nil, err
	}
	es, err := lb.be.among(ctx, tg, members) // stored values in Score until decoded below
	if err != nil {
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

// Count returns the number of members in the period. One round trip.
func (lb *Leaderboard) Count(ctx context.Context, q ...Query) (_ int64, err error) {
	defer endedWith(ctx, &err)
	tg, err := lb.read(q)
	if err != nil {
		return 0, err
	}
	if err := notStarted(ctx, "count"); err != nil {
		return 0, err
	}
	return lb.be.count(ctx, tg)
}

// rangeCmd reads positions start..stop (0-based, inclusive) best first.
func (lb *Leaderboard) rangeCmd(key string, start, stop int64) rueidis.Completed {
	r := lb.client.B().Zrange().Key(key).Min(strconv.FormatInt(start, 10)).Max(strconv.FormatInt(stop, 10))
	if lb.high() {
		return r.Rev().Withscores().Build()
	}
	return r.Withscores().Build()
}
