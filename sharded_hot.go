package leaderboard

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/scripts"
)

// A sharded board's hot top (WithHotTop; see hot.go) is one mirror a
// period, in the board's slot (keys.Board.Hot), of the period's first k
// across its shards. On one node
// hot_top.lua reads the shards and writes the mirror in one script, as on
// an unsharded board. On a Cluster the shards lie in other slots than the
// mirror, out of one script's reach: the client takes a turn on the
// mirror, reads every shard's first k, and puts the mirror with
// hot_put.lua, which refuses a put whose turn has passed; every write that
// may change the top takes a turn after it wrote, so a put read before
// that write cannot land after it.

// hotTurnTTL is how long a mirror's turn counter lives after its last
// turn. A reader that takes longer than this between its turn and its put
// (a process paused for an hour) may find the counter started again at its
// own turn and put what it read: the mirror then expires hotTTL later, as
// after a crash.
const hotTurnTTL = time.Hour

// hotSets lists tg's shards, best first: what a rewrite on one node
// (hot_top.lua) copies the first k from.
func (lb *shardedBackend) hotSets(tg target) []string {
	ks := make([]string, len(lb.bestFirst))
	for j, i := range lb.bestFirst {
		ks[j] = lb.shardKey(i, tg)
	}
	return ks
}

func (lb *shardedBackend) hotTurnKey(tg target) string {
	return lb.keys.HotTurn(tg.window.Name(), tg.period.ID)
}

// hotRewrite rewrites tgs' mirrors: on one node one hot_top.lua each, in
// one round trip; on a Cluster three round trips (a turn on each mirror,
// every shard's first k, the puts), one more when it finds a member in two
// shards (a move in flight, see readSpans).
func (lb *shardedBackend) hotRewrite(ctx context.Context, tgs []target) ([]Entry, error) {
	if !lb.cluster {
		return lb.hotRewriteAll(ctx, tgs)
	}
	turns, err := lb.hotTurns(ctx, tgs, false, hotTurnTTL)
	if err != nil {
		return nil, err
	}
	tops, err := lb.hotRead(ctx, tgs)
	if err != nil {
		return nil, err
	}
	puts := make([]scripts.Call, len(tgs))
	var es []Entry
	for i, tg := range tgs {
		members, values := make([]string, len(tops[i])), make([]string, len(tops[i]))
		es = make([]Entry, len(tops[i]))
		for j, e := range tops[i] {
			members[j], values[j] = e.Member, formatScore(e.Score)
			es[j] = Entry{Member: e.Member, Score: lb.plain(e.Score)}
		}
		puts[i] = scripts.HotPutCall(lb.readHeader(), lb.hotKey(tg), lb.hotTurnKey(tg), turns[i], hotTTL.Milliseconds(), lb.hot.k, tg.expire, members, values)
		lb.hotSeen(tg, es)
	}
	// A refused put (0) leaves the mirror to the later turn's holder; its
	// reader's entries are still what the period held when it read.
	return es, firstErr(scripts.ExecMulti(ctx, lb.client, puts))
}

// hotTurns takes a turn on each of tgs' mirrors, in one MULTI in the
// board's slot: an INCR of its counter, which it returns, and the
// counter's life set to life. With drop it also deletes the mirrors: a
// write's turn, taken after it wrote, which refuses every put read before
// it.
func (lb *shardedBackend) hotTurns(ctx context.Context, tgs []target, drop bool, life time.Duration) ([]int64, error) {
	b := lb.client.B()
	per := 2
	if drop {
		per = 3
	}
	cmds := make(rueidis.Commands, 0, 2+per*len(tgs))
	cmds = append(cmds, b.Multi().Build())
	for _, tg := range tgs {
		turn := lb.hotTurnKey(tg)
		cmds = append(cmds, b.Incr().Key(turn).Build(), b.Pexpire().Key(turn).Milliseconds(life.Milliseconds()).Build())
		if drop {
			cmds = append(cmds, b.Unlink().Key(lb.hotKey(tg)).Build())
			lb.hot.snaps.Delete(lb.hotKey(tg))
		}
	}
	replies, err := execResult(lb.client.DoMulti(ctx, append(cmds, b.Exec().Build())...))
	if err != nil {
		return nil, err
	}
	if len(replies) != per*len(tgs) {
		return nil, fmt.Errorf("turns: %d replies for %d mirrors", len(replies), len(tgs))
	}
	turns := make([]int64, len(tgs))
	for i := range tgs {
		if turns[i], err = replies[per*i].AsInt64(); err != nil {
			return nil, err
		}
	}
	return turns, nil
}

// hotRead reads every shard's first k of each of tgs, all in one round
// trip, and keeps each period's first k across its shards (spanEntries),
// with their stored values in Score.
func (lb *shardedBackend) hotRead(ctx context.Context, tgs []target) ([][]Entry, error) {
	k, n := lb.hot.k, len(lb.bestFirst)
	cmds := make(rueidis.Commands, 0, n*len(tgs))
	for _, tg := range tgs {
		for _, i := range lb.bestFirst {
			cmds = append(cmds, lb.rangeCmd(lb.shardKey(i, tg), 0, int64(k)-1))
		}
	}
	res := lb.fromPrimaries(ctx, cmds)
	out := make([][]Entry, len(tgs))
	for t, tg := range tgs {
		lists := make([][]Entry, n)
		for j := range lists {
			var err error
			if lists[j], err = lb.zStored(&res[t*n+j]); err != nil {
				return nil, err
			}
		}
		all, err := lb.spanEntries(ctx, tg, lists, lb.bestFirst)
		if err != nil {
			return nil, err
		}
		out[t] = all[:min(k, len(all))]
	}
	return out, nil
}

// dropHot deletes tgs' mirrors after a write: on one node one UNLINK (the
// mirrors share the board's slot); on a Cluster with a turn on each (see
// hotTurns). One round trip.
func (lb *shardedBackend) dropHot(ctx context.Context, tgs []target) error {
	return lb.dropHotFor(ctx, tgs, hotTurnTTL)
}

// dropHotFor is dropHot, the turn counters then living for life.
func (lb *shardedBackend) dropHotFor(ctx context.Context, tgs []target, life time.Duration) error {
	if lb.hot == nil || len(tgs) == 0 {
		return nil
	}
	if !lb.cluster {
		return lb.client.Do(ctx, lb.hotDrop(tgs)[0]).Error()
	}
	_, err := lb.hotTurns(ctx, tgs, true, life)
	return err
}

// afterWrite is a write's error; it drops the mirrors of tgs the write may
// have changed (dropHot), a failure of which is not the write's: hotLost
// tries once more, even when ctx has ended. A write that failed may have
// applied all the same (its ctx ended while its last step was in flight),
// so its mirrors go too (hotLost).
func (lb *shardedBackend) afterWrite(ctx context.Context, tgs []target, err error) error {
	if err != nil {
		lb.hotLost(ctx, tgs)
		return err
	}
	if lb.dropHot(ctx, tgs) != nil {
		lb.hotLost(ctx, tgs)
	}
	return nil
}

// hotCount is a hot page's total: every shard's count, one round trip.
func (lb *shardedBackend) hotCount(ctx context.Context, tg target) (int64, error) {
	_, total, err := lb.shardCards(ctx, tg)
	return total, err
}
