package leaderboard

import (
	"context"
	"iter"
	"strconv"

	"github.com/redis/rueidis"
)

// walkCursor is where All's walk resumes: after the entry (value, member),
// value being its stored value as Redis printed it ("" before the first
// chunk), in the shard at bestFirst[shard] on a sharded board.
type walkCursor struct {
	shard         int
	value, member string
	done          bool
	// pos is the position right after the cursor's entry (in its shard, on
	// a sharded board); cards every shard's count when the last chunk was
	// read (nil before; the first chunk plans by the counts a read last
	// saw): what a sharded board plans the next chunk by.
	pos   int64
	cards []int64
}

// All walks every entry of the period best first, each with its rank at
// the time its chunk was read, fetching up to MaxN entries a round trip
// (on a sharded board too, from the shards the chunk spans by the counts
// the last chunk saw, the first chunk by those the board's last read of
// the window saw, or the best shard alone when none did; with IncludeData
// two round trips a chunk there; on a Cluster under Ordinal ranks without
// data a chunk that resumes inside a shard reads it by a MULTI in a
// pipeline of its own, sent at the same time as the other shards' reads:
// two calls to the client in that one round trip, see WithShards).
// Each chunk resumes after the last entry the previous one yielded, by
// its score and member (keyset continuation, not an offset): an entry
// whose score does not change during the walk is yielded exactly once,
// and in order, while others write; one that changes may be yielded twice
// or not at all. Under a tie-break "changes" includes its time: a Replace
// or Set of the same score, which stamps a new time, moves it. On a
// sharded board on a Cluster a member a crashed write left in two shards
// (see WithShards) is yielded once when one chunk reads both copies, and
// twice when two chunks do, until it is swept. The walk stops at the first
// error, which it yields with a zero Entry. Memory stays that of one
// chunk, whatever the board's size: the season-end export.
func (lb *Leaderboard) All(ctx context.Context, q ...Query) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		tg, err := lb.read(q)
		if err != nil {
			yield(Entry{}, cutShort(ctx, err))
			return
		}
		if err := notStarted(ctx, "all"); err != nil {
			yield(Entry{}, err)
			return
		}
		var at walkCursor
		for !at.done {
			var es []Entry
			if es, at, err = lb.be.walk(ctx, tg, at, MaxN); err != nil {
				yield(Entry{}, cutShort(ctx, wrap("all", err)))
				return
			}
			for _, e := range es {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}

// cursorHolds reports whether the cursor's entry still holds the value
// and the place (one before at.pos) the cursor knows, from the replies to
// its ZSCORE and rank.
func cursorHolds(replies []rueidis.RedisMessage, at walkCursor) (bool, error) {
	v, had, err := optFloat(&replies[0])
	want, perr := strconv.ParseFloat(at.value, 64)
	if err != nil || perr != nil || !had || v != want {
		return false, err
	}
	p, ok, err := optInt(&replies[1])
	return err == nil && ok && p+1 == at.pos, err
}

// walkTake is how many of the got entries a shard answered a chunk, asked
// a, takes, room being what is left of the chunk's n: at most a.want (the
// entry read past it tells only whether the shard holds more); more when
// the shard holds entries the chunk leaves to the next, which resumes in
// it (walkResume).
func walkTake(a walkAsk, got, room int) (take int, more bool) {
	take = min(got, a.want, room)
	return take, take < got
}

// walkResume is the cursor after a chunk that ends in the shard at k
// (bestFirst's index) having taken taken of it, the first at position lo
// in the shard: after the last of taken, whose stored value stored
// gives; where the cursor at was when the chunk took none of at's shard;
// else at the start of shard k.
func walkResume(at walkCursor, k int, taken []Entry, lo int64, cards []int64, stored func() (string, error)) (walkCursor, error) {
	switch {
	case len(taken) > 0:
		value, err := stored()
		e := taken[len(taken)-1]
		return walkCursor{shard: k, value: value, member: e.Member, pos: lo + int64(len(taken)), cards: cards}, err
	case k == at.shard:
		at.cards = cards
		return at, nil
	default:
		return walkCursor{shard: k, cards: cards}, nil
	}
}
