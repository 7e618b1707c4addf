package leaderboard

import (
	"context"
	"sync"

	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/scripts"
)

// batchInFlight is how many of a batch's writes a sharded board sends at
// once: rueidis pipelines them on its connections.
const batchInFlight = 64

// submitBatch writes a Batcher's batch on a sharded board: on one node as
// one script (submitBatchLocal), on a Cluster in Submit's two steps, each
// one round trip for the whole batch (submitBatchCluster).
func (lb *shardedBackend) submitBatch(ctx context.Context, ws []*batchWrite) error {
	if !lb.cluster {
		return lb.submitBatchLocal(ctx, ws)
	}
	return lb.submitBatchCluster(ctx, ws)
}

// submitEach writes writes each as a Submit of its own, sent batchInFlight
// at a time; a member's writes run one after another, in their order, the
// members at once. Each write's error is its own; after a refused one the
// member's later writes are not sent (errLater: the Batcher writes them
// after the refused one, again one submission at a time).
func (lb *shardedBackend) submitEach(ctx context.Context, ws []*batchWrite) {
	byMember := map[string][]*batchWrite{}
	var order []string
	for _, w := range ws {
		if _, ok := byMember[w.sub.member]; !ok {
			order = append(order, w.sub.member)
		}
		byMember[w.sub.member] = append(byMember[w.sub.member], w)
	}
	sem := make(chan struct{}, batchInFlight)
	var wg sync.WaitGroup
	for _, m := range order {
		sem <- struct{}{}
		wg.Add(1)
		go func(chain []*batchWrite) {
			defer func() { <-sem; wg.Done() }()
			for i, w := range chain {
				if _, w.err = lb.submit(ctx, w.sub, w.live, w.where, w.out); isRefusal(w.err) {
					for _, later := range chain[i+1:] {
						later.err = errLater
					}
					return
				}
			}
		}(byMember[m])
	}
	wg.Wait()
}

// submitBatchLocal writes a batch on a sharded board whose keys share one
// node as one script (shard_batch.lua), each write as Submit writes it;
// while a shadow layout is kept (WithShadowShards), its share after it
// (one call for the members of each set of periods, as Submit sends
// one); with a hot top it rewrites the mirrors of every period it wrote
// after them: all in one round trip, as an unsharded board's batch.
func (lb *shardedBackend) submitBatchLocal(ctx context.Context, ws []*batchWrite) error {
	ks, tgs, bw := lb.batchLayout(ws)
	scale, bounds := lb.scriptBounds()
	calls := []scripts.Call{scripts.ShardBatchCall(lb.writeHeader(0, nil), ks, scale, bounds, bw)}
	if lb.shadow != nil {
		calls = append(calls, lb.batchShadow(ws)...)
	}
	return lb.runBatch(ctx, calls, tgs, ws)
}

// batchShadow is the shadow layout's share of a one-node batch: for each
// set of periods its writes name, one call that puts their members into
// the shadow's shards from their partitions (see withShadowLocal).
func (lb *shardedBackend) batchShadow(ws []*batchWrite) []scripts.Call {
	var lives [][]target
	var members [][]string
	group := map[foldID]int{}
	for _, w := range ws {
		id := foldKey("", w.live) // the periods alone
		g, ok := group[id]
		if !ok {
			g = len(lives)
			group[id], lives, members = g, append(lives, w.live), append(members, nil)
		}
		members[g] = append(members[g], w.sub.member)
	}
	calls := make([]scripts.Call, len(lives))
	for g, live := range lives {
		calls[g] = lb.shadow.manyLocalCall("repair", live, members[g], nil, 0)
		calls[g].Follows = true // it copies what the batch wrote: see scripts.Call
	}
	return calls
}

// batchLayout lays a batch out as shard_batch.lua takes it: the keys
// (every shard of each period the writes name, in the order first named,
// then their partitions' hashes and data hashes), those periods, and the
// writes pointing into the keys.
func (lb *shardedBackend) batchLayout(ws []*batchWrite) ([]string, []target, []scripts.ShardBatchWrite) {
	var shards []string // every shard of each period, in period order
	var tgs []target
	period := map[string]int{}
	var named []string // the partition and data hashes, by index
	at := map[string]int{}
	name := func(k string) int {
		i, ok := at[k]
		if !ok {
			i = len(named)
			at[k], named = i, append(named, k)
		}
		return i
	}
	bw := make([]scripts.ShardBatchWrite, len(ws))
	for i, w := range ws {
		part := lb.parts.Of(keys.PartitionOf(w.sub.member))
		b := scripts.ShardBatchWrite{Member: w.sub.member, Value: lb.subValue(w.sub), Slot: w.sub.t,
			Data: w.sub.data, DataKey: -1, Expires: expiresOf(w.live)}
		if w.sub.data != "" {
			b.DataKey = name(part.Data())
		}
		for _, tg := range w.live {
			p, ok := period[tg.key]
			if !ok {
				p = len(tgs)
				period[tg.key], tgs = p, append(tgs, tg)
				shards = lb.appendShardKeys(shards, tg)
			}
			b.Periods, b.Parts = append(b.Periods, p), append(b.Parts, name(part.Period(tg.window.Name(), tg.period.ID)))
		}
		bw[i] = b
	}
	for i := range bw { // the named hashes follow the shards
		for j := range bw[i].Parts {
			bw[i].Parts[j] += len(shards)
		}
		if bw[i].DataKey >= 0 {
			bw[i].DataKey += len(shards)
		}
	}
	return append(shards, named...), tgs, bw
}
