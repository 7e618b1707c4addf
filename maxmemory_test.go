package leaderboard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestWritesAtMaxmemory: on a Redis over its maxmemory under noeviction,
// every write that may grow memory fails with Redis's OOM error and writes
// nothing. A script's OOM check comes before its first write only if that
// write is a command that can grow memory: a WithID Submit's script swept
// forgotten ids (ZREMRANGEBYSCORE) first, and a sharded board's write of a
// member already on it took it out of its old shard (ZREM) first, so Redis
// let every later write through, past the limit.
func TestWritesAtMaxmemory(t *testing.T) {
	s := faultStartServer(t)
	c := s.client()
	b := &testredis.Backend{Name: "redis", Client: &testredis.CountingClient{Client: c}}
	ctx := context.Background()
	kinds := map[string][]lb.Option{
		"plain":       nil,
		"competition": {lb.WithRanking(lb.Competition)},
		"accumulate":  {lb.WithPolicy(lb.Accumulate)},
		"hot":         {lb.WithHotTop(3)},
		"sharded":     {lb.WithShards(10, 20)},
		"sharded hot": {lb.WithShards(10, 20), lb.WithHotTop(3)},
	}
	boards := map[string]*lb.Leaderboard{}
	for kind, opts := range kinds {
		board, err := lb.New(c, "mm-"+strings.ReplaceAll(kind, " ", "-"), append(opts, lb.WithWindows(lb.AllTime(), lb.Daily()))...)
		require.NoError(t, err)
		_, err = board.Submit(ctx, "old", 5, lb.WithID("seed"), lb.WithData("d"))
		require.NoError(t, err)
		_, err = board.Top(ctx, 3) // builds a hot top's mirror
		require.NoError(t, err)
		boards[kind] = board
	}
	require.NoError(t, s.admin("CONFIG", "SET", "maxmemory-policy", "noeviction"))
	used, err := c.Do(ctx, c.B().Info().Section("memory").Build()).ToString()
	require.NoError(t, err)
	require.NoError(t, s.admin("CONFIG", "SET", "maxmemory", strconv.FormatInt(usedMemory(t, used)-1, 10)))

	for kind, board := range boards {
		t.Run(kind, func(t *testing.T) {
			name := "mm-" + strings.ReplaceAll(kind, " ", "-")
			before := b.Snapshot(t, name)
			for i, write := range []struct {
				what string
				fn   func(id string) error
			}{
				{"Submit of a new member", func(string) error { _, err := board.Submit(ctx, "new", 15); return err }},
				{"Submit of a member across a bound", func(string) error { _, err := board.Submit(ctx, "old", 25); return err }},
				{"Submit WithID", func(id string) error { _, err := board.Submit(ctx, "old", 25, lb.WithID(id)); return err }},
				{"Submit WithID of a new member", func(id string) error { _, err := board.Submit(ctx, "new", 25, lb.WithID(id)); return err }},
				{"SubmitMany", func(string) error { return board.SubmitMany(ctx, map[string]float64{"old": 25, "new": 15}) }},
				{"Set", func(string) error { return board.Set(ctx, "old", 25) }},
				{"SetData", func(string) error { return board.SetData(ctx, "old", "e") }},
				{"Batcher", func(string) error {
					bt, err := board.NewBatcher(lb.WithBatchWindow(time.Millisecond))
					require.NoError(t, err)
					defer bt.Close(ctx)
					_, err = bt.Submit(ctx, "old", 25)
					return err
				}},
			} {
				err := write.fn(fmt.Sprint("id-", i))
				require.ErrorContains(t, err, "OOM", "%s: %s", kind, write.what)
				after := b.Snapshot(t, name)
				for k := range before {
					if _, ok := after[k]; !ok && strings.Contains(k, "::topk") {
						// A hot top's mirror a sharded write deletes beside
						// it, as after any write that may change the top
						// (deletes free memory): the next read builds it.
						delete(before, k)
					}
				}
				require.Equal(t, before, after, "%s: %s wrote past maxmemory", kind, write.what)
			}
		})
	}
}

// usedMemory is used_memory from an INFO memory reply.
func usedMemory(t *testing.T, info string) int64 {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "used_memory:"); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no used_memory in INFO memory")
	return 0
}
