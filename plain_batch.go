package leaderboard

import (
	"context"
	"fmt"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// submitBatch writes a Batcher's batch as one script (batch.lua), and with
// a hot top rewrites the mirrors of every period it wrote after it, in the
// same round trip (hot_top.lua leaves a mirror the batch did not change
// untouched, so its cached reads stay).
func (lb *plainBackend) submitBatch(ctx context.Context, ws []*batchWrite) error {
	var ks []string
	var tgs []target
	index := map[string]int{}
	bw := make([]scripts.BatchWrite, len(ws))
	for i, w := range ws {
		at := make([]int, len(w.live))
		for j, tg := range w.live {
			k, ok := index[tg.key]
			if !ok {
				k = len(ks)
				index[tg.key] = k
				ks, tgs = append(ks, tg.key), append(tgs, tg)
			}
			at[j] = k
		}
		bw[i] = scripts.BatchWrite{Member: w.sub.member, Value: lb.subValue(w.sub), Slot: w.sub.t,
			Data: w.sub.data, Keys: at, Expires: expiresOf(w.live)}
	}
	return lb.runBatch(ctx, []scripts.Call{scripts.BatchCall(lb.writeHeader(0, nil), ks, lb.keys.Data(), bw)}, tgs, ws)
}

// runBatch runs a batch's script (calls[0]) and the calls that follow it
// (a shadow layout's share), which write the periods tgs, and with a hot
// top the rewrites of their mirrors after them in the same round trip
// (hot_top.lua leaves a mirror the batch did not change untouched), and
// reports each write's answer into ws; a failure of a following call (a
// shadow layout's share) is the batch's, of a rewrite not (hotLost).
func (lb *Leaderboard) runBatch(ctx context.Context, calls []scripts.Call, tgs []target, ws []*batchWrite) error {
	var res []rueidis.RedisResult
	if lb.hot == nil {
		res = scripts.ExecMulti(ctx, lb.client, calls)
	} else {
		res = lb.withHot(ctx, calls, tgs)
	}
	v, err := res[0].ToArray()
	if err != nil {
		return err
	}
	if err := lb.batchReplies(v, ws); err != nil {
		return err
	}
	return firstErr(res[1:])
}

// batchReplies decodes batch.lua's reply into each write's out, or its
// refusal (or errLater) into its err.
func (lb *Leaderboard) batchReplies(v []rueidis.RedisMessage, ws []*batchWrite) error {
	const perWindow = 6
	for _, w := range ws {
		if len(v) == 0 {
			return fmt.Errorf("batch script returned too few values")
		}
		status, err := v[0].ToString()
		if err != nil {
			return err
		}
		v = v[1:]
		switch status {
		case "ok":
		case "later":
			w.err = errLater
			continue
		default:
			w.err = lb.batchRefusal(status, w)
			continue
		}
		n := perWindow * len(w.live)
		if len(v) < n {
			return fmt.Errorf("batch script returned %d values for %d windows", len(v), len(w.live))
		}
		if _, err := lb.submitReplies(v[:n], w.sub.member, w.live, w.where, w.out); err != nil {
			return err
		}
		v = v[n:]
	}
	if len(v) != 0 {
		return fmt.Errorf("batch script returned %d values more than its writes", len(v))
	}
	return nil
}
