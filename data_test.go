package leaderboard_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/keys"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// dataBoards are the kinds of board the data tests run on.
var dataBoards = map[string][]lb.Option{
	"plain":           nil,
	"plain-script":    {lb.WithRanking(lb.Competition)}, // Submit and reads through the scripts
	"sharded":         {lb.WithShards(0, 100)},
	"sharded-shadow":  {lb.WithShards(0, 100), lb.WithShadowShards(50)},
	"sharded-compete": {lb.WithShards(0, 100), lb.WithRanking(lb.Competition)},
}

// TestDataWrites: WithData sets data in the write whether or not the score
// changes; a write that writes nothing (refused, a duplicate id, every
// window closed) sets none; SetData works without a score and "" clears;
// Remove and Delete take the data, Reset leaves it; data is the board's,
// the same in every window.
func TestDataWrites(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range dataBoards {
			t.Run(kind, func(t *testing.T) {
				runDataWrites(t, b, opts)
			})
		}
	})
}

func runDataWrites(t *testing.T, b *testredis.Backend, opts []lb.Option) {
	ctx := context.Background()
	name := shardName(t, b)
	board, err := lb.New(b.Client, name, append(opts, lb.WithPolicy(lb.Accumulate), lb.WithWindows(lb.AllTime(), lb.Daily()),
		lb.WithRetention(0), lb.WithClock(fixed(future)))...)
	require.NoError(t, err)
	dataOf := func(m string, q ...lb.Query) string {
		t.Helper()
		sts, err := board.Ranks(ctx, []string{m}, append(q, lb.IncludeData())...)
		require.NoError(t, err)
		return sts[0].Data
	}
	_, err = board.Submit(ctx, "ana", 10, lb.WithData("Ana"))
	require.NoError(t, err)
	require.Equal(t, "Ana", dataOf("ana"))
	require.Equal(t, "Ana", dataOf("ana", lb.In(lb.Daily())), "data is the board's, not a window's")
	res, err := board.Submit(ctx, "ana", 0, lb.WithData("Ana 2"))
	require.NoError(t, err)
	require.False(t, res.Changed, "no new total")
	require.Equal(t, "Ana 2", dataOf("ana"), "set whether or not the score changes")
	_, err = board.Submit(ctx, "ana", 5)
	require.NoError(t, err)
	require.Equal(t, "Ana 2", dataOf("ana"), "no WithData: left as it is")
	_, err = board.Submit(ctx, "ana", 1, lb.WithData(""))
	require.NoError(t, err)
	require.Equal(t, "Ana 2", dataOf("ana"), `WithData(""): left as it is`)

	// Writes that write nothing set no data.
	_, err = board.Submit(ctx, "big", 1.5e308)
	require.NoError(t, err)
	_, err = board.Submit(ctx, "big", 1.5e308, lb.WithData("overflow"))
	require.ErrorIs(t, err, lb.ErrInvalidScore)
	require.Equal(t, "", dataOf("big"), "a refused submission sets no data")
	_, err = board.Submit(ctx, "ana", 1, lb.WithID("match-1"), lb.WithData("first"))
	require.NoError(t, err)
	res, err = board.Submit(ctx, "ana", 1, lb.WithID("match-1"), lb.WithData("retry"))
	require.NoError(t, err)
	require.True(t, res.Duplicate)
	require.Equal(t, "first", dataOf("ana"), "a duplicate id sets no data")
	res, err = board.Submit(ctx, "late", 1, lb.WithTime(future.Add(-72*time.Hour)), lb.WithData("late"))
	require.NoError(t, err)
	require.True(t, res.Windows[1].Closed)
	require.Equal(t, "late", dataOf("late"), "all time still takes it")

	// SetData: no score needed; "" clears.
	require.NoError(t, board.SetData(ctx, "bo", "Bo"))
	st, err := board.Ranks(ctx, []string{"bo"}, lb.IncludeData())
	require.NoError(t, err)
	require.Equal(t, lb.Standing{Entry: lb.Entry{Member: "bo", Data: "Bo"}, Total: 3}, st[0], "data without a score")
	require.NoError(t, board.SetData(ctx, "bo", strings.Repeat("x", lb.MaxDataLen)))
	require.Equal(t, strings.Repeat("x", lb.MaxDataLen), dataOf("bo"))
	require.NoError(t, board.SetData(ctx, "bo", ""))
	require.Equal(t, "", dataOf("bo"))

	// Reset leaves data; Remove and Delete take it.
	require.NoError(t, board.Reset(ctx, lb.In(lb.Daily())))
	require.Equal(t, "first", dataOf("ana"))
	require.NoError(t, board.SetData(ctx, "bo", "Bo"))
	require.NoError(t, board.Remove(ctx, "ana"))
	require.Equal(t, "", dataOf("ana"), "Remove takes the data")
	require.Equal(t, "Bo", dataOf("bo"))
	require.NoError(t, board.Delete(ctx))
	require.Equal(t, "", dataOf("bo"), "Delete takes the data")
	require.Empty(t, boardKeys(t, b, name))
}

// TestDataRoundTrips: IncludeData costs no round trip on an unsharded
// board, and on a sharded one Rank, Ranks and Among none, Top, Page and
// Around at most one (Around on a Cluster none: two either way; a Page on
// one node none past the best shard, where one script reads the page
// across the shards), two round trips in all but for a Page past the best
// shard on a Cluster.
func TestDataRoundTrips(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range dataBoards {
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				board, err := lb.New(b.Client, shardName(t, b), append(opts, lb.WithClock(fixed(future)))...)
				require.NoError(t, err)
				for i := range 40 {
					_, err := board.Submit(ctx, fmt.Sprint("p", i), float64(i*7%150-20), lb.WithData(fmt.Sprint("Player ", i)))
					require.NoError(t, err)
				}
				more, aroundMore := 0, 0
				if strings.HasPrefix(kind, "sharded") {
					// One more for the data; Around on a Cluster reads its
					// slice in one then, where it takes two without data.
					more, aroundMore = 1, 1
					if b.Name == "cluster" {
						aroundMore = 0
					}
				}
				// The most a read with IncludeData takes: a Page past the
				// best shard on a Cluster needs the counts first.
				most := map[string]int64{"Top": 2, "Around": 2, "Page": 2, "Range": 2, "Cutoff": 2, "Rank": 1, "Ranks": 2, "Among": 1}
				if !strings.HasPrefix(kind, "sharded") {
					for k := range most {
						most[k] = 1
					}
				} else if b.Name == "cluster" {
					most["Page"], most["Range"], most["Cutoff"] = 3, 3, 3
					if kind == "sharded-compete" {
						// The member's partition and data beside the counts,
						// then its place in its shard.
						most["Rank"] = 2
					}
				}
				d := lb.IncludeData()
				for _, op := range []struct {
					name string
					more int
					fn   func(...lb.Query) error
				}{
					{"Top", more, func(q ...lb.Query) error { _, err := board.Top(ctx, 5, q...); return err }},
					{"Page", more, func(q ...lb.Query) error { _, err := board.Page(ctx, 3, 5, q...); return err }},
					{"Range", more, func(q ...lb.Query) error { _, err := board.Range(ctx, 4, 20, q...); return err }},
					{"Cutoff", more, func(q ...lb.Query) error { _, err := board.Cutoff(ctx, 25, q...); return err }},
					{"Around", aroundMore, func(q ...lb.Query) error { _, err := board.Around(ctx, "p7", 3, q...); return err }},
					{"Rank", 0, func(q ...lb.Query) error { _, err := board.Rank(ctx, "p7", q...); return err }},
					{"Ranks", 0, func(q ...lb.Query) error { _, err := board.Ranks(ctx, []string{"p7", "p8", "x"}, q...); return err }},
					{"Among", 0, func(q ...lb.Query) error { _, err := board.Among(ctx, []string{"p7", "p8", "x"}, q...); return err }},
				} {
					for _, q := range [][]lb.Query{nil, {d}} {
						require.NoError(t, op.fn(q...), "%s warm-up", op.name)
					}
					before := b.Client.Calls()
					require.NoError(t, op.fn())
					plain := b.Client.Calls() - before
					before = b.Client.Calls()
					require.NoError(t, op.fn(d))
					with := b.Client.Calls() - before
					require.LessOrEqual(t, with, plain+int64(op.more), "%s with IncludeData: round trips", op.name)
					require.LessOrEqual(t, with, most[op.name], "%s with IncludeData: round trips", op.name)
				}
			})
		}
	})
}

// TestWithIDRetryAfterFailedData: a WithID submission whose data Redis
// refuses (its data key holds another type: WRONGTYPE) writes nothing, its
// id included, so the retry once the key is fixed is applied, not taken
// for a duplicate; on plain and sharded boards, every backend.
func TestWithIDRetryAfterFailedData(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for name, sharded := range map[string]bool{"plain": false, "sharded": true} {
			t.Run(name, func(t *testing.T) {
				ctx := context.Background()
				var opts []lb.Option
				data := func(bname string) string { return keys.NewBoard("lb", bname).Data() }
				if sharded {
					opts = append(opts, lb.WithShards(0, 100))
					data = func(bname string) string {
						return keys.NewBoard("lb", bname).Partitions().Of(keys.PartitionOf("alice")).Data()
					}
				}
				board, bname := newBoard(t, b, append(opts, lb.WithPolicy(lb.Accumulate))...)
				c := b.Client.Client
				require.NoError(t, c.Do(ctx, c.B().Set().Key(data(bname)).Value("oops").Build()).Error())
				_, err := board.Submit(ctx, "alice", 10, lb.WithID("match-1"), lb.WithData("hello"))
				require.ErrorContains(t, err, "WRONGTYPE")
				_, err = board.Rank(ctx, "alice")
				require.ErrorIs(t, err, lb.ErrNotRanked, "the failed submission wrote its score")
				require.NoError(t, c.Do(ctx, c.B().Del().Key(data(bname)).Build()).Error())
				res, err := board.Submit(ctx, "alice", 10, lb.WithID("match-1"), lb.WithData("hello"))
				require.NoError(t, err)
				require.False(t, res.Duplicate, "the failed submission remembered its id")
				es, err := board.Among(ctx, []string{"alice"}, lb.IncludeData())
				require.NoError(t, err)
				require.Equal(t, []lb.Entry{{Member: "alice", Score: 10, Rank: 1, Data: "hello"}}, es)
			})
		}
	})
}
