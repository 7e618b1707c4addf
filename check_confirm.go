package leaderboard

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/redis/rueidis"
)

// Check's scan reads a period's partitions first, 256 a round trip, then
// each shard, a ZSCAN at a time: a write landing between two of those
// reads shows as a finding on a sound board (a member written after its
// partition was read as stale or misplaced, a new one as a stray, one
// crossing a bound between two shards' scans as missing or duplicated).
// So the scan only names suspects, and a finding stands once reads of
// the suspects alone confirm it (confirmSuspects).

// confirmChunk is the most suspects one round trip of a confirming read
// takes (one HMGET a partition and one ZMSCORE a shard of them).
const confirmChunk = 1000

// confirmNeed is how many confirming reads in a row must find a member
// wrong, its partition holding one value through them, where no one read
// sees a settled moment (a Cluster, a one-node shadow).
const confirmNeed = 2

// confirmPauses are the pauses before each confirming read after the
// first, where one read is not enough: a write in flight at one read has
// landed by the next. Their number bounds the reads.
var confirmPauses = []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond}

// suspectRead is what one read of suspects found: the values of those
// their partitions hold, and, for those in a shard, the shards holding
// each and its value in each (as scanShards returns them).
type suspectRead struct {
	truth map[string]string
	where map[string][]int
	found map[string][]string
}

// confirmSuspects reads suspects again and returns the findings that
// stand, with the shards holding each member found wrong (as the read
// that confirmed it saw them). On one node every write of the board's
// own layout is one script over the member's partition and shards, and
// one MULTI reads the partitions and shards of the suspects at one moment:
// what it finds wrong is wrong at that moment. Elsewhere a write takes
// two steps (on a Cluster its partition, then its shards, on other
// nodes; on one node a shadow's share is a second script after the
// write's), so no one read settles it: see confirmByRereads.
func (lb *shardedBackend) confirmSuspects(ctx context.Context, tg target, suspects []string) (map[string]finding, map[string][]int, error) {
	if len(suspects) == 0 {
		return nil, nil, nil
	}
	if lb.cluster || lb.isShadow {
		return lb.confirmByRereads(ctx, tg, suspects)
	}
	rd, err := lb.readSuspectsLocal(ctx, tg, suspects)
	if err != nil {
		return nil, nil, err
	}
	return lb.findings(rd.truth, rd.where, rd.found), rd.where, nil
}

// confirmByRereads reads the suspects ms again, as a write goes (on a
// Cluster their partitions, then their shards, then their partitions
// again; on one node one MULTI a read), after each read but the first a
// pause (confirmPauses), and keeps the members that confirmNeed reads in
// a row found wrong while their partitions held one value: a member
// found right is dropped, and a read across which its partition changed
// (a write was under way) counts for nothing. A member still unsettled
// after the last read (one written through every read) is dropped too:
// its writes are rewriting its shards.
func (lb *shardedBackend) confirmByRereads(ctx context.Context, tg target, ms []string) (map[string]finding, map[string][]int, error) {
	fs, where := map[string]finding{}, map[string][]int{}
	streak := map[string]int{}
	var before map[string]string
	var err error
	if lb.cluster {
		if before, err = lb.suspectParts(ctx, tg, ms); err != nil {
			return nil, nil, err
		}
	}
	for try := 0; len(ms) > 0 && try <= len(confirmPauses); try++ {
		if try > 0 {
			if err := pause(ctx, confirmPauses[try-1]); err != nil {
				return nil, nil, wrap("check", err)
			}
		}
		rd, after, err := lb.rereadSuspects(ctx, tg, ms, before)
		if err != nil {
			return nil, nil, err
		}
		now := lb.findings(rd.truth, rd.where, rd.found)
		left := ms[:0:0]
		for _, m := range ms {
			switch f := now[m]; {
			case f == 0: // right at this read
			case !sameStored(rd.truth, after, m):
				streak[m] = 0
				left = append(left, m)
			case streak[m]+1 >= confirmNeed:
				fs[m], where[m] = f, rd.where[m]
			default:
				streak[m]++
				left = append(left, m)
			}
		}
		ms, before = left, after
	}
	return fs, where, nil
}

// rereadSuspects is one read of confirmByRereads: the suspects ms's
// partitions (before: on a Cluster as read last) and shards, and their
// partitions after the shards (on one node the same read).
func (lb *shardedBackend) rereadSuspects(ctx context.Context, tg target, ms []string, before map[string]string) (suspectRead, map[string]string, error) {
	if !lb.cluster {
		rd, err := lb.readSuspectsLocal(ctx, tg, ms)
		return rd, rd.truth, err
	}
	rd, err := lb.suspectShards(ctx, tg, ms)
	if err != nil {
		return rd, nil, err
	}
	rd.truth = before
	after, err := lb.suspectParts(ctx, tg, ms)
	return rd, after, err
}

// sameStored reports whether m has the same value in a and b, or is in
// neither.
func sameStored(a, b map[string]string, m string) bool {
	x, inA := a[m]
	y, inB := b[m]
	return inA == inB && x == y
}

// readSuspectsLocal reads ms's partitions and this layout's shards on one
// node, confirmChunk members a MULTI (a round trip), each at one moment;
// over Redis's maxmemory, which refuses a MULTI, by script (inTx).
func (lb *shardedBackend) readSuspectsLocal(ctx context.Context, tg target, ms []string) (suspectRead, error) {
	rd := suspectRead{truth: map[string]string{}, where: map[string][]int{}, found: map[string][]string{}}
	for chunk := range slices.Chunk(ms, confirmChunk) {
		cmds, at := lb.partHMGETs(nil, chunk, lb.periodPart(tg))
		cmds = append(cmds, lb.shardZMSCOREs(tg, chunk)...)
		res := primaryOnly{lb.client}.inTx(ctx, cmds...)
		if err := rd.addParts(res[:len(at)], at, chunk); err != nil {
			return rd, err
		}
		if err := rd.addShards(res[len(at):], chunk); err != nil {
			return rd, err
		}
	}
	return rd, nil
}

// suspectParts reads ms's values from their partitions of tg, from the
// primaries, confirmChunk members a round trip.
func (lb *shardedBackend) suspectParts(ctx context.Context, tg target, ms []string) (map[string]string, error) {
	rd := suspectRead{truth: map[string]string{}}
	for chunk := range slices.Chunk(ms, confirmChunk) {
		cmds, at := lb.partHMGETs(nil, chunk, lb.periodPart(tg))
		if err := rd.addParts(lb.fromPrimaries(ctx, cmds), at, chunk); err != nil {
			return nil, err
		}
	}
	return rd.truth, nil
}

// suspectShards reads ms's values in every shard of this layout of tg,
// from the primaries, confirmChunk members a round trip.
func (lb *shardedBackend) suspectShards(ctx context.Context, tg target, ms []string) (suspectRead, error) {
	rd := suspectRead{where: map[string][]int{}, found: map[string][]string{}}
	for chunk := range slices.Chunk(ms, confirmChunk) {
		if err := rd.addShards(lb.fromPrimaries(ctx, lb.shardZMSCOREs(tg, chunk)), chunk); err != nil {
			return rd, err
		}
	}
	return rd, nil
}

// periodPart is the key of partition p of tg's period.
func (lb *shardedBackend) periodPart(tg target) func(p int) string {
	return func(p int) string { return lb.parts.Of(p).Period(tg.window.Name(), tg.period.ID) }
}

// shardZMSCOREs reads ms in each shard of this layout of tg, in order.
func (lb *shardedBackend) shardZMSCOREs(tg target, ms []string) rueidis.Commands {
	sk := lb.periodShardKeys(tg)
	cmds := make(rueidis.Commands, len(sk))
	for i, k := range sk {
		cmds[i] = lb.client.B().Zmscore().Key(k).Member(ms...).Build()
	}
	return cmds
}

// addParts adds partHMGETs' replies for ms to rd.truth.
func (rd *suspectRead) addParts(res []rueidis.RedisResult, at [][]int, ms []string) error {
	vals, err := spreadHMGETs(res, at, len(ms))
	if err != nil {
		return wrap("check", err)
	}
	for j, v := range vals {
		if v.IsNil() {
			continue
		}
		s, err := v.ToString()
		if err != nil {
			return wrap("check", err)
		}
		rd.truth[ms[j]] = s
	}
	return nil
}

// addShards adds shardZMSCOREs' replies for ms, shard by shard, to
// rd.where and rd.found.
func (rd *suspectRead) addShards(res []rueidis.RedisResult, ms []string) error {
	for i, r := range res {
		vals, err := r.ToArray()
		if err == nil && len(vals) != len(ms) {
			err = errShortZMSCORE
		}
		if err != nil {
			return wrap("check", err)
		}
		for j, v := range vals {
			if v.IsNil() {
				continue
			}
			f, err := v.AsFloat64()
			if err != nil {
				return wrap("check", err)
			}
			rd.where[ms[j]] = append(rd.where[ms[j]], i)
			rd.found[ms[j]] = append(rd.found[ms[j]], strconv.FormatFloat(f, 'g', -1, 64))
		}
	}
	return nil
}

// errShortZMSCORE is a ZMSCORE reply of another length than its members.
var errShortZMSCORE = errors.New("a shard answered ZMSCORE with a count of values other than its members'")
