package leaderboard

import (
	"context"
	"slices"
	"strconv"
	"time"

	"github.com/redis/rueidis"

	"github.com/skiprank/leaderboard/internal/keys"
)

// markers is the board's one marker: every key of an unsharded board shares
// its slot, so a node that lost any of them lost it too. It has no shadow.
func (lb *plainBackend) markers(board, _ bool) [][]string {
	if !board {
		return nil
	}
	return [][]string{{lb.keys.Marker()}}
}

// markers are the board's own marker (the one key older versions wrote,
// and the one of the slot holding the top mirrors), each shard's and each
// partition group's: a Cluster spreads those tags over every node on
// purpose. On one node they are one group, which one EXISTS or MSET names;
// on a Cluster each is a group of its own, as no command may span slots.
func (lb *shardedBackend) markers(board, shadow bool) [][]string {
	var ks []string
	if board {
		ks = lb.shardMarkers(append(ks, lb.keys.Marker()))
		for g := range keys.PartitionGroups {
			ks = append(ks, lb.parts.GroupMarker(g))
		}
	}
	if shadow && lb.shadow != nil {
		ks = lb.shadow.shardMarkers(ks)
	}
	if len(ks) == 0 {
		return nil
	}
	if !lb.cluster {
		return [][]string{ks}
	}
	out := make([][]string, len(ks))
	for i := range ks {
		out[i] = ks[i : i+1 : i+1]
	}
	return out
}

// shardMarkers appends to ks this layout's shards' markers.
func (lb *shardedBackend) shardMarkers(ks []string) []string {
	for _, s := range lb.shards {
		ks = append(ks, s.Marker())
	}
	return ks
}

// allMarkers are every marker the board's layouts keep (the shadow's too),
// as one list: what Delete deletes.
func (lb *shardedBackend) allMarkers() []string {
	return slices.Concat(lb.markers(true, true)...)
}

// mark writes the markers of groups (see backend.markers) in one round
// trip, one MSET a group. Each holds now in Unix ms, for people reading
// the keyspace: Present asks only whether they exist.
func (lb *Leaderboard) mark(ctx context.Context, groups [][]string, now time.Time) error {
	v := strconv.FormatInt(now.UnixMilli(), 10)
	cmds := make(rueidis.Commands, len(groups))
	for i, ks := range groups {
		kv := lb.client.B().Mset().KeyValue()
		for _, k := range ks {
			kv = kv.KeyValue(k, v)
		}
		cmds[i] = kv.Build()
	}
	return firstErr(lb.client.DoMulti(ctx, cmds...))
}
