package leaderboard

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/redis/rueidis"
)

func (lb *Leaderboard) high() bool { return lb.order == HighestFirst }

func checkMember(member string) error {
	if member == "" {
		return fmt.Errorf("%w: empty member", ErrInvalidMember)
	}
	if len(member) > MaxMemberLen {
		return fmt.Errorf("%w: member of %d bytes, limit %d", ErrInvalidMember, len(member), MaxMemberLen)
	}
	return nil
}

// checkMembers checks a read's member list: least..MaxN members
// (ErrInvalidArgument), each a valid member (ErrInvalidMember).
func checkMembers(members []string, least int) error {
	if len(members) < least || len(members) > MaxN {
		return fmt.Errorf("%w: %d members, want %d..%d", ErrInvalidArgument, len(members), least, MaxN)
	}
	for _, m := range members {
		if err := checkMember(m); err != nil {
			return err
		}
	}
	return nil
}

// distinct returns members without repeats, in their order: members
// itself when it has none (the common case, without allocating beyond a
// small set), so that a store recording one row a member (pgstore's
// removals) meets each once.
func distinct(members []string) []string {
	if len(members) < 2 {
		return members
	}
	seen := make(map[string]struct{}, len(members))
	for i, m := range members {
		if _, dup := seen[m]; dup {
			return keepFirst(members, seen, i)
		}
		seen[m] = struct{}{}
	}
	return members
}

// keepFirst finishes distinct from members[i], the first repeat, with
// seen holding members[:i]: a copy, as the caller's slice is not ours.
func keepFirst(members []string, seen map[string]struct{}, i int) []string {
	out := append(make([]string, 0, len(members)-1), members[:i]...)
	for _, m := range members[i+1:] {
		if _, dup := seen[m]; !dup {
			seen[m] = struct{}{}
			out = append(out, m)
		}
	}
	return out
}

// checkData refuses member data longer than MaxDataLen.
func checkData(data string) error {
	if len(data) > MaxDataLen {
		return fmt.Errorf("%w: data of %d bytes, limit %d", ErrInvalidArgument, len(data), MaxDataLen)
	}
	return nil
}

func checkScore(score float64) error {
	if math.IsNaN(score) || math.IsInf(score, 0) {
		return fmt.Errorf("%w: %v", ErrInvalidScore, score)
	}
	return nil
}

// takeScore checks a score a write takes (Submit, SubmitMany, Set, a
// Batcher's Submit: every one passes here) and returns it in the one
// spelling every write keeps, in Redis and in the store alike: -0 as 0,
// which Redis would print as "-0" and a store that does not normalise it
// (memory, a log) would keep as -0 from one path and 0 from another for
// the same submission. A NaN or ±Inf score is ErrInvalidScore. What a
// tie-break cannot hold is the caller's to check, where it scales the
// score (storedOf; SubmitMany's checkEntry), once.
func takeScore(score float64) (float64, error) {
	if err := checkScore(score); err != nil {
		return 0, err
	}
	if score == 0 {
		score = 0 // -0 too
	}
	return score, nil
}

// percentile is the share of the other members ranked below, 0..100.
func percentile(worse, total int64) float64 {
	if total <= 1 {
		return 100
	}
	return float64(worse) / float64(total-1) * 100
}

// standing completes a standing from a rank and, under Competition, the
// number of members strictly worse (under Ordinal it follows from the rank).
func (lb *Leaderboard) standing(member string, score float64, rank, worse, total int64) Standing {
	if lb.ranking == Ordinal {
		worse = total - rank
	}
	return Standing{
		Entry:      Entry{Member: member, Score: score, Rank: rank},
		Total:      total,
		Percentile: percentile(worse, total),
	}
}

// rankEntries numbers entries that sit at 0-based position start onwards;
// first is the rank of the first entry under Competition.
func (lb *Leaderboard) rankEntries(es []Entry, start, first int64) {
	for i := range es {
		pos := start + int64(i) + 1
		switch {
		case lb.ranking == Ordinal:
			es[i].Rank = pos
		case i == 0:
			es[i].Rank = first
		case es[i].Score == es[i-1].Score:
			es[i].Rank = es[i-1].Rank
		default:
			// Everything before a new score is strictly better, so its
			// competition rank is its position.
			es[i].Rank = pos
		}
	}
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

func (lb *Leaderboard) rankCmd(key, member string) rueidis.Completed {
	if lb.high() {
		return lb.client.B().Zrevrank().Key(key).Member(member).Build()
	}
	return lb.client.B().Zrank().Key(key).Member(member).Build()
}

// storedOf is what Redis stores for a score reached at t: the score, or
// under a tie-break its composite, with the scaled score s and the time
// slot. ErrPrecision when the tie-break cannot hold either exactly.
func (lb *Leaderboard) storedOf(score float64, t time.Time) (stored float64, s, slot int64, err error) {
	if lb.tb == nil {
		return score, 0, 0, nil
	}
	if s, err = lb.tb.scaled(score); err != nil {
		return 0, 0, 0, err
	}
	if slot, err = lb.tb.slot(t); err != nil {
		return 0, 0, 0, err
	}
	return lb.tb.encode(s, slot, lb.high()), s, slot, nil
}
