package leaderboard_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	lb "github.com/skiprank/leaderboard"
	"github.com/skiprank/leaderboard/internal/testredis"
)

// TestBatcherDataRefusals: a folded write Redis refuses, written again
// one submission at a time, sets the data of the submissions that land
// and not of the one refused; the member beside it in its partition group
// keeps its own data; data too long is refused at once, written nowhere.
func TestBatcherDataRefusals(t *testing.T) {
	testredis.Each(t, func(t *testing.T, b *testredis.Backend) {
		for kind, opts := range map[string][]lb.Option{"plain": nil, "sharded": {lb.WithShards(0, 10)}} {
			t.Run(kind, func(t *testing.T) {
				ctx := context.Background()
				name := shardName(t, b)
				board, err := lb.New(b.Client, name, append(opts, lb.WithPolicy(lb.Accumulate))...)
				require.NoError(t, err)
				big := math.MaxFloat64
				_, err = board.Submit(ctx, "a", big, lb.WithData("zero"))
				require.NoError(t, err)
				before := b.Snapshot(t, name)
				bt, err := board.NewBatcher(lb.WithBatchWindow(time.Minute))
				require.NoError(t, err)
				_, err = bt.Submit(ctx, "a", 1, lb.WithData(strings.Repeat("x", lb.MaxDataLen+1)))
				require.ErrorIs(t, err, lb.ErrInvalidArgument)
				require.NoError(t, bt.Flush(ctx))
				require.Equal(t, before, b.Snapshot(t, name), "too long data wrote")
				mate := groupMate("a")
				calls := []*batchCall{{member: "a", score: 1, data: "one"}, {member: mate, score: 2, data: "m"},
					{member: "a", score: big, data: "big"}, {member: mate, score: 3}}
				got := runBatcherOn(t, bt, calls)
				require.NoError(t, got[0].err)
				require.NoError(t, got[1].err)
				require.ErrorIs(t, got[2].err, lb.ErrInvalidScore)
				require.NoError(t, got[3].err)
				es, err := board.Among(ctx, []string{"a", mate}, lb.IncludeData())
				require.NoError(t, err)
				require.Equal(t, []lb.Entry{{Member: "a", Score: big, Rank: 1, Data: "one"}, {Member: mate, Score: 5, Rank: 2, Data: "m"}}, es)
			})
		}
	})
}
