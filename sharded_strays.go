package leaderboard

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// strayProbe reads, in a batch's second step on a Cluster, the members
// whose write changed nothing in one shard of a layout (the board's, or
// its shadow's while bounds move) that is not their value's: a copy found
// there is one a write that died between its steps left behind (its put
// landed, its delete did not). A Submit that changes nothing reads its
// member in its other shards in the same way (shardCalls, shadowProbes);
// the copies found are dropped in one round trip more (dropStrays), rare.
// A probe is one ZMSCORE: a drop op of shard_write.lua for every member
// and shard would cost Redis a script step each on every batch.
type strayProbe struct {
	be      *shardedBackend // the layout
	tg      target
	shard   int
	members []string
	rows    []indexRow // each member's partition row
	// period is the probe's index into the batch's periods on the board's
	// layout (its count feeds the standings), -1 on the shadow's.
	period int
}

// unchangedProbes are the probes of the members whose row changed
// nothing in the period tg of this layout: in every shard but their
// value's. period as strayProbe's.
func (lb *shardedBackend) unchangedProbes(tg target, members []string, rows []indexRow, period int) []strayProbe {
	ps := make([]strayProbe, len(lb.bounds)+1)
	for j, m := range members {
		row := rows[j]
		keep, ok := lb.unchangedShard(row)
		for i := range ps {
			if ok && i != keep {
				ps[i].members, ps[i].rows = append(ps[i].members, m), append(ps[i].rows, row)
			}
		}
	}
	out := ps[:0]
	for i, p := range ps {
		if len(p.members) > 0 {
			p.be, p.tg, p.shard, p.period = lb, tg, i, period
			out = append(out, p)
		}
	}
	return out
}

// probeCalls are the probes' reads, in their order.
func probeCalls(probes []strayProbe) []scripts.Call {
	calls := make([]scripts.Call, len(probes))
	for k, p := range probes {
		calls[k] = p.be.zmscoreCall(p.be.shardKey(p.shard, p.tg), p.members)
	}
	return calls
}

// dropStrays drops, in one round trip, every copy the probes found
// (results: their replies, in their order), each at its row's floor
// (sweepOp: a copy a write newer than the batch's first step put there
// stays); a dropping shard's count after it goes into cards[period] on the
// board's layout. No copy found, no round trip.
func (lb *shardedBackend) dropStrays(ctx context.Context, probes []strayProbe, results []rueidis.RedisResult, cards [][]int64) error {
	var calls []scripts.Call
	var from []strayProbe
	for k, p := range probes {
		found, err := results[k].ToArray()
		if err != nil || len(found) != len(p.members) {
			return fmt.Errorf("shard probe returned %d values for %d members: %w", len(found), len(p.members), err)
		}
		var drops []shardOp
		for j, m := range p.members {
			if !found[j].IsNil() {
				drops = append(drops, sweepOp(m, p.rows[j]))
			}
		}
		if len(drops) > 0 {
			calls, from = append(calls, p.be.shardWriteCall(p.shard, p.tg, false, drops)), append(from, p)
		}
	}
	for k, r := range scripts.ExecMulti(ctx, lb.primaryClient(), calls) {
		v, err := r.AsIntSlice()
		if err != nil || len(v) == 0 {
			return fmt.Errorf("shard drop returned %v: %w", v, err)
		}
		if p := from[k]; p.period >= 0 {
			cards[p.period][p.shard] = v[len(v)-1]
		}
	}
	return nil
}
