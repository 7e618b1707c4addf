package leaderboard

import (
	"context"
	"sync"
)

// batchInFlight is how many of a batch's writes a sharded board sends at
// once: rueidis pipelines them on its connections.
const batchInFlight = 64

// submitBatch writes a Batcher's batch on a sharded board: every folded
// write is a Submit of its own (atomic per member as Submit is), sent
// batchInFlight at a time. A member's writes to different periods stay in
// their order. Each write's error is its own.
func (lb *shardedBackend) submitBatch(ctx context.Context, ws []*batchWrite) error {
	// A member with writes to several periods (WithTime) has them in
	// arrival order: they run one after another, the members at once.
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
			for _, w := range chain {
				_, w.err = lb.submit(ctx, w.sub, w.live, w.where, w.out)
			}
		}(byMember[m])
	}
	wg.Wait()
	return nil
}
